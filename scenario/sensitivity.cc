#include "scenario/sensitivity.h"

#include <map>

#include "scenario/gpu_speed.h"

namespace orrery {

const std::vector<UncertainInput>& uncertain_inputs() {
  static const std::vector<UncertainInput> inputs = {
      {"kernels", 0.13,
       "Tensor Core GEMM models, one GPU left out: 13% median error (docs/validation.md)"},
      {"links", 0.17,
       "collectives against AIConfigurator's nccl-tests: 17% median error (docs/collectives.md)"},
      {"host", 0.25,
       "per-kernel launch costs of Lin et al. (HiPC 2022), one value per platform: taken as "
       "good to 25%"},
  };
  return inputs;
}

bool scaled_input(const Scenario& sc, const std::string& input, double factor, Scenario* out) {
  if (input == "kernels") {
    std::map<std::string, double> speeds;
    for (const auto& h : sc.platform.topology.hosts)
      if (h.role == "gpu") speeds[h.name] = factor;
    if (speeds.empty())  // a SimGrid XML platform: every device of the graph runs kernels
      for (const auto& d : sc.graph.devices) speeds[d.host.empty() ? d.name : d.host] = factor;
    *out = sc;
    apply_gpu_speeds(speeds, &out->graph);
    return true;
  }
  if (input == "links") {
    if (sc.platform.topology.links.empty()) return false;
    *out = sc;
    for (auto& l : out->platform.topology.links) l.bandwidth *= factor;
    return true;
  }
  if (input == "host") {
    bool any = false;
    for (const auto& op : sc.graph.ops) any = any || op.stream.cls == StreamClass::kHost;
    if (!any) return false;
    *out = sc;
    for (auto& op : out->graph.ops)
      if (op.stream.cls == StreamClass::kHost && op.duration > 0) op.duration /= factor;
    return true;
  }
  return false;
}

}  // namespace orrery
