// The scenario's workload section -> its execution graph, on a given set of the platform's GPUs:
// all of them for a one-workload scenario, a job's own for each entry of `jobs` (jobs.h). Plain
// input and output types, so the jobs reader and the mixed-cluster builds call it without a
// Scenario of their own.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/yaml_reader.h"
#include "engine/execution_graph.h"
#include "platforms/device_spec.h"
#include "platforms/platform_spec.h"
#include "platforms/simgrid_platform.h"
#include "scenario/llm_workload.h"
#include "strategies/cluster_layout.h"
#include "workloads/synthetic_dp.h"

namespace orrery {

// What the workload is built for: the platform it runs on and the GPU that prices its ops.
struct WorkloadTarget {
  const PlatformSource* platform = nullptr;  // the scenario's (a generated topology or XML)
  DeviceSpec device;                         // prices every op (read_workload_on_device)
  std::optional<ServerSpec> server;          // generated platforms: their server
  // Mixed clusters (platform.server_groups): the kinds of server, and the kind of each GPU of
  // `gpus` (an index into server_kinds); empty when all are one kind.
  std::vector<ServerSpec> server_kinds;
  std::vector<int> gpu_kind;
  bool analytical = false;  // also compute the PAI analytical estimate (model workloads)
};

// What reading a workload gives.
struct WorkloadBuild {
  ExecutionGraph graph;
  std::string summary;              // one line (model and language-model workloads); else ""
  bool ops_priced = false;          // every op priced on the target's device(s)
  std::optional<LlmRunInfo> llm;    // language-model workloads: throughput, memory
  double analytical_seconds = 0.0;  // the PAI estimate when asked and it applies; else 0
  int iterations = 1;               // training steps the graph holds (strategy.iterations)
  // What kind of run this is, for the published runs most like it (scenario/error_band.h).
  std::string kind = "other";  // llm, cnn, transformer, rnn, recsys, gnn, other
  std::string framework;       // the software-stack profile's name; "" for graph workloads
};

// The platform's GPUs as strategies see them: the generated topology's servers, or for a
// SimGrid XML platform its listed GPU hosts (cluster_layout_from_hosts).
ClusterLayout platform_layout(const PlatformSource& platform,
                              const std::vector<GpuPlacement>& platform_gpus);

// Reads `root`'s workload mapping (and the strategy, precision and cost-model keys beside it)
// on the GPUs `gpus` and `layout` describe (the same GPUs in the same order). On a mixed
// cluster each GPU's ops are priced on its own model (scenario/gpu_kinds.cc). Throws InputError
// naming the file and key.
WorkloadBuild read_workload(const YamlMap& root, const std::string& base_dir,
                            const std::vector<GpuPlacement>& gpus, const ClusterLayout& layout,
                            const WorkloadTarget& target);

// The same with every op priced on target.device, whatever target.gpu_kind says.
WorkloadBuild read_workload_on_device(const YamlMap& root, const std::string& base_dir,
                                      const std::vector<GpuPlacement>& gpus,
                                      const ClusterLayout& layout, const WorkloadTarget& target);

}  // namespace orrery
