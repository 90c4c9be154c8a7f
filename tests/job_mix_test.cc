// Job mixes (scenario/job_mix.h), the cluster's figures of a shared run
// (scenario/job_report.h cluster_figures) and sweeps of several-job scenarios: draws checked by
// counting, figures by hand from op times.
#include "scenario/job_mix.h"

#include <gtest/gtest.h>

#include <map>

#include "common/errors.h"
#include "common/units.h"
#include "engine/replay.h"
#include "results/h5_store.h"
#include "scenario/job_report.h"
#include "scenario/scenario.h"
#include "test_util.h"

namespace orrery {
namespace {

std::vector<JobEntryNode> draw(const std::string& yaml, int gpus) {
  return draw_job_mix(YamlMap(YAML::Load(yaml), "mix.yaml", "job_mix"), gpus);
}

std::string type_of(const JobEntryNode& e) {
  const std::string name = e.node["name"].Scalar();
  return name.substr(0, name.rfind('-'));
}

constexpr const char* kWorkload = "workload: {type: synthetic-dp}";

TEST(JobMix, DrawsUntilTheGpusAreAskedForAndKeepsTheFirstJobThatDoesNotFit) {
  // 1-GPU jobs on 32 GPUs: exactly 32, the last one filling the cluster.
  auto ones = draw(std::string("{types: [{name: a, gpus: 1, ") + kWorkload + "}]}", 32);
  ASSERT_EQ(ones.size(), 32u);
  EXPECT_EQ(ones[0].node["name"].Scalar(), "a-0");
  EXPECT_EQ(ones[31].node["name"].Scalar(), "a-31");
  // load 0.5: the GPUs asked for reach 16.
  EXPECT_EQ(
      draw(std::string("{load: 0.5, types: [{name: a, gpus: 1, ") + kWorkload + "}]}", 32).size(),
      16u);
  // 12-GPU jobs on 32: two fit (24), the third is drawn and waits for 12 with 8 free.
  auto twelves = draw(std::string("{types: [{name: b, gpus: 12, ") + kWorkload + "}]}", 32);
  ASSERT_EQ(twelves.size(), 3u);
  for (const auto& e : twelves) EXPECT_EQ(e.node["gpus"].as<int>(), 12);
}

TEST(JobMix, TypesAreDrawnByShareAndTheSeedFixesTheDraw) {
  const std::string mix = std::string("{seed: 7, types: [{name: a, share: 3, gpus: 1, ") +
                          kWorkload + "}, {name: b, share: 1, gpus: 1, " + kWorkload +
                          "}, {name: never, share: 0, gpus: 1, " + kWorkload + "}]}";
  const auto jobs = draw(mix, 400);
  ASSERT_EQ(jobs.size(), 400u);
  std::map<std::string, int> count;
  for (const auto& e : jobs) ++count[type_of(e)];
  // 3:1 of 400: 300 expected, binomial standard deviation sqrt(400 x 0.75 x 0.25) = 8.7; this
  // seed's draw is fixed, and within four of them.
  EXPECT_NEAR(count["a"], 300, 35);
  EXPECT_EQ(count["a"] + count["b"], 400);
  EXPECT_EQ(count.count("never"), 0u);
  // The same seed, the same jobs; another seed, another order.
  const auto again = draw(mix, 400);
  const auto other = draw(std::string(mix).replace(mix.find("seed: 7"), 7, "seed: 8"), 400);
  std::string a, b, c;
  for (size_t i = 0; i < jobs.size(); ++i) {
    a += jobs[i].node["name"].Scalar();
    b += again[i].node["name"].Scalar();
    c += other[i].node["name"].Scalar();
  }
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

TEST(JobMix, SizesIterationsAndStartsAreDrawnFromTheirRanges) {
  const auto jobs =
      draw(std::string("{types: [{name: a, gpus: [2, 4], iterations: [2, 4], start: [0, 10ms], "
                       "placement: server, ") +
               kWorkload + "}]}",
           1000);
  std::map<int, int> sizes, iterations;
  for (const auto& e : jobs) {
    ++sizes[e.node["gpus"].as<int>()];
    ++iterations[e.node["iterations"].as<int>()];
    EXPECT_EQ(e.node["placement"].Scalar(), "server");
    if (e.node["start"]) {
      double t = 0;
      ASSERT_TRUE(parse_time(e.node["start"].Scalar(), &t)) << e.node["start"].Scalar();
      EXPECT_TRUE(t >= 0 && t <= 10e-3) << t;
    }
  }
  EXPECT_EQ(sizes.size(), 2u);
  EXPECT_GT(sizes[2], 0);
  EXPECT_GT(sizes[4], 0);
  EXPECT_EQ(iterations.size(), 3u);  // 2, 3 and 4 all drawn
  EXPECT_EQ(iterations.begin()->first, 2);
  EXPECT_EQ(iterations.rbegin()->first, 4);
}

TEST(JobMix, ErrorsNameTheTypeAndKey) {
  auto error = [](const std::string& yaml) {
    return testing::input_error_of([&] { draw(yaml, 16); });
  };
  EXPECT_NE(error("{types: []}").find("expected a list of job types"), std::string::npos);
  EXPECT_NE(error(std::string("{types: [{name: a, ") + kWorkload + "}]}").find("gpus: is required"),
            std::string::npos);
  EXPECT_NE(error(std::string("{types: [{name: a, gpus: 32, ") + kWorkload + "}]}")
                .find("more than the platform's 16"),
            std::string::npos);
  EXPECT_NE(
      error(std::string("{types: [{name: a, gpus: 1, iterations: [4, 2], ") + kWorkload + "}]}")
          .find("min is above its max"),
      std::string::npos);
  EXPECT_NE(error("{types: [{name: a, gpus: 1}]}").find("workload: is required"),
            std::string::npos);
  EXPECT_NE(error(std::string("{types: [{name: a, gpus: 1, colour: red, ") + kWorkload + "}]}")
                .find("colour"),
            std::string::npos);
  EXPECT_NE(error(std::string("{types: [{name: a, gpus: 1, ") + kWorkload +
                  "}, {name: a, gpus: 2, " + kWorkload + "}]}")
                .find("\"a\" names two types"),
            std::string::npos);
  EXPECT_NE(error(std::string("{types: [{name: a, share: 0, gpus: 1, ") + kWorkload + "}]}")
                .find("every share is 0"),
            std::string::npos);
  EXPECT_NE(error(std::string("{placement: tight, types: [{name: a, gpus: 1, ") + kWorkload + "}]}")
                .find("got \"tight\""),
            std::string::npos);
}

// Two data-parallel jobs on one 8-GPU server, each on 2 GPUs and 2 iterations: a, 2 layers of
// 10 ms forward and 20 ms backward (60 ms a step); b, of 5 and 10 ms (30 ms). Gradients of
// 1 KiB and no update, so communication takes microseconds.
constexpr const char* kTwoJobs = R"(
platform: {preset: ethernet-cluster, servers: 1}
jobs:
  - {name: a, gpus: 2, iterations: 2, workload: {type: synthetic-dp, layers: 2, forward_time: 10ms,
     gradient_bytes: 1KiB, update_time: 0s, protocol: ideal}}
  - {name: b, gpus: 2, iterations: 2, workload: {type: synthetic-dp, layers: 2, forward_time: 5ms,
     gradient_bytes: 1KiB, update_time: 0s, protocol: ideal}}
)";

TEST(ClusterFigures, ThroughputSlowdownAndUtilizationByHand) {
  const std::string dir = testing::make_temp_dir("job_mix");
  testing::write_file(dir + "/s.yaml", kTwoJobs);
  const Scenario sc = load_scenario(dir + "/s.yaml");
  ReplayOptions o;
  o.record_timeline = true;
  const RunResult shared = replay_isolated(sc.platform, sc.graph, o);
  const ClusterFigures f =
      cluster_figures(sc, shared, job_outcomes(sc, shared, replay_jobs_alone(sc, o)));
  EXPECT_EQ(f.placed, 2);
  EXPECT_EQ(f.gpus, 8);
  EXPECT_EQ(f.gpus_used, 4);
  // 2 GPUs / 60 ms + 2 GPUs / 30 ms = 100 GPU-batches/s; 1/0.06 + 1/0.03 = 50 iterations/s.
  EXPECT_NEAR(f.gpu_batches_per_s, 100.0, 0.1);
  EXPECT_NEAR(f.iterations_per_s, 50.0, 0.05);
  // Own GPUs, a few microseconds of shared PCIe: no slowdown to speak of.
  EXPECT_NEAR(f.mean_slowdown, 1.0, 1e-3);
  // a keeps 2 GPUs busy for 120 ms, b 2 for 60 ms, in a run of 120 ms on 8 GPUs:
  // (240 + 120) / 960 = 0.375.
  EXPECT_NEAR(f.gpu_utilization, 0.375, 1e-3);
  // b's best GPUs (packed on an empty server: 0 and 1) are a's; on one server of like GPUs and
  // PCIe links they are as good as its own 2 and 3.
  EXPECT_NEAR(f.mean_placement_cost, 1.0, 1e-9);
  const auto metrics = cluster_metrics(f);
  ASSERT_EQ(metrics.size(), 12u);
  for (const auto& [name, value] : metrics) EXPECT_EQ(name.rfind("jobs.", 0), 0u) << name;
}

TEST(ClusterFigures, ASweepOfAJobsScenarioStoresThemPerPointAndKeepsThemOnResume) {
  if (testing::orrery_bin().empty()) GTEST_SKIP() << "ORRERY_BIN not set (run through ctest)";
  const std::string dir = testing::make_temp_dir("job_mix");
  // b (packed on GPUs 2 and 3) at full speed, 30 ms a step as above, and with one GPU at half
  // speed, which gates its all-reduces: 60 ms.
  testing::write_file(dir + "/s.yaml", std::string(kTwoJobs) + R"(
sweep:
  grid:
    gpu_speeds.n0_gpu2: [1, 0.5]
)");
  const std::string cmd =
      testing::orrery_bin() + " sweep " + dir + "/s.yaml -o " + dir + "/out.h5 -j 2 2>&1";
  const testing::ShellResult r = testing::run_shell(cmd);
  ASSERT_EQ(r.status, 0) << r.output;
  auto check = [&] {
    const LoadedResults res = read_results_h5(dir + "/out.h5");
    ASSERT_EQ(res.runs.size(), 2u);
    std::map<std::string, double> batches;
    for (const auto& run : res.runs) {
      ASSERT_EQ(run.params.at("sweep.status"), "ok") << run.params.at("sweep.error");
      batches[run.params.at("gpu_speeds.n0_gpu2")] =
          std::stod(run.params.at("jobs.gpu_batches_per_s"));
    }
    EXPECT_NEAR(batches.at("1"), 2 / 0.06 + 2 / 0.03, 0.1);
    EXPECT_NEAR(batches.at("0.5"), 2 / 0.06 + 2 / 0.06, 0.1);
  };
  check();
  // One point looked at closely: its file has the job table, and the same figures.
  const testing::ShellResult point = testing::run_shell(
      testing::orrery_bin() + " sweep " + dir + "/s.yaml --point 1 -q -o " + dir + "/p1.h5 2>&1");
  ASSERT_EQ(point.status, 0) << point.output;
  const LoadedResults p1 = read_results_h5(dir + "/p1.h5");
  ASSERT_EQ(p1.runs.size(), 1u);
  EXPECT_EQ(p1.meta.jobs.size(), 2u);
  EXPECT_NEAR(std::stod(p1.runs[0].params.at("jobs.gpu_batches_per_s")), 2 / 0.06 + 2 / 0.06, 0.1);
  // Run again: nothing left to run, and the figures are read back, not lost.
  const testing::ShellResult again = testing::run_shell(cmd);
  ASSERT_EQ(again.status, 0) << again.output;
  EXPECT_NE(again.output.find("0 run now"), std::string::npos) << again.output;
  check();
}

TEST(JobMix, AScenarioDrawsItsJobsAndPlacesThem) {
  const std::string dir = testing::make_temp_dir("job_mix");
  testing::write_file(dir + "/s.yaml", R"(
platform: {preset: ethernet-cluster, servers: 2}
job_mix:
  seed: 3
  types:
    - {name: one, share: 1, gpus: 1, workload: {type: synthetic-dp, layers: 2}}
    - {name: six, share: 1, gpus: 6, placement: server, workload: {type: synthetic-dp, layers: 2}}
)");
  const Scenario sc = load_scenario(dir + "/s.yaml");
  ASSERT_TRUE(sc.jobs);
  int asked = 0;
  for (const ScenarioJob& j : sc.jobs->jobs) {
    asked += static_cast<int>(j.gpus.size());
    if (j.name.rfind("six-", 0) == 0) {
      // placement: server keeps all six on one server.
      const std::string server = j.gpus[0].substr(0, j.gpus[0].find('_'));
      for (const std::string& g : j.gpus) EXPECT_EQ(g.rfind(server + "_", 0), 0u) << j.name;
    }
  }
  EXPECT_EQ(asked + sc.jobs->free_gpus, 16);
  EXPECT_FALSE(sc.jobs->jobs.empty());
  testing::write_file(dir + "/both.yaml", R"(
platform: {preset: ethernet-cluster, servers: 1}
jobs: [{gpus: 1, workload: {type: synthetic-dp}}]
job_mix: {types: [{gpus: 1, workload: {type: synthetic-dp}}]}
)");
  EXPECT_NE(testing::input_error_of([&] {
              load_scenario(dir + "/both.yaml");
            }).find("either a list of jobs or a job mix"),
            std::string::npos);
}

}  // namespace
}  // namespace orrery
