#include "cli/plan_search.h"

#include <cstdio>
#include <map>
#include <memory>

#include "common/units.h"
#include "sweeps/expression.h"
#include "sweeps/llm_plan.h"
#include "sweeps/sweep_store.h"

namespace orrery {
namespace {

struct SearchState {
  LlmPlanSpec spec;
  std::vector<LlmPlanRow> rows;  // ranked, once the sweep is done
  std::map<uint64_t, const LlmPlanRow*> by_hash;
  int infeasible = 0, failed = 0;
  bool train = false, priced = false;
  bool campaign = false;  // every plan ran its campaign (the `campaign` section)
};

std::string plan_text(const LlmPlanRow& r) {
  const ParallelPlan& p = r.figures.plan;
  const std::string schedule = p.schedule == PipelineSchedule::kInterleaved
                                   ? "int. x" + std::to_string(p.virtual_stages)
                                   : pipeline_schedule_name(p.schedule);
  char s[96];
  std::snprintf(s, sizeof s, "%5d %3d %3d %4d %2d %3d %4d  %-9s %s", r.gpus, p.tp, p.pp, p.dp, p.cp,
                p.micro_batch, p.zero, recompute_name(p.recompute), schedule.c_str());
  return s;
}

std::string seconds(double s) {
  char t[32];
  std::snprintf(t, sizeof t, "%.3f", s);
  return t;
}

// The point's values of the scenario's own sweep axes (the plan's own keys left out, but for the
// software stack, which the table does not show otherwise).
std::string own_axes(const SweepInput& in, const SweepPoint& p) {
  std::string s;
  const YAML::Node plan_keys = in.search.sweep["zip"][0];
  for (const auto& [k, v] : p.params) {
    if (k.rfind("sweep.", 0) == 0 || (plan_keys[k] && k != "framework")) continue;
    s += (s.empty() ? "" : "  ") + k + "=" + v;
  }
  return s;
}

void print_search(const SearchState& st, const SweepInput& in, const std::string& output) {
  const LlmSearchSummary& s = in.search;
  std::printf("\nPlan search  %s: %lld combination(s) of the search values, %lld valid plan(s)",
              s.model.c_str(), static_cast<long long>(s.combinations),
              static_cast<long long>(s.plans));
  if (in.points.size() != static_cast<size_t>(s.plans))
    std::printf(" (%zu points with the scenario's own axes)", in.points.size());
  std::printf(
      ";\n             %zu simulated, %d do not fit the GPUs' memory or cannot run "
      "(recorded, not simulated)%s\n",
      st.rows.size(), st.infeasible,
      st.failed ? (", " + std::to_string(st.failed) + " failed").c_str() : "");
  if (st.rows.empty()) {
    std::printf("\nNo plan ran: every one is infeasible (orrery report lists why).\n\n");
    return;
  }
  const size_t top = std::min(st.rows.size(), static_cast<size_t>(st.spec.top));
  std::printf("\nBest %zu by %s (seconds per iteration; the breakdown is an average GPU's):\n", top,
              st.spec.by_cost       ? (st.campaign ? "the campaign's cost" : "cost per iteration")
              : st.spec.pessimistic ? "the top of the likely range of the time per iteration"
              : st.campaign         ? "the campaign's expected wall time (failures, checkpoints "
                                      "and restarts included)"
                                    : "time per iteration");
  std::printf(
      "  %4s  %5s %3s %3s %4s %2s %3s %4s  %-9s %-8s %9s %15s %10s %6s  %8s %8s %7s %7s %7s %7s",
      "rank", "GPUs", "TP", "PP", "DP", "CP", "mb", "ZeRO", "recompute", "schedule", "iteration",
      "likely", "tokens/s", "MFU", "compute", "recomp", "TP", "PP", "DP", "bubble");
  if (st.campaign)
    std::printf(" %7s %7s", "days", "goodput");
  else if (st.train)
    std::printf(" %7s", "days");
  if (st.priced) std::printf(" %12s", st.train || st.campaign ? "run cost" : "cost/iter");
  std::printf("  point\n");
  for (size_t i = 0; i < top; ++i) {
    const LlmPlanRow& r = st.rows[i];
    const LlmFigures& f = r.figures;
    const LlmBreakdown& b = f.breakdown;
    // The likely step time, from the validated runs most like the plan ("-": none is).
    const std::string likely = r.likely_high > r.likely_low
                                   ? seconds(r.likely_low) + "-" + seconds(r.likely_high)
                                   : std::string("-");
    std::printf(" %s%4d  %-43s %9s %15s %10.0f %5.1f%%  %8s %8s %7s %7s %7s %7s",
                r.within_range_of_best ? "~" : " ", r.rank, plan_text(r).c_str(),
                seconds(f.iteration_s).c_str(), likely.c_str(), f.tokens_per_s, 100 * f.mfu,
                seconds(b.compute).c_str(), seconds(b.recompute).c_str(),
                seconds(b.tp + b.cp + b.ep).c_str(), seconds(b.pp).c_str(), seconds(b.dp).c_str(),
                seconds(b.bubble).c_str());
    if (st.campaign)
      std::printf(" %7.1f %6.1f%%", r.campaign_days, 100 * r.campaign_goodput);
    else if (st.train)
      std::printf(" %7.1f", f.train_days);
    // A run's cost in whole units; one iteration's is often below one, so in hundredths.
    if (st.priced)
      std::printf(st.train || st.campaign ? " %12.0f" : " %12.2f",
                  st.campaign && r.campaign_cost > 0 ? r.campaign_cost
                  : st.train                         ? r.training_cost
                                                     : r.cost_per_iteration);
    std::printf("  %lld", static_cast<long long>(r.index));
    const std::string own = own_axes(in, in.points[r.index]);
    std::printf("%s%s\n", own.empty() ? "" : "  ", own.c_str());
  }
  const LlmPlanRow& first = st.rows[0];
  if (first.likely_high > first.likely_low) {
    int close = 0;
    for (const LlmPlanRow& r : st.rows) close += r.within_range_of_best;
    std::printf(
        "\nThe best plan's step is likely %s to %s s (the validated runs most like it); %d other "
        "plan(s), marked ~, have likely ranges that overlap it: the model's error cannot tell "
        "them from the best.\n",
        seconds(first.likely_low).c_str(), seconds(first.likely_high).c_str(), close);
  } else {
    std::printf("\nNo likely range: no validated run is like these plans (orrery accuracy).\n");
  }
  // Plans over several systems (the scenario's own axes: presets, GPUs, networks): the table
  // above may be one system's top plans only, so each system's best is listed as well.
  std::vector<std::pair<std::string, const LlmPlanRow*>> best;  // in rank order of their bests
  for (const LlmPlanRow& r : st.rows) {
    const std::string own = own_axes(in, in.points[r.index]);
    bool seen = false;
    for (const auto& b : best) seen = seen || b.first == own;
    if (!seen) best.emplace_back(own, &r);
  }
  if (best.size() > 1) {
    std::printf("\nBest plan of each system (the scenario's own axes):\n");
    for (const auto& [own, r] : best)
      std::printf("  %4d  %-43s %9s %10.0f %5.1f%%  %s\n", r->rank, plan_text(*r).c_str(),
                  seconds(r->figures.iteration_s).c_str(), r->figures.tokens_per_s,
                  100 * r->figures.mfu, own.c_str());
  }
  std::printf(
      "\nTP includes the context-parallel exchanges and expert-parallel all-to-alls; exposed "
      "communication is what compute waits "
      "for; bubble is time with nothing running. Every plan and its figures: orrery report %s\n\n",
      output.c_str());
}

}  // namespace

SweepHooks plan_search_hooks() {
  auto st = std::make_shared<SearchState>();
  SweepHooks hooks;
  hooks.prepare = [st](const SweepInput& in, SweepStore& store) {
    st->spec = parse_llm_plan_spec(in.plan, in.path);
    st->priced = st->spec.priced;
    store.file_attrs()["plan_kind"] = "parallel plans";
    store.file_attrs()["plan_rank_by"] = st->spec.by_cost       ? "cost"
                                         : st->spec.pessimistic ? "pessimistic"
                                                                : "time";
    store.set_decorator(
        [st](const SweepPoint& p, const PointOutcome*, std::map<std::string, std::string>* params) {
          auto it = st->by_hash.find(p.hash);
          if (it == st->by_hash.end()) return;
          const LlmPlanRow& r = *it->second;
          (*params)[kParamPlanRank] = std::to_string(r.rank);
          (*params)[kParamPlanWithinRange] = r.within_range_of_best ? "1" : "0";
          if (r.gpu_hour > 0) {
            (*params)[kParamPlanIterationCost] = format_number(r.cost_per_iteration);
            if (r.training_cost > 0)
              (*params)[kParamPlanTrainingCost] = format_number(r.training_cost);
          }
        });
  };
  hooks.conclude = [st](const SweepInput& in, SweepStore& store) {
    std::vector<const PointOutcome*> outcomes;
    for (const auto& p : in.points) outcomes.push_back(store.outcome(p.hash));
    st->rows = rank_llm_plans(st->spec, in, outcomes);
    st->by_hash.clear();
    for (const auto& r : st->rows) {
      st->by_hash[in.points[r.index].hash] = &r;
      st->train = st->train || r.figures.train_days > 0;
      st->campaign = st->campaign || r.campaign_days > 0;
      st->priced = st->priced || r.campaign_cost > 0;
    }
    st->infeasible = store.points_infeasible();
    st->failed = store.points_failed();
  };
  hooks.report = [st](const SweepInput& in, const SweepStore& store) {
    print_search(*st, in, store.output());
  };
  hooks.list = [](const SweepInput& in) {
    parse_llm_plan_spec(in.plan, in.path);
    std::printf("%s: %lld combination(s) of the search values, %lld valid plan(s), %zu point(s)\n",
                in.search.model.c_str(), static_cast<long long>(in.search.combinations),
                static_cast<long long>(in.search.plans), in.points.size());
    print_points(in);
  };
  return hooks;
}

}  // namespace orrery
