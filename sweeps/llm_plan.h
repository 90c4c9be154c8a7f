// Ranking the parallel plans of a plan search (sweeps/llm_search.h) once they ran: every
// simulated plan with its time per iteration, throughput, breakdown and cost, ordered by the
// plan section's criterion. The rest of the `plan:` section of such a file:
//
//   plan:
//     search: {...}
//     rank_by: time            # time per iteration (equally: time to train N tokens); or
//                              # pessimistic: the top of its likely range (scenario/error_band.h,
//                              # the predicted time where none is known); or cost
//     prices: {gpu_hour: 2.5}  # per GPU-hour; or {gpu_hour: {H100: 2.5, A100-SXM4-80GB: 1.6}}
//                              # by the point's GPU (names or aliases, as plan.prices.gpu)
//     top: 10                  # plans printed
//
// With workload.train_tokens, each plan also gets the days and GPU-hours a training run of
// that many tokens takes, and its cost. With a `campaign` section, each plan's campaign
// (failures, checkpoints at the interval its rule picks for that plan, restarts) gives its days
// and cost instead, and time ranks plans by the campaign's expected wall time.
#pragma once

#include <yaml-cpp/yaml.h>

#include <map>
#include <string>
#include <vector>

#include "scenario/llm_figures.h"
#include "sweeps/plan.h"
#include "sweeps/point_outcome.h"
#include "sweeps/sweep_input.h"

namespace orrery {

struct LlmPlanSpec {
  bool by_cost = false;      // rank_by: cost
  bool pessimistic = false;  // rank_by: pessimistic
  bool priced = false;       // prices.gpu_hour given
  PriceList gpu_hour;        // per GPU-hour: one price, or one per GPU model (sweeps/plan.h)
  int top = 10;
};

// Reads rank_by, prices and top strictly (InputError naming the file, line and key); rank_by
// cost needs prices.
LlmPlanSpec parse_llm_plan_spec(const YAML::Node& plan, const std::string& origin);

struct LlmPlanRow {
  int64_t index = 0;  // the sweep point
  int gpus = 0;
  LlmFigures figures;             // with the plan that ran (figures.plan)
  double gpu_hour = 0;            // the price used (0: not priced)
  double cost_per_iteration = 0;  // gpus x iteration x price per GPU-second
  double training_cost = 0;       // of workload.train_tokens
  int rank = 0;                   // 1: the best
  // The likely range of its iteration time (the point's likely.* figures); both the predicted
  // time where no validated run is like it.
  double likely_low = 0;
  double likely_high = 0;
  // Its likely range overlaps the best plan's: the model's error cannot tell the two apart.
  bool within_range_of_best = false;
  // With a campaign: its expected wall days, goodput and cost (0: no campaign).
  double campaign_days = 0;
  double campaign_goodput = 0;
  double campaign_cost = 0;
};

// One row per distinct simulated point (the first index of each hash), ranked. Throws
// InputError naming plan.prices.gpu_hour when a point's GPU has no price.
std::vector<LlmPlanRow> rank_llm_plans(const LlmPlanSpec& spec, const SweepInput& in,
                                       const std::vector<const PointOutcome*>& outcomes);

// Parameter names a plan search adds to every simulated point.
inline constexpr const char* kParamPlanRank = "plan.rank";
inline constexpr const char* kParamPlanIterationCost = "plan.cost_per_iteration";
inline constexpr const char* kParamPlanTrainingCost = "plan.training_cost";
inline constexpr const char* kParamPlanWithinRange = "plan.within_range";

}  // namespace orrery
