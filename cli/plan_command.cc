// `orrery plan PLAN.yaml`: the sweep machinery over a platform space, priced from a price
// table; prints the cheapest configurations that meet a throughput target and the Pareto front
// of cost versus throughput (sweeps/plan.h, docs/sweeps.md).
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>

#include "cli/commands.h"
#include "cli/plan_search.h"
#include "cli/sweep_args.h"
#include "common/units.h"
#include "engine/run_result_io.h"
#include "sweeps/expression.h"
#include "sweeps/plan.h"

namespace orrery {
namespace {

struct PlanState {
  PlanSpec spec;
  std::vector<PointPlan> costs;      // by point index
  std::map<uint64_t, PlanRow> rows;  // by point hash, once the sweep is done
  std::vector<PlanRow> ordered;
};

std::string unit(const PlanSpec& spec) {
  return spec.metric == "samples_per_s" ? "samples/s" : "iterations/s";
}

// A throughput: whole numbers from 1,000 up ("12740", not "1.274e+04"), 4 digits below.
std::string rate_text(double v) {
  char t[32];
  std::snprintf(t, sizeof t, v >= 1000 ? "%.0f" : "%.4g", v);
  return t;
}

// The point's axis values (derived keys follow from them and are left out).
std::string axes_text(const SweepInput& in, const SweepPoint& p) {
  std::string s;
  for (const auto& [k, v] : p.params) {
    if (k.rfind("sweep.", 0) == 0) continue;
    bool derived = false;
    for (const auto& d : in.spec.derived) derived = derived || d.key == k;
    if (derived) continue;
    std::string value = v.size() > 24 ? v.substr(0, 21) + "..." : v;
    s += (s.empty() ? "" : "  ") + k + "=" + value;
  }
  return s;
}

void print_rows(const PlanState& st, const SweepInput& in, std::vector<const PlanRow*> rows) {
  std::printf("  %6s  %12s  %12s  %15s  %10s  %-34s  %s\n", "#", "cost", unit(st.spec).c_str(),
              "likely", "iteration", "hardware", "point");
  for (const PlanRow* r : rows) {
    const SweepPoint& p = in.points[r->index];
    char cost[32];
    std::snprintf(cost, sizeof cost, "%.0f", r->cost);
    std::string likely = "-";
    const double per_iteration =
        st.spec.metric == "samples_per_s" ? st.costs[r->index].samples_per_iteration : 1.0;
    // The throughput over the likely step times: the slow end of the range first.
    if (r->has_range) likely = rate_text(r->likely_slow) + "-" + rate_text(r->likely_fast);
    // "?": meets the target as predicted, but not at the slow end of its likely range.
    const bool may_miss = r->meets && r->likely_slow < st.spec.target;
    std::printf("%s %6lld  %12s  %12s  %15s  %10s  %-34s  %s\n", may_miss ? "?" : " ",
                static_cast<long long>(r->index), cost, rate_text(r->throughput).c_str(),
                likely.c_str(), format_time(per_iteration / r->throughput).c_str(),
                st.costs[r->index].hardware.c_str(), axes_text(in, p).c_str());
  }
}

void print_plan(const PlanState& st, const SweepInput& in) {
  std::vector<const PlanRow*> meeting, front;
  for (const auto& r : st.ordered) {
    if (r.meets) meeting.push_back(&r);
    if (r.pareto) front.push_back(&r);
  }
  auto by_cost = [](const PlanRow* a, const PlanRow* b) {
    return a->cost != b->cost ? a->cost < b->cost : a->throughput > b->throughput;
  };
  std::sort(meeting.begin(), meeting.end(), by_cost);
  std::sort(front.begin(), front.end(), by_cost);
  std::printf("\nPlan       target %s >= %s%s; %zu distinct configuration(s) simulated\n",
              unit(st.spec).c_str(), format_number(st.spec.target).c_str(),
              st.spec.pessimistic ? " at the slow end of each likely range" : "",
              st.ordered.size());
  if (meeting.empty()) {
    const PlanRow* best = nullptr;
    for (const auto& r : st.ordered)
      if (!best || r.throughput > best->throughput) best = &r;
    std::printf("\nNo configuration meets the target");
    if (best)
      std::printf(" (the fastest reaches %s %s at cost %.0f)", rate_text(best->throughput).c_str(),
                  unit(st.spec).c_str(), best->cost);
    std::printf(".\n");
  } else {
    if (meeting.size() > static_cast<size_t>(st.spec.top)) meeting.resize(st.spec.top);
    std::printf("\nCheapest meeting the target:\n");
    print_rows(st, in, meeting);
  }
  std::printf("\nPareto front (no other configuration is as cheap and as fast):\n");
  print_rows(st, in, front);
  if (std::any_of(st.ordered.begin(), st.ordered.end(),
                  [](const PlanRow& r) { return r.has_range; }))
    std::printf(
        "\nlikely: the throughput over the likely step times (the validated runs most like the "
        "point, orrery accuracy); ? marks a point that meets the target as predicted but not at "
        "the slow end of its range.\n");
  std::printf("\n");
}

SweepHooks plan_hooks() {
  auto st = std::make_shared<PlanState>();
  SweepHooks hooks;
  hooks.prepare = [st](const SweepInput& in, SweepStore& store) {
    st->spec = parse_plan_spec(in.plan, in.path);
    for (const auto& p : in.points) st->costs.push_back(plan_point(st->spec, in, p));
    store.file_attrs()["plan_metric"] = st->spec.metric;
    store.file_attrs()["plan_target"] = format_number(st->spec.target);
    store.set_decorator(
        [st](const SweepPoint& p, const PointOutcome*, std::map<std::string, std::string>* params) {
          (*params)[kParamCost] = format_number(st->costs[p.index].cost);
          auto it = st->rows.find(p.hash);
          if (it == st->rows.end()) return;
          (*params)[kParamThroughput] = format_number(it->second.throughput);
          (*params)[kParamMeets] = it->second.meets ? "yes" : "no";
          (*params)[kParamPareto] = it->second.pareto ? "yes" : "no";
        });
  };
  hooks.conclude = [st](const SweepInput& in, SweepStore& store) {
    std::vector<const PointOutcome*> outcomes;
    for (const auto& p : in.points) outcomes.push_back(store.outcome(p.hash));
    st->ordered = analyze_plan(st->spec, in, st->costs, outcomes);
    for (const auto& r : st->ordered) st->rows[in.points[r.index].hash] = r;
  };
  hooks.report = [st](const SweepInput& in, const SweepStore&) { print_plan(*st, in); };
  hooks.list = [](const SweepInput& in) {
    PlanSpec spec = parse_plan_spec(in.plan, in.path);
    std::printf("%s: %zu point(s), priced\n", in.name.c_str(), in.points.size());
    for (const auto& p : in.points) {
      PointPlan pp = plan_point(spec, in, p);
      std::printf("%6lld  %12.0f  %-34s  %s\n", static_cast<long long>(p.index), pp.cost,
                  pp.hardware.c_str(), axes_text(in, p).c_str());
    }
  };
  return hooks;
}

// The capacity plan (a platform space and a price table) or, with plan.search, the parallel
// plans of a language model: which one is known once the input is loaded.
SweepHooks plan_hooks_for_input() {
  const SweepHooks capacity = plan_hooks(), search = plan_search_hooks();
  auto pick = [capacity, search](const SweepInput& in) -> const SweepHooks& {
    return in.search.active ? search : capacity;
  };
  SweepHooks hooks;
  hooks.prepare = [pick](const SweepInput& in, SweepStore& s) { pick(in).prepare(in, s); };
  hooks.conclude = [pick](const SweepInput& in, SweepStore& s) { pick(in).conclude(in, s); };
  hooks.report = [pick](const SweepInput& in, const SweepStore& s) { pick(in).report(in, s); };
  hooks.list = [pick](const SweepInput& in) { pick(in).list(in); };
  return hooks;
}

}  // namespace

void register_plan_commands(CLI::App& app, CommandList& out) {
  static SweepSessionArgs args;
  auto* plan = app.add_subcommand(
      "plan",
      "Capacity planning: the cheapest platforms that meet a throughput target and the "
      "cost/throughput Pareto front; or, with plan.search, the best parallel plans of a language "
      "model");
  add_sweep_options(plan, args, true);
  plan->footer(
      "A platform plan (plan.target, plan.prices): every candidate is priced before anything "
      "runs, then simulated like a sweep point; prints the cheapest candidates that meet the "
      "target and the cost/throughput Pareto front, and stores plan.cost, plan.throughput, "
      "plan.meets_target and plan.pareto with every candidate (docs/sweeps.md, \"Capacity "
      "planning\"). A plan search (plan.search with tp, pp, micro_batch, zero, recompute, "
      "schedule, gpus lists; plan.rank_by time|cost, plan.prices.gpu_hour, plan.top): every "
      "valid parallel plan of the llm workload becomes a point, plans that do not fit memory are "
      "recorded as infeasible without simulating, the rest are ranked with their breakdown "
      "(docs/strategies.md, \"Searching plans\").");
  out.push_back({plan, [] {
                   args.created_by = current_command_line();
                   return run_sweep_session(args, plan_hooks_for_input());
                 }});
}

}  // namespace orrery
