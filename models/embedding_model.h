// The heuristic embedding-lookup kernel model of the DLRM performance model, section III-B1: a
// batched lookup of T tables (E rows of D elements each), B outputs per table pooled over L
// rows, is bound by memory traffic. One warp computes one output vector; its traffic is
//   table_offsets 32 B, offsets 64 B, indices ceil(4L/32)x32 B,
//   weights L x ceil(sD/32)x32 B (backward: ceil(2 s L D/32)x32 B), outputs ceil(sD/32)x32 B
// (s = element size; the paper writes s = 4 and drops the forward's factor L, which its code
// has: owensgroup/ml_perf_model, embedding_forward_simple_predictor). With the L2 hit rate p,
// offsets and a fraction p of the weights come from L2 and the rest from DRAM:
//   t = B T (tr_DRAM / DRAM_BW + tr_L2 / L2_BW).
// The hit rate: num_tables = ceil(rows_per_block x #SM / B) tables are in flight at once (the
// paper writes the plain ratio; its code rounds up, which keeps it at least 1); each has
// X = min(L2 / (num_tables x D x s), E) rows cached, and p = C(X, L) / C(E, L).
#pragma once

#include <cstdint>

#include "platforms/device_spec.h"
#include "workloads/model_graph.h"

namespace orrery {

struct EmbeddingLookup {
  int64_t batch = 1;   // B: pooled outputs per table
  int64_t tables = 1;  // T
  int64_t rows = 1;    // E: rows per table (0: unknown, no L2 reuse assumed)
  int64_t dim = 1;     // D
  int64_t bag = 1;     // L: rows pooled into one output
  int elem_bytes = 4;  // s
  bool backward = false;
};

struct EmbeddingTime {
  double seconds = 0.0;
  double hit_rate = 0.0;    // p
  double dram_bytes = 0.0;  // B T tr_DRAM
  double l2_bytes = 0.0;    // B T tr_L2
};

// C(x, l) / C(e, l) = prod_{i<l} (x - i) / (e - i): the chance that all l distinct rows a warp
// reads are among the x cached ones. 1 when x >= e, 0 when x < l.
double l2_hit_rate(double cached_rows, double rows, int64_t bag);

// Rows of one table resident in L2 (X above).
double cached_rows_per_table(const EmbeddingLookup& e, const DeviceSpec& dev, int rows_per_block);

// Time of the kernel; bandwidths are scaled by `efficiency` like every analytic model here.
// With use_l2 false, p = 0 (the paper's plain model: all weights from DRAM).
EmbeddingTime embedding_lookup_time(const EmbeddingLookup& e, const DeviceSpec& dev,
                                    int rows_per_block, bool use_l2, double efficiency);

// Reads an embedding_fwd / embedding_bwd op (conventions in workloads/op_counts.h). False when
// the op is not one or its shapes do not say B, L and D.
bool embedding_lookup_from_op(const ModelOp& op, EmbeddingLookup* out);

}  // namespace orrery
