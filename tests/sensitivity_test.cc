// `orrery run --sensitivity` (scenario/sensitivity.h): each uncertain input scaled alone, by
// hand on a scenario whose step is kernels only, and the command's table.
#include "scenario/sensitivity.h"

#include <gtest/gtest.h>

#include <map>

#include "scenario/scenario_run.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

constexpr const char* kOneGpu = testing::kOneGpuScenario;  // a 12.2 ms step of kernels

TEST(Sensitivity, EachInputScalesAloneByHand) {
  const std::string dir = testing::make_temp_dir("sens");
  testing::write_file(dir + "/s.yaml", kOneGpu);
  const Scenario sc = load_scenario(dir + "/s.yaml", {});
  RunOptions opt;
  opt.isolated = true;
  const double base = run_scenario(sc, opt).iteration_s;
  EXPECT_NEAR(base, 12.2e-3, 1e-9);
  // Kernels 1 / (1 + 0.13) as fast: every compute op, so the step, takes 1.13 times as long.
  Scenario slow;
  ASSERT_TRUE(scaled_input(sc, "kernels", 1 / 1.13, &slow));
  EXPECT_NEAR(run_scenario(slow, opt).iteration_s, 1.13 * base, 1e-9);
  // Links at 1.17 times their rate: every link of the generated platform.
  Scenario fast_links;
  ASSERT_TRUE(scaled_input(sc, "links", 1.17, &fast_links));
  ASSERT_EQ(fast_links.platform.topology.links.size(), sc.platform.topology.links.size());
  for (size_t i = 0; i < sc.platform.topology.links.size(); ++i)
    EXPECT_DOUBLE_EQ(fast_links.platform.topology.links[i].bandwidth,
                     1.17 * sc.platform.topology.links[i].bandwidth);
  // No kernel launches on a host stream in a synthetic step: nothing to move.
  Scenario none;
  EXPECT_FALSE(scaled_input(sc, "host", 1.25, &none));
  EXPECT_EQ(uncertain_inputs().size(), 3u);
}

// output.sensitivity: run_scenario simulates the variants and stores them as figures.
TEST(Sensitivity, RunsCarryTheVariantsAsFigures) {
  const std::string dir = testing::make_temp_dir("sens");
  testing::write_file(dir + "/s.yaml", std::string(kOneGpu) + "output: {sensitivity: true}\n");
  const Scenario sc = load_scenario(dir + "/s.yaml", {});
  ASSERT_TRUE(sc.sensitivity);
  const ScenarioRun run = run_scenario(sc, RunOptions{});
  ASSERT_EQ(run.sensitivity.size(), 4u);
  EXPECT_EQ(run.sensitivity[0].input, "kernels");
  EXPECT_EQ(run.sensitivity[0].moved_by, "+-13%");
  // 12.2 ms x (1 - 0.13) and x 1.13.
  EXPECT_NEAR(run.sensitivity[0].fast_s, 0.87 * 12.2e-3, 1e-9);
  EXPECT_NEAR(run.sensitivity[0].slow_s, 1.13 * 12.2e-3, 1e-9);
  // One GPU: the links carry nothing, the step does not move.
  EXPECT_TRUE(run.sensitivity[1].applies);
  EXPECT_NEAR(run.sensitivity[1].fast_s, 12.2e-3, 1e-9);
  EXPECT_FALSE(run.sensitivity[2].applies);  // no host stream
  EXPECT_FALSE(run.sensitivity[3].applies);  // a synthetic step has no overlap to choose
  std::map<std::string, double> m(run.metrics.begin(), run.metrics.end());
  EXPECT_NEAR(m.at("sensitivity.kernels.slow_s"), 1.13 * 12.2e-3, 1e-9);
  EXPECT_TRUE(m.count("sensitivity.links.fast_s"));
  EXPECT_FALSE(m.count("sensitivity.host.fast_s"));
  // The same scenario without the key simulates once and stores none.
  const ScenarioRun plain =
      run_scenario(load_scenario(dir + "/s.yaml", {"output.sensitivity=false"}), [] {
        RunOptions o;
        o.isolated = true;
        return o;
      }());
  EXPECT_TRUE(plain.sensitivity.empty());
  for (const auto& [name, value] : plain.metrics) EXPECT_NE(name.rfind("sensitivity.", 0), 0u);
}

// The sweep helper: every point carries its variants, the report names the input that moves
// the step most, and a file written without them runs its points again.
TEST(Sensitivity, SweepPointsCarryTheirVariants) {
  if (testing::orrery_bin().empty()) GTEST_SKIP() << "ORRERY_BIN is set by ctest";
  const std::string dir = testing::make_temp_dir("sens");
  testing::write_file(dir + "/s.yaml", std::string(kOneGpu) +
                                           "output: {sensitivity: true}\n"
                                           "sweep:\n  grid:\n    workload.layers: [2, 4]\n");
  const std::string bin = testing::orrery_bin();
  auto r = testing::run_shell(bin + " sweep " + dir + "/s.yaml -o " + dir +
                              "/a.h5 --set output.sensitivity=false 2>&1");
  ASSERT_EQ(r.status, 0) << r.output;
  r = testing::run_shell(bin + " sweep " + dir + "/s.yaml -o " + dir + "/a.h5 2>&1");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("2 run now"), std::string::npos) << r.output;
  // Read back from the file, the figures are found again: nothing runs a third time.
  r = testing::run_shell(bin + " sweep " + dir + "/s.yaml -o " + dir + "/a.h5 2>&1");
  EXPECT_NE(r.output.find("0 run now, 2 already done"), std::string::npos) << r.output;
  r = testing::run_shell(bin + " report " + dir + "/a.h5 2>&1");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("moved most by"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("kernels -13/+13%"), std::string::npos) << r.output;
  r = testing::run_shell(bin + " report " + dir + "/a.h5 --csv - -q 2>&1");
  EXPECT_NE(r.output.find("sensitivity.kernels.slow_s"), std::string::npos) << r.output;
}

TEST(Sensitivity, RunPrintsHowTheIterationMoves) {
  if (testing::orrery_bin().empty()) GTEST_SKIP() << "ORRERY_BIN is set by ctest";
  const std::string dir = testing::make_temp_dir("sens");
  testing::write_file(dir + "/s.yaml", kOneGpu);
  const auto r = testing::run_shell(testing::orrery_bin() + " run " + dir +
                                    "/s.yaml --no-timeline --sensitivity 2>&1");
  ASSERT_EQ(r.status, 0) << r.output;
  // 12.2 ms x (1 - 0.13) = 10.61 ms and x 1.13 = 13.79 ms: -13.0% to +13.0%.
  EXPECT_NE(r.output.find("kernels  +-13%   10.61 ms to 13.79 ms (-13.0% to +13.0%)"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("host     +-25%   (none in this scenario)"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("overlap  on/off  (none in this scenario)"), std::string::npos)
      << r.output;
}

TEST(Sensitivity, OverlapIsTheStepWithoutAndWithTheStacksOverlap) {
  if (testing::orrery_bin().empty()) GTEST_SKIP() << "ORRERY_BIN is set by ctest";
  // ResNet-50 data parallel on 8 GPUs: without overlap every bucket waits for the end of
  // backward, so the step is no shorter than with it; the scenario runs with it (+0.0%).
  const auto r = testing::run_shell(
      testing::orrery_bin() + " run " + testing::source_path("scenarios/resnet50-allreduce.yaml") +
      " --no-timeline --sensitivity -o " + testing::make_temp_dir("sens") + "/r.h5 2>&1");
  ASSERT_EQ(r.status, 0) << r.output;
  const size_t at = r.output.find("overlap  on/off  ");
  ASSERT_NE(at, std::string::npos) << r.output;
  EXPECT_NE(r.output.find("(+0.0% to +", at), std::string::npos) << r.output.substr(at);
}

}  // namespace
}  // namespace orrery
