// ModelGraph: one replica's training step as typed ops with shapes (what the model zoo and the
// importers produce). Strategies (data parallel, PS, PEARL...) turn it into an ExecutionGraph
// over the platform's devices; cost models price its ops from their type, shapes and dtype.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/dtype.h"

namespace orrery {

enum class Phase : uint8_t { kForward = 0, kBackward = 1, kOptimizer = 2 };
const char* phase_name(Phase p);  // "forward", "backward", "optimizer"
bool parse_phase(const std::string& s, Phase* out);

using Shape = std::vector<int64_t>;
int64_t numel(const Shape& s);

struct ModelOp {
  std::string name;  // unique within the graph
  std::string type;  // op type, one of workloads/op_counts.h's known_op_types()
  Phase phase = Phase::kForward;
  std::string layer;  // the layer it belongs to: gradient buckets and per-layer listings
  DType dtype = DType::kFP32;
  std::vector<Shape> inputs;  // input tensor shapes, in the order op_counts.h documents per type
  Shape output;
  std::map<std::string, int64_t> attrs;  // stride_h, pad_w, groups, kernel_h, rows...

  // Work, filled by fill_op_counts() from type/shapes/attrs unless an importer measured them.
  double flops = 0.0;
  double bytes = 0.0;  // memory traffic (reads + writes)

  // Training-state sizes, in elements: the parameters this (forward) op owns, and the weight
  // gradient this (backward) op produces. Gradient bytes use grad_dtype.
  double params = 0.0;
  double grads = 0.0;
  DType grad_dtype = DType::kFP32;
  bool sparse_grad = false;  // embedding gradients: only looked-up rows are non-zero

  std::vector<int> deps;  // indices of ops this one needs (data or control)
};

// The integer attribute `key` of `op` (stride_h, groups...), or `fallback` when it has none.
int64_t op_attr(const ModelOp& op, const std::string& key, int64_t fallback);

struct ModelGraph {
  std::string name;
  int64_t batch = 1;                         // samples per replica per step
  std::map<std::string, std::string> hyper;  // the generator's hyper-parameters, for listings
  std::vector<ModelOp> ops;

  double total_params() const;      // sum of params
  double total_grad_bytes() const;  // sum of grads x grad_dtype size
  double total_flops(Phase p) const;
};

}  // namespace orrery
