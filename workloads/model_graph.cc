#include "workloads/model_graph.h"

#include "common/errors.h"

namespace orrery {

const char* phase_name(Phase p) {
  switch (p) {
    case Phase::kForward:
      return "forward";
    case Phase::kBackward:
      return "backward";
    case Phase::kOptimizer:
      return "optimizer";
  }
  return "?";
}

bool parse_phase(const std::string& s, Phase* out) {
  for (Phase p : {Phase::kForward, Phase::kBackward, Phase::kOptimizer})
    if (s == phase_name(p)) {
      *out = p;
      return true;
    }
  return false;
}

int64_t op_attr(const ModelOp& op, const std::string& key, int64_t fallback) {
  auto it = op.attrs.find(key);
  return it == op.attrs.end() ? fallback : it->second;
}

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s)
    if (__builtin_mul_overflow(n, d, &n)) {
      // Reached only from absurd sizes (a batch of 10^12 times a 224x224 image): signed
      // overflow would be undefined and would price the tensor as anything.
      std::string dims;
      for (int64_t x : s) dims += (dims.empty() ? "" : ", ") + std::to_string(x);
      throw InputError("a tensor of shape [" + dims +
                       "] has more elements than a 64-bit count holds; check the batch and "
                       "the model's sizes");
    }
  return n;
}

double ModelGraph::total_params() const {
  double n = 0;
  for (const auto& op : ops) n += op.params;
  return n;
}

double ModelGraph::total_grad_bytes() const {
  double n = 0;
  for (const auto& op : ops) n += op.grads * dtype_bytes(op.grad_dtype);
  return n;
}

double ModelGraph::total_flops(Phase p) const {
  double n = 0;
  for (const auto& op : ops)
    if (op.phase == p) n += op.flops;
  return n;
}

}  // namespace orrery
