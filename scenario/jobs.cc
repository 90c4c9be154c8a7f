#include "scenario/jobs.h"

#include <map>

#include "common/errors.h"
#include "common/input_limits.h"
#include "common/size_guard.h"
#include "engine/graph_check.h"
#include "scenario/job_mix.h"

namespace orrery {
namespace {

// What one entry of `jobs` asks for, before placement.
struct JobEntry {
  YamlMap map;
  std::string name;
  PlacementRequest request;
  int iterations = 1;
  double start = 0.0;
};

// The `jobs` list, or the jobs a `job_mix` draws (job_mix.h).
std::vector<JobEntryNode> job_entries(const YamlMap& root, int platform_gpus) {
  if (root.has("job_mix")) return draw_job_mix(root.map("job_mix"), platform_gpus);
  const YAML::Node list = root.raw("jobs");
  if (!list.IsSequence() || list.size() == 0)
    root.fail("jobs", "expected a list of jobs, each a mapping with gpus and a workload");
  std::vector<JobEntryNode> out;
  for (size_t i = 0; i < list.size(); ++i) {
    if (!list[i].IsMap()) root.fail("jobs", "[" + std::to_string(i) + "]: expected a mapping");
    out.push_back({list[i], "jobs[" + std::to_string(i) + "]"});
  }
  return out;
}

JobEntry read_entry(const YamlMap& map, size_t index, const ClusterLayout& layout) {
  // Every key is read through the entry's own map: it remembers what was read, and
  // reject_unknown_keys later asks it.
  JobEntry e{map, "", {}, 1, 0.0};
  const YamlMap& m = e.map;
  e.name = m.str("name", "job" + std::to_string(index));
  if (e.name.empty() || e.name.find('/') != std::string::npos)
    m.fail("name", "must be non-empty and without '/' (it prefixes the job's devices and ops)");
  e.request.job = e.name;
  if (!m.has("gpus")) m.fail("gpus", "is required: a GPU count, or a list of GPU hosts or indices");
  if (m.raw("gpus").IsSequence()) {
    if (m.has("placement"))
      m.fail("placement", "a job that lists its GPUs has no placement policy");
    std::map<std::string, int> by_host;
    for (size_t g = 0; g < layout.gpus.size(); ++g)
      by_host.emplace(layout.gpus[g].host, static_cast<int>(g));
    e.request.policy = PlacementPolicy::kExplicit;
    for (const std::string& s : m.str_list("gpus")) {
      auto it = by_host.find(s);
      int g = -1;
      if (it != by_host.end()) {
        g = it->second;
      } else if (!s.empty() && s.size() < 10 &&
                 s.find_first_not_of("0123456789") == std::string::npos) {
        g = std::stoi(s);
      }
      if (g < 0 || g >= static_cast<int>(layout.gpus.size()))
        m.fail("gpus", "\"" + s +
                           "\" is neither a GPU host of the platform nor a GPU index below " +
                           std::to_string(layout.gpus.size()));
      e.request.explicit_gpus.push_back(g);
    }
  } else {
    e.request.gpus = m.integer("gpus", 1, 1, 1 << 24);
    const std::string policy = m.str("placement", "packed");
    if (!parse_placement_policy(policy, &e.request.policy))
      m.fail("placement",
             "expected packed, spread, topology, server or random, got \"" + policy + "\"");
    e.request.seed = static_cast<uint64_t>(m.integer("seed", 1, 0, 2147483647));
  }
  e.iterations = m.integer("iterations", 1, 1, 1000000);
  e.start = m.time("start", 0.0, limits::kStartTime);
  return e;
}

// A graph file names its own hosts; as a job it runs on the job's GPUs instead: its i-th
// device on the i-th.
void place_graph(const JobEntry& e, const ClusterLayout& layout, ExecutionGraph* g) {
  if (g->devices.size() > layout.gpus.size())
    e.map.fail("gpus", "the job's graph has " + std::to_string(g->devices.size()) +
                           " devices, more than its " + std::to_string(layout.gpus.size()) +
                           " GPUs");
  for (size_t i = 0; i < g->devices.size(); ++i) {
    const ClusterGpu& gpu = layout.gpus[i];
    g->devices[i].host = gpu.host;
    g->devices[i].launch_host = gpu.launch_host;
    g->devices[i].node = "server" + std::to_string(gpu.server);
  }
}

// The entry's workload on the platform GPUs `mine` (indices into `layout`, in rank order).
WorkloadBuild build_on(const JobEntry& e, const std::vector<int>& mine, const std::string& base_dir,
                       const std::vector<GpuPlacement>& gpus, const ClusterLayout& layout,
                       const WorkloadTarget& platform) {
  const ClusterLayout job_layout = sub_layout(layout, mine);
  std::vector<GpuPlacement> job_gpus;
  for (int g : mine) job_gpus.push_back(gpus[g]);
  // The platform's, with the job's GPUs' models; no PAI estimate for jobs.
  WorkloadTarget target = platform;
  target.analytical = false;
  target.gpu_kind.clear();
  if (!platform.gpu_kind.empty())
    for (int g : mine) target.gpu_kind.push_back(platform.gpu_kind[g]);
  WorkloadBuild job;
  try {
    job = read_workload(e.map, base_dir, job_gpus, job_layout, target);
  } catch (const InputError& err) {
    // Builders below name the key (strategy.gpus) but not the job whose key it is.
    const std::string what = err.what();
    if (what.find(e.map.key_path("")) != std::string::npos) throw;
    const std::string named =
        "job " + e.name + " on " + std::to_string(mine.size()) + " GPUs: " + what;
    if (dynamic_cast<const InfeasibleError*>(&err)) throw InfeasibleError(named);
    throw InputError(named);
  }
  if (e.map.map("workload").str("type", "") == "graph") place_graph(e, job_layout, &job.graph);
  return job;
}

}  // namespace

JobsBuild read_jobs(const YamlMap& root, const std::string& base_dir,
                    const std::vector<GpuPlacement>& gpus, const ClusterLayout& layout,
                    const WorkloadTarget& platform) {
  const char* section = root.has("job_mix") ? "job_mix" : "jobs";
  if (root.has("jobs") && root.has("job_mix"))
    root.fail("job_mix", "give either a list of jobs or a job mix, not both");
  if (gpus.size() != layout.gpus.size())
    root.fail(section, "the platform's GPUs and its servers disagree (internal)");
  std::vector<JobEntry> entries;
  const std::vector<JobEntryNode> nodes = job_entries(root, static_cast<int>(gpus.size()));
  for (size_t i = 0; i < nodes.size(); ++i)
    entries.push_back(read_entry(YamlMap(nodes[i].node, root.origin(), nodes[i].path), i, layout));
  std::vector<PlacementRequest> requests;
  for (const JobEntry& e : entries) requests.push_back(e.request);
  Placement placed;
  try {
    placed = place_jobs(layout, requests);
  } catch (const InputError& e) {
    root.fail(section, e.what());
  }
  JobsSetup setup;
  setup.gpus = static_cast<int>(layout.gpus.size());
  setup.free_gpus = placed.free_gpus;
  setup.fragmented_gpus = placed.fragmented_gpus;
  setup.unplaced = placed.unplaced;
  std::vector<JobGraph> graphs;
  std::map<std::string, int> best_by_key;  // a best-placement run per distinct job
  bool priced = true;
  for (size_t i = 0; i < entries.size(); ++i) {
    const JobEntry& e = entries[i];
    const std::vector<int>& mine = placed.gpus[i];
    if (mine.empty()) {
      // Left out, but its keys are still checked: a typo in a waiting job is reported.
      for (const char* k : {"workload", "strategy", "precision", "cost_model", "framework"})
        if (e.map.has(k)) e.map.raw(k);
      e.map.reject_unknown_keys();
      continue;
    }
    WorkloadBuild job = build_on(e, mine, base_dir, gpus, layout, platform);
    // The same job alone on the platform's best GPUs for it: where packed placement puts it on
    // an empty platform (the fewest servers). Built only where that is another set of GPUs.
    PlacementRequest best_request;
    best_request.job = e.name;
    best_request.gpus = static_cast<int>(mine.size());
    const std::vector<int> best = place_jobs(layout, {best_request}).gpus.at(0);
    int best_of = -1;
    if (best != mine) {
      // Jobs of the same workload, strategy and size (a job mix draws many) share one run.
      std::string key = std::to_string(mine.size()) + "/" + std::to_string(e.iterations);
      for (const char* k : {"workload", "strategy", "precision", "cost_model", "framework"})
        if (e.map.has(k)) key += std::string("/") + k + ":" + YAML::Dump(e.map.raw(k));
      auto [it, added] = best_by_key.emplace(key, static_cast<int>(setup.best_placement.size()));
      if (added) {
        std::vector<JobSpan> span;
        JobAlone alone;
        alone.graph =
            compose_jobs({{e.name, build_on(e, best, base_dir, gpus, layout, platform).graph,
                           e.iterations, 0.0}},
                         &span);
        alone.span = span.at(0);
        setup.best_placement.push_back(std::move(alone));
      }
      best_of = it->second;
    }
    setup.best_of.push_back(best_of);
    e.map.reject_unknown_keys();
    priced = priced && job.ops_priced;
    ScenarioJob info;
    info.name = e.name;
    info.placement = placement_policy_name(e.request.policy);
    for (int g : mine) info.gpus.push_back(gpus[g].host);
    info.workload_summary =
        job.summary.empty() ? e.map.map("workload").str("type", "synthetic-dp") : job.summary;
    // A language model that does not fit its GPUs still runs, as a one-workload run does; the
    // verdict goes with the job.
    if (job.llm && !job.llm->fits) info.workload_summary += "; " + job.llm->memory;
    setup.jobs.push_back(std::move(info));
    graphs.push_back({e.name, std::move(job.graph), e.iterations, e.start});
  }
  if (graphs.empty()) root.fail(section, "no job fits the platform");
  // Each iteration is a copy of the job's ops: a million iterations of a large job would be
  // refused here, with the count, rather than fill memory while composing.
  SizeEstimate size;
  double ops = 0;
  for (const JobGraph& g : graphs) ops += static_cast<double>(g.graph.ops.size()) * g.iterations;
  size.ops = ops;
  size.memory_bytes = ops * kBytesPerOp;
  size.basis = std::to_string(graphs.size()) + " jobs, " + approximate_count(ops) +
               " ops over their iterations";
  check_size(size, root.origin() + ": " + section, "composing the jobs");
  JobsBuild out;
  out.graph = compose_jobs(graphs, &setup.spans);
  check_graph(out.graph, root.origin() + ": " + section);
  out.ops_priced = priced;
  out.setup = std::move(setup);
  return out;
}

}  // namespace orrery
