// Input I/O of a data-parallel step: each GPU's batch is copied host -> GPU over PCIe (T_d of
// PAI), optionally after a CPU input-pipeline stage that prepares batches
// `prefetch` ahead and stalls the GPU when it is the slower (Cachew, docs/references.md).
#pragma once

#include <map>
#include <vector>

#include "strategies/graph_builder.h"

namespace orrery {

class InputStage {
 public:
  InputStage(GraphBuilder& b, const ClusterLayout& layout, const StrategyOptions& opt,
             double batch_bytes);

  // The op after which GPU `gpu` (a ClusterLayout index placed as `device`) holds its batch of
  // iteration `it`; -1 when the strategy moves no input.
  int batch(int gpu, int device, int it, const std::string& prefix);

 private:
  GraphBuilder& b_;
  const ClusterLayout& layout_;
  const StrategyOptions& opt_;
  double bytes_;
  std::map<int, std::vector<int>> copies_;  // per GPU, the copy op of each iteration
};

}  // namespace orrery
