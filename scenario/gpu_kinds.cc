// read_workload on a mixed cluster (platform.server_groups): a workload whose GPUs are of
// several models is built once per model among them, each build priced on that model's
// datasheet, and every GPU keeps the op times of its own model's build. The builds must be the
// same ops on the same devices: only where times are all that a GPU model changes can one graph
// carry them all.
#include <map>
#include <sstream>

#include "results/run_report.h"
#include "scenario/scenario.h"
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

void read_workload(const YamlMap& root, const std::string& base_dir,
                   const std::vector<GpuPlacement>& gpus, const ClusterLayout& layout,
                   Scenario* sc) {
  if (sc->gpu_kind.empty()) return read_workload_on_device(root, base_dir, gpus, layout, sc);
  if (sc->gpu_kind.size() != gpus.size())
    root.fail("workload", "the GPUs and their models disagree (internal)");
  std::vector<int> kinds;  // in order of first use
  std::map<int, int> gpus_of_kind;
  std::map<std::string, int> kind_of_host;
  for (size_t i = 0; i < gpus.size(); ++i) {
    const int k = sc->gpu_kind[i];
    if (gpus_of_kind[k]++ == 0) kinds.push_back(k);
    kind_of_host[gpus[i].host] = k;
  }
  auto build_on = [&](int k, Scenario* s) {
    s->device = sc->server_kinds.at(k).gpu;
    s->platform_server = sc->server_kinds.at(k);
    read_workload_on_device(root, base_dir, gpus, layout, s);
  };
  build_on(kinds.front(), sc);
  // Workloads that carry their own op times (synthetic, graph files, traces) keep them on
  // every GPU; only the ops they leave to flops meet each GPU's speed, in the replay.
  if (kinds.size() == 1 || !sc->ops_priced) return;
  const YamlMap w = root.map("workload");
  if (sc->llm)
    w.fail("type", "a language-model workload runs on GPUs of one model: this one spans " +
                       std::to_string(kinds.size()) +
                       " (place it on one server group, or give it GPUs of one model)");
  std::vector<int> device_kind(sc->graph.devices.size(), -1);
  for (size_t d = 0; d < device_kind.size(); ++d) {
    auto it = kind_of_host.find(sc->graph.devices[d].host);
    if (it != kind_of_host.end()) device_kind[d] = it->second;
  }
  for (size_t n = 1; n < kinds.size(); ++n) {
    const int k = kinds[n];
    // Another build of the same workload: it needs the GPUs and their model only (a
    // language-model workload, which would read the platform too, was refused above).
    Scenario other;
    other.origin = sc->origin;
    build_on(k, &other);
    if (!same_shape(sc->graph, other.graph))
      w.fail("type", "builds different op graphs on " + sc->device.name + " and " +
                         other.device.name +
                         " (a precision or strategy choice that depends on the GPU, such as "
                         "precision: cost-aware): give it GPUs of one model, or a fixed precision");
    for (size_t i = 0; i < sc->graph.ops.size(); ++i) {
      Op& op = sc->graph.ops[i];
      if (op.device < 0 || device_kind[op.device] != k) continue;
      op.duration = other.graph.ops[i].duration;
      op.memory_bound = other.graph.ops[i].memory_bound;
    }
  }
  std::ostringstream s;
  s << sc->workload_summary << "; each GPU priced on its own model:";
  for (size_t n = 0; n < kinds.size(); ++n)
    s << (n ? "," : "") << " " << gpus_of_kind[kinds[n]] << " x "
      << sc->server_kinds[kinds[n]].gpu.name;
  sc->workload_summary = s.str();
}

std::string scenario_device_line(const Scenario& sc) {
  if (sc.server_kinds.empty()) return device_line(sc.device, sc.ops_priced);
  std::string names;
  for (const ServerSpec& k : sc.server_kinds)
    if (names.find(device_label(k.gpu)) == std::string::npos)
      names += (names.empty() ? "" : ", ") + device_label(k.gpu);
  return names + (sc.ops_priced ? " (a mixed cluster: each GPU prices its own ops)"
                                : " (a mixed cluster); op times as given by the workload");
}

}  // namespace orrery
