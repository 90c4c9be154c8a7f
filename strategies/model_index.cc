#include "strategies/model_index.h"

#include <map>

#include "workloads/op_counts.h"

namespace orrery {
namespace {

// Bytes of the table rows an embedding op touches: one row of `dim` per looked-up index
// (inputs: [table or dy, indices]; op_counts.h conventions).
double looked_up_row_bytes(const ModelOp& op) {
  if (op.inputs.size() < 2 || op.inputs[0].empty()) return 0;
  return static_cast<double>(numel(op.inputs[1])) * op.inputs[0].back() * dtype_bytes(op.dtype);
}

}  // namespace

std::vector<Variable> model_variables(const ModelGraph& m) {
  std::vector<Variable> vars;
  std::map<std::string, size_t> index;
  auto var = [&](const std::string& layer) -> Variable& {
    auto [it, fresh] = index.emplace(layer, vars.size());
    if (fresh) {
      vars.emplace_back();
      vars.back().layer = layer;
    }
    return vars[it->second];
  };
  // Gradients first, so variables come out in the order backward produces them.
  for (size_t j = 0; j < m.ops.size(); ++j) {
    const ModelOp& op = m.ops[j];
    if (op.grads <= 0) continue;
    Variable& v = var(op.layer);
    v.grads.push_back(static_cast<int>(j));
    v.sparse = v.sparse || op.sparse_grad;
    // A sparse gradient only covers the rows looked up, not the table.
    v.grad_bytes +=
        op.sparse_grad ? looked_up_row_bytes(op) : op.grads * dtype_bytes(op.grad_dtype);
  }
  for (size_t j = 0; j < m.ops.size(); ++j) {
    const ModelOp& op = m.ops[j];
    auto it = index.find(op.layer);
    if (it == index.end()) continue;
    Variable& v = vars[it->second];
    if (op.phase == Phase::kForward && op.params > 0) {
      v.forward.push_back(static_cast<int>(j));
      v.params += op.params;
      // Dense weights travel as fp32 masters; a sparse table sends the rows looked up.
      v.pull_bytes += v.sparse ? looked_up_row_bytes(op) : op.params * 4.0;
    } else if (op.phase == Phase::kOptimizer) {
      v.updates.push_back(static_cast<int>(j));
    }
  }
  return vars;
}

std::vector<std::vector<int>> gradient_buckets(const ModelGraph& m, double bucket_bytes,
                                               bool skip_sparse) {
  std::vector<std::vector<int>> buckets(1);
  double filled = 0;
  for (size_t j = 0; j < m.ops.size(); ++j) {
    const ModelOp& op = m.ops[j];
    if (op.grads <= 0 || (skip_sparse && op.sparse_grad)) continue;
    buckets.back().push_back(static_cast<int>(j));
    filled += op.grads * dtype_bytes(op.grad_dtype);
    if (filled >= bucket_bytes) {
      buckets.emplace_back();
      filled = 0;
    }
  }
  if (buckets.back().empty()) buckets.pop_back();
  return buckets;
}

}  // namespace orrery
