#include "models/embedding_model.h"

#include <algorithm>
#include <cmath>

namespace orrery {
namespace {

// Bytes a warp moves for `bytes` of payload: whole 32-byte sectors.
double sectors(double bytes) { return std::ceil(bytes / 32.0) * 32.0; }

}  // namespace

double l2_hit_rate(double x, double e, int64_t l) {
  if (x >= e) return 1.0;
  if (x < static_cast<double>(l)) return 0.0;
  double p = 1.0;
  for (int64_t i = 0; i < l && p > 0; ++i) p *= (x - i) / (e - i);
  return p;
}

double cached_rows_per_table(const EmbeddingLookup& e, const DeviceSpec& dev, int rows_per_block) {
  double in_flight = std::ceil(static_cast<double>(rows_per_block) * dev.sms / e.batch);
  in_flight = std::max(1.0, in_flight);
  double rows = dev.l2_bytes / (in_flight * static_cast<double>(e.dim) * e.elem_bytes);
  return std::min(std::floor(rows), static_cast<double>(e.rows));
}

EmbeddingTime embedding_lookup_time(const EmbeddingLookup& e, const DeviceSpec& dev,
                                    int rows_per_block, bool use_l2, double efficiency) {
  const double s = e.elem_bytes;
  const double table_offsets = 32, offsets = 64;
  const double indices = sectors(4.0 * e.bag);  // the kernel's int32 indices
  const double outputs = sectors(s * e.dim);
  const double weights = e.backward ? sectors(2.0 * s * e.bag * e.dim) : e.bag * sectors(s * e.dim);

  EmbeddingTime t;
  if (use_l2 && e.rows > 0)
    t.hit_rate = l2_hit_rate(cached_rows_per_table(e, dev, rows_per_block),
                             static_cast<double>(e.rows), e.bag);
  double warps = static_cast<double>(e.batch) * e.tables;
  t.l2_bytes = warps * (table_offsets + offsets + t.hit_rate * weights);
  t.dram_bytes = warps * (indices + outputs + (1 - t.hit_rate) * weights);
  t.seconds =
      t.dram_bytes / (dev.mem_bw * efficiency) + t.l2_bytes / (dev.l2_bandwidth() * efficiency);
  return t;
}

bool embedding_lookup_from_op(const ModelOp& op, EmbeddingLookup* out) {
  bool fwd = op.type == "embedding_fwd";
  if (!fwd && op.type != "embedding_bwd") return false;
  if (op.inputs.size() < 2) return false;
  const Shape& idx = op.inputs[1];
  if (idx.size() != 2 && idx.size() != 3) return false;
  EmbeddingLookup e;
  e.backward = !fwd;
  e.tables = idx.size() == 3 ? idx[0] : 1;
  e.batch = idx[idx.size() - 2];
  e.bag = idx.back();
  e.elem_bytes = dtype_bytes(op.dtype);
  if (fwd) {
    if (op.inputs[0].size() != 2) return false;
    e.rows = op.inputs[0][0];
    e.dim = op.inputs[0][1];
  } else {
    if (op.inputs[0].empty()) return false;
    e.dim = op.inputs[0].back();
    e.rows = op.output.size() == 2 ? op.output[0] : 0;
  }
  if (e.batch < 1 || e.bag < 0 || e.dim < 1 || e.tables < 1) return false;
  *out = e;
  return true;
}

}  // namespace orrery
