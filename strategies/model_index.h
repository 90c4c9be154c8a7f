// What strategies look up in a replica: its trainable variables (per layer: the forward ops
// that read the weights, the ops that produce the gradients, the optimizer updates) and the
// order gradients become available in backward.
#pragma once

#include <string>
#include <vector>

#include "workloads/model_graph.h"

namespace orrery {

struct Variable {
  std::string layer;
  double params = 0;      // elements
  double grad_bytes = 0;  // what a worker pushes / all-reduces per step
  double pull_bytes = 0;  // what a worker pulls per step (fp32 weights, or looked-up rows)
  bool sparse = false;
  std::vector<int> forward;  // forward ops that own the weights (need them before they run)
  std::vector<int> grads;    // ops producing the gradient, in model order
  std::vector<int> updates;  // optimizer ops of the layer
};

// Variables in order of their first gradient op (the order backward makes them available).
std::vector<Variable> model_variables(const ModelGraph& m);

// Weight-gradient ops (grads > 0) fused, in backward order, into buckets of at least
// `bucket_bytes` (the last one may be smaller). Sparse gradients are left out when
// `skip_sparse`.
std::vector<std::vector<int>> gradient_buckets(const ModelGraph& m, double bucket_bytes,
                                               bool skip_sparse);

}  // namespace orrery
