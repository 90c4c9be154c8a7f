// The GPUs the language-model tests place plans on: the first `gpus` GPUs of `servers` DGX A100
// servers, each with its server as the scenario lays the platform out.
#pragma once

#include "platforms/simgrid_platform.h"
#include "strategies/cluster_layout.h"
#include "tests/topology_lookup.h"

namespace orrery::testing {

struct LlmCluster {
  PlatformSource source;
  std::vector<ClusterGpu> gpus;
};

inline LlmCluster dgx_a100(int gpus, int servers = 1) {
  LlmCluster c;
  c.source.topology = preset("dgx-a100", "servers: " + std::to_string(servers) + "\n");
  const ClusterLayout layout = cluster_layout(c.source.topology);
  c.gpus.assign(layout.gpus.begin(), layout.gpus.begin() + gpus);
  return c;
}

}  // namespace orrery::testing
