// Capacity planning: the plan section, the price of a point's platform, the Pareto front, and
// `orrery plan` end to end.
#include "sweeps/plan.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>

#include "common/errors.h"
#include "engine/run_result_io.h"
#include "results/h5_store.h"
#include "sweeps/sweep_h5.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

using testing::make_temp_dir;
using testing::read_file;
using testing::write_file;

const char* kPlan = R"(name: plan
platform:
  preset: ethernet-cluster
  server: {gpus: 4}
workload:
  type: synthetic-dp
  layers: 8
  forward_time: 2ms
  gradient_bytes: 8MB
sweep:
  grid:
    platform.servers: [1, 2, 4]
    platform.server.nic.bandwidth: [25Gbps, 100Gbps]
  named:
    gpu:
      V100: {platform.server.gpu.model: V100}
      A100: {platform.server.gpu.model: A100, workload.forward_time: 1ms}
plan:
  target: {samples_per_s: 2500}
  samples_per_iteration: "${gpus} * 32"
  prices:
    server: 10000
    gpu: {V100: 8000, A100: 12000}
    nic: {25Gbps: 300, 100Gbps: 900}
    switch_port: {25Gbps: 100, 100Gbps: 400}
  top: 3
)";

SweepInput load(const std::string& text) {
  std::string dir = make_temp_dir("plan");
  write_file(dir + "/p.yaml", text);
  return load_sweep_input(dir + "/p.yaml", {});
}

std::string plan_error(const std::string& text) {
  try {
    SweepInput in = load(text);
    PlanSpec spec = parse_plan_spec(in.plan, in.path);
    for (const auto& p : in.points) plan_point(spec, in, p);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Plan, PricesEveryPartOfAPointsPlatform) {
  SweepInput in = load(kPlan);
  PlanSpec spec = parse_plan_spec(in.plan, in.path);
  EXPECT_EQ(spec.metric, "samples_per_s");
  EXPECT_EQ(spec.target, 2500);
  EXPECT_EQ(spec.top, 3);
  // Point 7: 2 servers, 100 Gb/s, A100 (servers outermost, then NIC, then GPU).
  ASSERT_EQ(in.points[7].params.at("gpu"), "A100");
  PointPlan p = plan_point(spec, in, in.points[7]);
  EXPECT_DOUBLE_EQ(p.cost, 2 * (10000 + 4 * 12000 + 1 * (900 + 400)));
  EXPECT_DOUBLE_EQ(p.samples_per_iteration, 2 * 4 * 32);
  EXPECT_NE(p.hardware.find("2 x 4 A100"), std::string::npos) << p.hardware;
  EXPECT_NE(p.hardware.find("100 Gb/s"), std::string::npos) << p.hardware;
}

TEST(Plan, MissingPriceNamesTheKeyAndThePoint) {
  std::string text = kPlan;
  text.replace(text.find("A100: 12000"), 11, "H100: 30000");
  std::string msg = plan_error(text);
  EXPECT_NE(msg.find("plan.prices.gpu: no price for \"A100-SXM4-40GB\""), std::string::npos) << msg;
  EXPECT_NE(msg.find("point 1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("priced: H100, V100"), std::string::npos) << msg;
  std::string nic = kPlan;
  nic.replace(nic.find("nic: {25Gbps: 300, 100Gbps: 900}"), 32, "nic: {25Gbps: 300}");
  msg = plan_error(nic);
  EXPECT_NE(msg.find("plan.prices.nic: no price for a link of 12.5 GB/s"), std::string::npos)
      << msg;
}

TEST(Plan, MalformedPlanSectionsAreRejected) {
  std::string base = std::string(kPlan).substr(0, std::string(kPlan).find("plan:\n"));
  EXPECT_NE(plan_error(base).find("plan: is required"), std::string::npos);
  EXPECT_NE(plan_error(base + "plan:\n  target: {samples_per_s: 10}\n  prices: {gpu: 1, nic: 1}\n")
                .find("samples_per_iteration: is required"),
            std::string::npos);
  EXPECT_NE(plan_error(base + "plan:\n  target: {speed: 10}\n  prices: {gpu: 1, nic: 1}\n")
                .find("unknown key \"plan.target.speed\""),
            std::string::npos);
  std::string msg =
      plan_error(base + "plan:\n  target: {iterations_per_s: 10}\n  prices: {gpu: 1}\n");
  EXPECT_NE(msg.find("plan.prices.nic: is required"), std::string::npos) << msg;
  msg = plan_error(base +
                   "plan:\n  target: {iterations_per_s: 10}\n  prices: {gpu: 1, nic: "
                   "{fast: 3}}\n");
  EXPECT_NE(msg.find("plan.prices.nic.fast: expected a bandwidth"), std::string::npos) << msg;
}

PointOutcome ok_outcome(const SweepPoint& p, double makespan) {
  RunResult r;
  r.makespan = makespan;
  return {p.index, p.hash, true, "", serialize_run_result(r), false, {}};
}

TEST(Plan, ParetoFrontAndTargetFromSimulatedTimes) {
  SweepInput in = load(kPlan);
  PlanSpec spec = parse_plan_spec(in.plan, in.path);
  spec.metric = "iterations_per_s";
  spec.target = 10;
  // Four configurations: (cost, iterations/s) = (1, 5), (2, 12), (2, 8), (3, 12).
  std::vector<PointPlan> costs(in.points.size());
  costs[0].cost = 1, costs[1].cost = 2, costs[2].cost = 2, costs[3].cost = 3;
  std::vector<PointOutcome> storage = {
      ok_outcome(in.points[0], 1.0 / 5), ok_outcome(in.points[1], 1.0 / 12),
      ok_outcome(in.points[2], 1.0 / 8), ok_outcome(in.points[3], 1.0 / 12)};
  std::vector<const PointOutcome*> outcomes(in.points.size(), nullptr);
  for (int i = 0; i < 4; ++i) outcomes[i] = &storage[i];
  PointOutcome failed{4, in.points[4].hash, false, "boom", "", false, {}};
  outcomes[4] = &failed;
  std::vector<PlanRow> rows = analyze_plan(spec, in, costs, outcomes);
  ASSERT_EQ(rows.size(), 4u);  // failed and missing points are left out
  EXPECT_TRUE(rows[0].pareto);
  EXPECT_FALSE(rows[0].meets);
  EXPECT_TRUE(rows[1].pareto);
  EXPECT_TRUE(rows[1].meets);
  EXPECT_FALSE(rows[2].pareto);  // as expensive as point 1 and slower
  EXPECT_FALSE(rows[3].pareto);  // dearer than point 1 and no faster
  EXPECT_TRUE(rows[3].meets);
  EXPECT_DOUBLE_EQ(rows[1].throughput, 12);
}

// With likely ranges (scenario/error_band.h): the throughput over the likely step times, and
// `meet: pessimistic` asks the slow end to meet the target.
TEST(Plan, LikelyRangesAndThePessimisticTarget) {
  SweepInput in = load(kPlan);
  PlanSpec spec = parse_plan_spec(in.plan, in.path);
  spec.metric = "iterations_per_s";
  spec.target = 10;
  std::vector<PointPlan> costs(in.points.size());
  costs[0].cost = 1, costs[1].cost = 2;
  // Point 0: 0.08 s predicted (12.5 it/s), likely 0.072-0.11 s: 9.09-13.9 it/s. Point 1:
  // 0.05 s (20 it/s), likely 0.045-0.075 s: 13.3-22.2 it/s. No range on point 2 (0.2 s).
  std::vector<PointOutcome> storage = {ok_outcome(in.points[0], 0.08),
                                       ok_outcome(in.points[1], 0.05),
                                       ok_outcome(in.points[2], 0.2)};
  storage[0].metrics = {{"likely.low_s", 0.072}, {"likely.high_s", 0.11}};
  storage[1].metrics = {{"likely.low_s", 0.045}, {"likely.high_s", 0.075}};
  std::vector<const PointOutcome*> outcomes(in.points.size(), nullptr);
  for (int i = 0; i < 3; ++i) outcomes[i] = &storage[i];
  std::vector<PlanRow> rows = analyze_plan(spec, in, costs, outcomes);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_TRUE(rows[0].has_range);
  EXPECT_NEAR(rows[0].likely_slow, 1 / 0.11, 1e-12);
  EXPECT_NEAR(rows[0].likely_fast, 1 / 0.072, 1e-12);
  EXPECT_TRUE(rows[0].meets);  // 12.5 >= 10 as predicted
  EXPECT_FALSE(rows[2].has_range);
  EXPECT_DOUBLE_EQ(rows[2].likely_slow, 5);
  spec.pessimistic = true;
  rows = analyze_plan(spec, in, costs, outcomes);
  EXPECT_FALSE(rows[0].meets);  // 9.09 at the slow end
  EXPECT_TRUE(rows[1].meets);   // 13.3
  // The key reads, and a wrong value names what it takes.
  std::string base = std::string(kPlan);
  EXPECT_TRUE(parse_plan_spec(load(base + "  meet: pessimistic\n").plan, "p.yaml").pessimistic);
  EXPECT_NE(plan_error(base + "  meet: worst\n").find("expected (the predicted throughput"),
            std::string::npos);
}

TEST(Plan, CommandPrintsTheCheapestAndTheFrontAndStoresThem) {
  const char* bin = std::getenv("ORRERY_BIN");
  if (!bin) GTEST_SKIP() << "ORRERY_BIN not set (run through ctest)";
  auto dir = make_temp_dir("plan");
  write_file(dir + "/p.yaml", kPlan);
  std::string cmd = std::string(bin) + " plan " + dir + "/p.yaml -o " + dir + "/p.h5 -j2 >" + dir +
                    "/out.txt 2>&1";
  int s = std::system(cmd.c_str());
  std::string out = read_file(dir + "/out.txt");
  ASSERT_TRUE(WIFEXITED(s) && WEXITSTATUS(s) == 0) << out;
  EXPECT_NE(out.find("target samples/s >= 2500"), std::string::npos) << out;
  EXPECT_NE(out.find("Cheapest meeting the target:"), std::string::npos) << out;
  EXPECT_NE(out.find("Pareto front"), std::string::npos) << out;
  LoadedResults res = read_results_h5(dir + "/p.h5");
  ASSERT_EQ(res.runs.size(), 12u);
  int pareto = 0, meets = 0;
  for (const auto& r : res.runs) {
    EXPECT_FALSE(r.params.at("plan.cost").empty());
    EXPECT_FALSE(r.params.at("plan.throughput").empty());
    pareto += r.params.at("plan.pareto") == "yes";
    meets += r.params.at("plan.meets_target") == "yes";
  }
  EXPECT_GT(pareto, 0);
  EXPECT_GT(meets, 0);
  // The cheapest configuration is always on the front.
  EXPECT_EQ(res.runs[0].params.at("plan.pareto"), "yes");
  SweepFileStatus st = read_sweep_status(dir + "/p.h5");
  EXPECT_EQ(st.attrs.at("plan_metric"), "samples_per_s");
  EXPECT_EQ(st.attrs.at("plan_target"), "2500");
}

}  // namespace
}  // namespace orrery
