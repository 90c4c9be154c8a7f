// The scenario's workload section -> its execution graph, on a given set of the platform's GPUs:
// all of them for a one-workload scenario, a job's own for each entry of `jobs` (jobs.h).
#pragma once

#include <string>
#include <vector>

#include "common/yaml_reader.h"
#include "scenario/scenario.h"
#include "strategies/cluster_layout.h"
#include "workloads/synthetic_dp.h"

namespace orrery {

// The platform's GPUs as strategies see them: the generated topology's servers, or for a
// SimGrid XML platform its listed GPU hosts (cluster_layout_from_hosts).
ClusterLayout platform_layout(const Scenario& sc, const std::vector<GpuPlacement>& platform_gpus);

// Reads `root`'s workload mapping (and the strategy, precision and cost-model keys beside it)
// into sc->graph (and sc->workload_summary, ops_priced, llm, analytical_seconds), on the GPUs
// `gpus` and `layout` describe (the same GPUs in the same order). sc->platform and sc->device
// must be set; on a mixed cluster also sc->server_kinds and sc->gpu_kind, parallel to `gpus`:
// each GPU's ops are then priced on its own model (scenario/gpu_kinds.cc). Throws InputError
// naming the file and key.
void read_workload(const YamlMap& root, const std::string& base_dir,
                   const std::vector<GpuPlacement>& gpus, const ClusterLayout& layout,
                   Scenario* sc);

// The same with every op priced on sc->device, whatever sc->gpu_kind says.
void read_workload_on_device(const YamlMap& root, const std::string& base_dir,
                             const std::vector<GpuPlacement>& gpus, const ClusterLayout& layout,
                             Scenario* sc);

}  // namespace orrery
