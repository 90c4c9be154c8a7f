// read_workload on a mixed cluster (platform.server_groups): a workload whose GPUs are of
// several models is built once per model among them, each build priced on that model's
// datasheet, and every GPU keeps the op times of its own model's build. The builds must be the
// same ops on the same devices: only where times are all that a GPU model changes can one graph
// carry them all.
#include <map>
#include <sstream>

#include "scenario/workload_reader.h"

namespace orrery {
namespace {

bool same_shape(const ExecutionGraph& a, const ExecutionGraph& b) {
  if (a.ops.size() != b.ops.size() || a.devices.size() != b.devices.size() ||
      a.collectives.size() != b.collectives.size())
    return false;
  for (size_t d = 0; d < a.devices.size(); ++d)
    if (a.devices[d].host != b.devices[d].host) return false;
  for (size_t i = 0; i < a.ops.size(); ++i) {
    const Op& x = a.ops[i];
    const Op& y = b.ops[i];
    if (x.device != y.device || !(x.stream == y.stream) || x.kind != y.kind || x.deps != y.deps ||
        x.name != y.name)
      return false;
  }
  return true;
}

}  // namespace

WorkloadBuild read_workload(const YamlMap& root, const std::string& base_dir,
                            const std::vector<GpuPlacement>& gpus, const ClusterLayout& layout,
                            const WorkloadTarget& target) {
  if (target.gpu_kind.empty()) return read_workload_on_device(root, base_dir, gpus, layout, target);
  if (target.gpu_kind.size() != gpus.size())
    root.fail("workload", "the GPUs and their models disagree (internal)");
  std::vector<int> kinds;  // in order of first use
  std::map<int, int> gpus_of_kind;
  std::map<std::string, int> kind_of_host;
  for (size_t i = 0; i < gpus.size(); ++i) {
    const int k = target.gpu_kind[i];
    if (gpus_of_kind[k]++ == 0) kinds.push_back(k);
    kind_of_host[gpus[i].host] = k;
  }
  auto build_on = [&](int k) {
    WorkloadTarget one = target;
    one.device = target.server_kinds.at(k).gpu;
    one.server = target.server_kinds.at(k);
    return read_workload_on_device(root, base_dir, gpus, layout, one);
  };
  WorkloadBuild out = build_on(kinds.front());
  // Workloads that carry their own op times (synthetic, graph files, traces) keep them on
  // every GPU; only the ops they leave to flops meet each GPU's speed, in the replay.
  if (kinds.size() == 1 || !out.ops_priced) return out;
  const YamlMap w = root.map("workload");
  if (out.llm)
    w.fail("type", "a language-model workload runs on GPUs of one model: this one spans " +
                       std::to_string(kinds.size()) +
                       " (place it on one server group, or give it GPUs of one model)");
  std::vector<int> device_kind(out.graph.devices.size(), -1);
  for (size_t d = 0; d < device_kind.size(); ++d) {
    auto it = kind_of_host.find(out.graph.devices[d].host);
    if (it != kind_of_host.end()) device_kind[d] = it->second;
  }
  for (size_t n = 1; n < kinds.size(); ++n) {
    const int k = kinds[n];
    // Another build of the same workload, priced on this model.
    const WorkloadBuild other = build_on(k);
    if (!same_shape(out.graph, other.graph))
      w.fail("type", "builds different op graphs on " +
                         target.server_kinds.at(kinds.front()).gpu.name + " and " +
                         target.server_kinds.at(k).gpu.name +
                         " (a precision or strategy choice that depends on the GPU, such as "
                         "precision: cost-aware): give it GPUs of one model, or a fixed precision");
    for (size_t i = 0; i < out.graph.ops.size(); ++i) {
      Op& op = out.graph.ops[i];
      if (op.device < 0 || device_kind[op.device] != k) continue;
      op.duration = other.graph.ops[i].duration;
      op.memory_bound = other.graph.ops[i].memory_bound;
    }
  }
  std::ostringstream s;
  s << out.summary << "; each GPU priced on its own model:";
  for (size_t n = 0; n < kinds.size(); ++n)
    s << (n ? "," : "") << " " << gpus_of_kind[kinds[n]] << " x "
      << target.server_kinds[kinds[n]].gpu.name;
  out.summary = s.str();
  return out;
}

}  // namespace orrery
