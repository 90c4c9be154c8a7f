#include "sweeps/llm_search.h"

#include <filesystem>
#include <vector>

#include "common/errors.h"
#include "common/yaml_reader.h"
#include "scenario/llm_workload.h"
#include "strategies/framework.h"
#include "strategies/llm_plan_reader.h"
#include "strategies/parallel_plan.h"
#include "sweeps/sweep_spec.h"

namespace orrery {
namespace {

struct SearchLists {
  std::vector<int> gpus, tp, pp, cp, micro_batch, zero, virtual_stages;
  std::vector<std::string> recompute, schedule, frameworks;
  bool search_gpus = false, search_schedule = false, search_cp = false;
};

// A list of positive integers, or absent (`fallback` then).
std::vector<int> int_list(const YamlMap& m, const std::string& key, std::vector<int> fallback,
                          int min, int max) {
  const YAML::Node n = m.raw(key);
  if (!n.IsDefined() || n.IsNull()) return fallback;
  if (n.IsScalar() && n.Scalar() == "auto") return fallback;
  if (!n.IsSequence() || n.size() == 0)
    m.fail(key, "expected a list of integers (or auto), such as [1, 2, 4]");
  std::vector<int> out;
  for (const auto& v : n) {
    long long x = 0;
    try {
      if (!v.IsScalar()) throw YAML::Exception(YAML::Mark(), "");
      std::size_t used = 0;
      x = std::stoll(v.Scalar(), &used);
      if (used != v.Scalar().size()) throw std::invalid_argument("");
    } catch (const std::exception&) {
      m.fail(key, "expected integers, got \"" +
                      (v.IsScalar() ? v.Scalar() : std::string("a list")) + "\"");
    }
    if (x < min || x > max)
      m.fail(key, "values must be in [" + std::to_string(min) + ", " + std::to_string(max) +
                      "], got " + std::to_string(x));
    out.push_back(static_cast<int>(x));
  }
  return out;
}

std::vector<std::string> text_list(const YamlMap& m, const std::string& key,
                                   std::vector<std::string> fallback) {
  if (!m.has(key)) return fallback;
  std::vector<std::string> out = m.str_list(key);
  if (out.empty()) m.fail(key, "expected a non-empty list");
  return out;
}

std::vector<int> divisors(int n, int limit) {
  std::vector<int> out;
  for (int d = 1; d <= n && d <= limit; ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

int base_int(const YAML::Node& base, const std::string& path, int fallback) {
  const YAML::Node v = point_value(base, SweepPoint{}, path);
  if (!v.IsDefined() || !v.IsScalar()) return fallback;
  try {
    return std::stoi(v.Scalar());
  } catch (const std::exception&) {
    return fallback;
  }
}

}  // namespace

LlmSearchSummary expand_llm_search(const YAML::Node& plan, const YAML::Node& base,
                                   const std::string& origin) {
  LlmSearchSummary out;
  if (!plan || !plan.IsMap() || !plan["search"]) return out;
  out.active = true;
  const YamlMap p(plan, origin, "plan");
  const YamlMap s = p.map("search");
  const YamlMap root(base, origin);
  const YamlMap w = root.map("workload");
  if (w.str("type", "") != "llm")
    p.fail("search", "searches parallel plans of a language model: needs workload.type llm");
  const LlmConfig model = read_llm_model(w, std::filesystem::path(origin).parent_path().string());
  out.model = model.name;
  const int global_batch = w.integer("global_batch", 0);
  if (global_batch <= 0)
    p.fail("search", "needs workload.global_batch: plans are compared at one global batch");

  const int per_server = base_int(base, "platform.server.gpus", 1);
  const int servers = base_int(base, "platform.servers", 1);
  SearchLists l;
  l.search_gpus = s.has("gpus");
  l.gpus = int_list(s, "gpus", {per_server * servers}, 1, 1 << 20);
  for (int g : l.gpus)
    if (g % per_server != 0)
      s.fail("gpus", std::to_string(g) + " GPUs is not a whole number of servers of " +
                         std::to_string(per_server) + " GPUs");
  const bool pp_given = s.has("pp");
  l.tp = int_list(s, "tp", divisors(per_server, per_server), 1, 1024);
  const std::vector<int> pp_list = int_list(s, "pp", {}, 1, 4096);
  l.search_cp = s.has("cp");
  l.cp = int_list(s, "cp", {root.map("strategy").integer("cp", 1)}, 1, 1024);
  l.micro_batch = int_list(s, "micro_batch", {1, 2, 4, 8}, 1, 1 << 20);
  l.zero = int_list(s, "zero", {0, 1, 2, 3}, 0, 3);
  l.recompute = text_list(s, "recompute", {"none", "selective", "full"});
  l.search_schedule = s.has("schedule") || s.has("virtual_stages");
  l.schedule = text_list(s, "schedule", {"1f1b"});
  l.virtual_stages = int_list(s, "virtual_stages", {2}, 2, 1024);
  // Software stacks (strategies/framework.h): each plan under each; a stack that fixes the ZeRO
  // stage (FSDP's 3, DDP's 0) takes only plans with that stage.
  if (s.has("framework")) l.frameworks = text_list(s, "framework", {});
  std::vector<int> framework_zero;
  for (const auto& name : l.frameworks) {
    try {
      framework_zero.push_back(framework_profile(name).zero);
    } catch (const InputError& e) {
      s.fail("framework", e.what());
    }
  }
  s.reject_unknown_keys();
  for (const auto& r : l.recompute) {
    Recompute unused;
    if (!parse_recompute(r, &unused))
      s.fail("recompute", "expected " + recompute_choices() + ", got \"" + r + "\"");
  }
  for (const auto& name : l.schedule) {
    PipelineSchedule unused;
    if (!parse_pipeline_schedule(name, &unused))
      s.fail("schedule", "expected " + pipeline_schedule_choices() + ", got \"" + name + "\"");
  }

  // The scenario's fixed choices, read as the llm workload reads them; the searched keys are
  // set per combination below.
  const YamlMap st = root.map("strategy");
  MemoryOptions unused_memory;
  ParallelPlan fixed = read_llm_plan(w, st, &unused_memory);
  fixed.global_batch = global_batch;
  const bool sequence_parallel = fixed.sequence_parallel;

  YAML::Node zip;
  auto push = [&](const char* key, const auto& value) { zip[key].push_back(value); };
  const std::vector<std::string> stacks =
      l.frameworks.empty() ? std::vector<std::string>{""} : l.frameworks;
  for (size_t fi = 0; fi < stacks.size(); ++fi)
    for (int gpus : l.gpus)
      for (int tp : l.tp)
        for (int cp : l.cp) {
          const std::vector<int> pps =
              pp_given ? pp_list : divisors(gpus / std::max(tp * cp, 1), model.layers);
          for (int pp : pps)
            for (int mb : l.micro_batch)
              for (int zero : l.zero)
                for (const auto& rc : l.recompute)
                  for (const auto& sched : l.schedule) {
                    const bool interleaved = sched == "interleaved";
                    const std::vector<int> vs =
                        interleaved ? l.virtual_stages : std::vector<int>{1};
                    for (int v : vs) {
                      ++out.combinations;
                      if (!l.frameworks.empty() && framework_zero[fi] >= 0 &&
                          zero != framework_zero[fi])
                        continue;  // the stack fixes the ZeRO stage
                      ParallelPlan c = fixed;
                      c.tp = tp;
                      c.pp = pp;
                      c.cp = cp;
                      if (gpus % (tp * pp * c.cp) != 0) continue;
                      c.dp = gpus / (tp * pp * c.cp);
                      c.sequence_parallel = sequence_parallel && tp > 1;
                      c.micro_batch = mb;
                      c.zero = zero;
                      parse_recompute(rc, &c.recompute);
                      parse_pipeline_schedule(sched, &c.schedule);
                      c.virtual_stages = v;
                      try {
                        check_parallel_plan(c, model, gpus, origin);
                      } catch (const InputError&) {
                        continue;  // not a plan for this model, batch and cluster
                      }
                      ++out.plans;
                      if (!l.frameworks.empty()) push("framework", stacks[fi]);
                      if (l.search_gpus) push("platform.servers", gpus / per_server);
                      push("strategy.tp", tp);
                      push("strategy.pp", pp);
                      if (l.search_cp) push("strategy.cp", cp);
                      push("workload.micro_batch", mb);
                      push("strategy.zero", zero);
                      push("strategy.recompute", rc);
                      if (sequence_parallel)
                        push("strategy.sequence_parallel", c.sequence_parallel);
                      if (l.search_schedule) {
                        push("strategy.schedule", sched);
                        push("strategy.virtual_stages", v);
                      }
                    }
                  }
        }
  if (out.plans == 0)
    p.fail("search",
           "none of its " + std::to_string(out.combinations) +
               " combinations is a valid plan for " + model.name + " with a global batch of " +
               std::to_string(global_batch) +
               " (degrees must divide the heads, layers and GPUs, and the batch split into "
               "micro-batches over the replicas)");

  out.sweep["zip"].push_back(zip);
  return out;
}

void apply_llm_search_defaults(const YAML::Node& plan, YAML::Node base) {
  if (!plan || !plan.IsMap() || !plan["search"]) return;
  if (!base["strategy"] || base["strategy"].IsNull())
    base["strategy"] = YAML::Node(YAML::NodeType::Map);
  if (!base["strategy"].IsMap()) return;  // the scenario's reader names the error
  YAML::Node st = base["strategy"];
  if (!st["replicas"]) st["replicas"] = "one";
  if (!st["tp_collectives"]) st["tp_collectives"] = "analytical";
  if (!st["collectives"] || st["collectives"].IsNull())
    st["collectives"] = YAML::Node(YAML::NodeType::Map);
  if (st["collectives"].IsMap() && !st["collectives"]["mode"])
    st["collectives"]["mode"] = "analytical";
}

}  // namespace orrery
