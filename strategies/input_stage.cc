#include "strategies/input_stage.h"

#include <algorithm>

namespace orrery {

InputStage::InputStage(GraphBuilder& b, const ClusterLayout& layout, const StrategyOptions& opt,
                       double batch_bytes)
    : b_(b), layout_(layout), opt_(opt), bytes_(batch_bytes) {}

int InputStage::batch(int gpu, int device, int it, const std::string& prefix) {
  if (bytes_ <= 0 && opt_.input_pipeline_time <= 0) return -1;
  const ClusterGpu& g = layout_.gpus[gpu];
  const ClusterServer& server = layout_.servers[g.server];
  const int cpu = b_.cpu(g.launch_host, g.server);
  // Each GPU's loader runs on its own CPU queue, so loaders of one server work in parallel.
  const int local = static_cast<int>(std::find(server.gpus.begin(), server.gpus.end(), gpu) -
                                     server.gpus.begin());
  auto& copies = copies_[gpu];
  std::vector<int> deps;
  if (opt_.input_pipeline_time > 0) {
    std::vector<int> stage_deps;
    // At most `prefetch` prepared batches wait: batch `it` starts once batch it-prefetch is
    // on the GPU.
    if (it >= opt_.prefetch) stage_deps.push_back(copies[it - opt_.prefetch]);
    deps.push_back(b_.compute(prefix + "input_pipeline", cpu, {StreamClass::kCompute, 1 + local},
                              opt_.input_pipeline_time, 0, 0, "io", stage_deps));
  }
  int copy = b_.transfer(prefix + "input_h2d", device, {StreamClass::kCopyH2D, 0}, cpu, device,
                         std::max(0.0, bytes_), "io", deps);
  copies.push_back(copy);
  return copy;
}

}  // namespace orrery
