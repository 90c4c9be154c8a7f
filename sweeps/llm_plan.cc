#include "sweeps/llm_plan.h"

#include <algorithm>
#include <set>

#include "common/errors.h"
#include "common/yaml_reader.h"
#include "engine/run_result_io.h"

namespace orrery {

LlmPlanSpec parse_llm_plan_spec(const YAML::Node& plan, const std::string& origin) {
  const YamlMap p(plan, origin, "plan");
  LlmPlanSpec spec;
  p.raw("search");  // read by llm_search.h
  const std::string rank_by = p.str("rank_by", "time");
  if (rank_by != "time" && rank_by != "cost" && rank_by != "pessimistic")
    p.fail("rank_by",
           "expected time (per iteration), pessimistic (the top of its likely range) "
           "or cost, got \"" +
               rank_by + "\"");
  spec.by_cost = rank_by == "cost";
  spec.pessimistic = rank_by == "pessimistic";
  spec.top = p.integer("top", 10, 1, 100000);
  const YamlMap prices = p.map("prices");
  spec.gpu_hour = read_gpu_prices(prices, "gpu_hour", false);
  spec.priced = prices.has("gpu_hour");
  if (spec.priced && spec.gpu_hour.flat && !(spec.gpu_hour.price > 0))
    prices.fail("gpu_hour", "expected a price per GPU-hour above 0");
  prices.reject_unknown_keys();
  p.reject_unknown_keys();
  if (spec.by_cost && !spec.priced) p.fail("rank_by", "ranking by cost needs plan.prices.gpu_hour");
  return spec;
}

std::vector<LlmPlanRow> rank_llm_plans(const LlmPlanSpec& spec, const SweepInput& in,
                                       const std::vector<const PointOutcome*>& outcomes) {
  std::vector<LlmPlanRow> rows;
  std::set<uint64_t> seen;
  for (const SweepPoint& p : in.points) {
    const PointOutcome* o = outcomes[p.index];
    if (!o || !o->ok || !seen.insert(p.hash).second) continue;
    LlmPlanRow r;
    r.index = p.index;
    LlmFigures& f = r.figures;
    // The plan as the point ran it, from its own figures rather than read back from the text.
    f = llm_figures_of(o->metrics);
    f.iteration_s = deserialize_run_result(o->result_bytes).makespan;
    r.gpus = static_cast<int>(f.gpus);
    if (spec.priced)
      r.gpu_hour = spec.gpu_hour.flat
                       ? spec.gpu_hour.price
                       : gpu_price(spec.gpu_hour, point_platform(in, p).server.gpu, p, in.path);
    r.likely_low = r.likely_high = f.iteration_s;
    likely_range(*o, &r.likely_low, &r.likely_high);
    r.cost_per_iteration = r.gpus * f.iteration_s / 3600 * r.gpu_hour;
    r.training_cost = f.gpu_hours * r.gpu_hour;
    for (const auto& [name, value] : o->metrics) {
      if (name == "campaign.wall_days") r.campaign_days = value;
      if (name == "campaign.goodput") r.campaign_goodput = value;
      if (name == "campaign.cost") r.campaign_cost = value;
    }
    rows.push_back(std::move(r));
  }
  // With a campaign on every plan, time is the campaign's and cost the campaign's where it has
  // prices: a plan's failures, checkpoints and restarts count, not only its step.
  const bool campaigns =
      !rows.empty() && std::all_of(rows.begin(), rows.end(),
                                   [](const LlmPlanRow& r) { return r.campaign_days > 0; });
  auto time_of = [&](const LlmPlanRow& r) {
    return campaigns ? r.campaign_days : r.figures.iteration_s;
  };
  auto cost_of = [&](const LlmPlanRow& r) {
    return campaigns && r.campaign_cost > 0 ? r.campaign_cost : r.cost_per_iteration;
  };
  std::stable_sort(rows.begin(), rows.end(), [&](const LlmPlanRow& a, const LlmPlanRow& b) {
    if (spec.by_cost && cost_of(a) != cost_of(b)) return cost_of(a) < cost_of(b);
    if (spec.pessimistic && a.likely_high != b.likely_high) return a.likely_high < b.likely_high;
    if (time_of(a) != time_of(b)) return time_of(a) < time_of(b);
    return a.index < b.index;
  });
  for (size_t i = 0; i < rows.size(); ++i) {
    rows[i].rank = static_cast<int>(i) + 1;
    rows[i].within_range_of_best = i > 0 && rows[i].likely_low <= rows[0].likely_high &&
                                   rows[0].likely_low <= rows[i].likely_high;
  }
  return rows;
}

}  // namespace orrery
