// A scenario's `campaign` section (scenario/campaign_run.h): read, run around the step and
// stored as figures; a power cap that slows the step; bad sections named; the Campaign block of
// `orrery run`, and campaign figures found again in a resumed sweep.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "campaigns/campaign.h"
#include "common/errors.h"
#include "scenario/scenario.h"
#include "scenario/scenario_run.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

constexpr const char* kOneGpu = testing::kOneGpuScenario;  // a 12.2 ms step of kernels

const char* const kCampaign = R"(campaign:
  steps: 100000000
  reliability: {name: test, source: a test, causes: [{id: x, name: X, unit: gpu, per_unit_hour: 0.01}]}
  restart: 10min
  spares: unlimited
  checkpoint: {bytes: 10GB}
  prices: {gpu_hour: 2, kwh: 0.1}
)";

std::map<std::string, double> metrics_of(const ScenarioRun& run) {
  return {run.metrics.begin(), run.metrics.end()};
}

Scenario load(const std::string& text, const std::vector<std::string>& sets = {}) {
  const std::string dir = testing::make_temp_dir("campaign");
  testing::write_file(dir + "/s.yaml", text);
  return load_scenario(dir + "/s.yaml", sets);
}

TEST(CampaignScenario, TheStepsFiguresGoIntoTheCampaign) {
  const Scenario sc = load(std::string(kOneGpu) + kCampaign);
  ASSERT_TRUE(sc.campaign);
  RunOptions opt;
  opt.isolated = true;
  const ScenarioRun run = run_scenario(sc, opt);
  ASSERT_TRUE(run.campaign);
  const CampaignFigures& f = *run.campaign;
  EXPECT_DOUBLE_EQ(f.steps, 1e8);
  EXPECT_NEAR(f.work_s, 1e8 * 12.2e-3, 1e-3);
  // 10 GB from one server: 20 GB/s out, 40 GB/s back (the default storage's per-server rates);
  // the pause is the write and the default 3 s of overhead.
  EXPECT_NEAR(f.checkpoint.write_s, 0.5, 1e-12);
  EXPECT_NEAR(f.checkpoint.blocking_s, 3.5, 1e-12);
  EXPECT_NEAR(f.checkpoint.read_s, 0.25, 1e-12);
  EXPECT_NEAR(f.restart_s, 600.25, 1e-9);
  // The campaign is campaigns/'s model of exactly these inputs.
  CampaignModel m;
  m.causes = {{"x", "X", false, 0.01}};
  m.work_s = f.work_s;
  m.checkpoint_s = 3.5;
  m.restart_s = 600.25;
  // Daly's interval, to whole steps.
  m.interval_s = std::round(choose_interval(m, IntervalRule::kDaly) / 12.2e-3) * 12.2e-3;
  EXPECT_NEAR(f.interval_s, m.interval_s, 1e-9);
  const CampaignExpectation e = expect_campaign(m);
  EXPECT_NEAR(f.expected.wall_s, e.wall_s, 1e-6);
  // Power by hand: the step is all compute-bound kernels, so the GPU draws its 300 W; the server
  // 0.3 / 0.7 x 300 W besides; one Ethernet port on one switch: 2 x 9 W + 8.5 W; PUE 1.1.
  EXPECT_NEAR(f.power.gpu_train_w, 300, 1e-6);
  const double it = 300 + 0.3 / 0.7 * 300 + 26.5;
  EXPECT_NEAR(f.power.facility_train_w, 1.1 * it, 1e-6);
  const double paused = 1.1 * (60 + 0.3 / 0.7 * 300 + 26.5);
  EXPECT_NEAR(f.energy_j,
              1.1 * it * (f.work_s + e.lost_s) + paused * (e.checkpoint_s + e.restart_s),
              1e-3 * f.energy_j);
  EXPECT_NEAR(f.gpu_cost, 2 * e.wall_s / 3600, 1e-6);
  EXPECT_NEAR(f.energy_cost, 0.1 * f.energy_j / 3.6e6, 1e-6);
  const auto mm = metrics_of(run);
  EXPECT_NEAR(mm.at("campaign.wall_days"), e.wall_s / 86400, 1e-9);
  EXPECT_NEAR(mm.at("campaign.interruptions.x"), e.interruptions, 1e-9);
  EXPECT_NEAR(mm.at("campaign.step_energy_kwh"), 1.1 * it * 12.2e-3 / 3.6e6, 1e-12);
  EXPECT_EQ(mm.count("campaign.mc.wall_days"), 0u);
}

// A duration: how far the campaign gets in it.
TEST(CampaignScenario, ADurationGivesTheStepsThatFit) {
  const Scenario sc =
      load(std::string(kOneGpu) + kCampaign, {"campaign.steps=null", "campaign.duration=30d"});
  RunOptions opt;
  opt.isolated = true;
  const CampaignFigures f = *run_scenario(sc, opt).campaign;
  EXPECT_NEAR(f.expected.wall_s, 30 * 86400, 1);
  EXPECT_NEAR(f.steps, f.work_s / 12.2e-3, 1e-3);
  EXPECT_GT(f.expected.goodput, 0.9);
}

// A 200 W cap on a 300 W V100: the draw above idle (240 W) must fall to 140 W, so the clock to
// (140 / 240)^(1/3) and the step, all kernels, to 12.2 ms over that.
TEST(CampaignScenario, APowerCapRunsTheStepAtTheCappedClock) {
  const Scenario sc = load(std::string(kOneGpu) + kCampaign, {"campaign.power.cap=200W"});
  const ScenarioRun run = run_scenario(sc, RunOptions{});
  const double clock = std::cbrt(140.0 / 240);
  ASSERT_TRUE(run.campaign);
  EXPECT_NEAR(run.campaign->clock, clock, 1e-12);
  EXPECT_NEAR(run.campaign->step_s, 12.2e-3 / clock, 1e-9);
  EXPECT_NEAR(run.campaign->power.gpu_train_w, 200, 1e-9);
  EXPECT_NEAR(run.iteration_s, 12.2e-3, 1e-9);  // the run itself stays uncapped
}

TEST(CampaignScenario, BadSectionsAreNamed) {
  auto error = [](const std::string& text, const std::vector<std::string>& sets = {}) {
    try {
      const Scenario sc = load(text, sets);
      RunOptions opt;
      opt.isolated = true;
      run_scenario(sc, opt);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const std::string base = std::string(kOneGpu) + kCampaign;
  EXPECT_NE(error(base, {"campaign.tokens=15T"}).find("give one target"), std::string::npos);
  EXPECT_NE(
      error(base, {"campaign.steps=null", "campaign.tokens=15T"}).find("not a language model"),
      std::string::npos);
  EXPECT_NE(error(base, {"campaign.reliability=llama-3"}).find("shipped: llama3-2024"),
            std::string::npos);
  EXPECT_NE(error(base, {"campaign.power.pue=0.5"}).find("pue"), std::string::npos);
  EXPECT_NE(error(base, {"campaign.checkpoint.interval=hourly"}).find("interval"),
            std::string::npos);
  EXPECT_NE(error(base, {"campaign.checkpoint.bytes=null"}).find("checkpoint.bytes"),
            std::string::npos);
  EXPECT_NE(error(base, {"campaign.power.cap=50W"}).find("idle"), std::string::npos);
  EXPECT_NE(error(base, {"campaign.spare=3"}).find("spare"), std::string::npos);
}

// A language model's checkpoint: every parameter's bf16 weights and fp32 master, momentum and
// variance (2 + 12 bytes), and its token target in steps.
TEST(CampaignScenario, ALanguageModelsCheckpointAndTokens) {
  const Scenario sc = load(R"(name: llm
platform: {preset: dgx-h100, servers: 1}
workload: {type: llm, model: llama2_7b, seq_len: 1024, global_batch: 64, micro_batch: 1}
strategy: {tp: 1, pp: 1, zero: 1}
campaign: {tokens: 100B}
)");
  ASSERT_TRUE(sc.llm);
  EXPECT_NEAR(sc.llm->checkpoint_bytes, 14 * sc.llm->parameters, 1);
  RunOptions opt;
  opt.isolated = true;
  const CampaignFigures f = *run_scenario(sc, opt).campaign;
  EXPECT_DOUBLE_EQ(f.steps, std::ceil(100e9 / (64 * 1024)));
  EXPECT_NEAR(f.tokens, f.steps * 64 * 1024, 1);
  EXPECT_DOUBLE_EQ(f.checkpoint_bytes, sc.llm->checkpoint_bytes);
  // ZeRO-1 shards the optimizer states over the 8 data-parallel GPUs: each copies an eighth to
  // its host. Without ZeRO every replica holds them whole and one GPU (TP 1, PP 1) writes all.
  const double host = 64e9;
  auto pause = [&](const char* zero) {
    const Scenario z = load(R"(name: llm
platform: {preset: dgx-h100, servers: 1}
workload: {type: llm, model: llama2_7b, seq_len: 1024, global_batch: 64, micro_batch: 1}
strategy: {tp: 1, pp: 1}
campaign: {tokens: 100B, checkpoint: {async: true, overhead: 0s, host_copy: 64GB/s}}
)",
                            {std::string("strategy.zero=") + zero});
    RunOptions o;
    o.isolated = true;
    return run_scenario(z, o).campaign->checkpoint.blocking_s;
  };
  EXPECT_NEAR(pause("1"), sc.llm->checkpoint_bytes / 8 / host, 1e-9);
  EXPECT_NEAR(pause("0"), sc.llm->checkpoint_bytes / host, 1e-9);
}

TEST(CampaignScenario, RunPrintsTheCampaignAndSweepsKeepIt) {
  if (testing::orrery_bin().empty()) GTEST_SKIP() << "ORRERY_BIN is set by ctest";
  const std::string dir = testing::make_temp_dir("campaign");
  testing::write_file(dir + "/s.yaml",
                      std::string(kOneGpu) + kCampaign + "  monte_carlo: {runs: 50, seed: 3}\n");
  const std::string bin = testing::orrery_bin();
  auto r = testing::run_shell(bin + " run " + dir + "/s.yaml --no-timeline 2>&1");
  ASSERT_EQ(r.status, 0) << r.output;
  for (const char* line :
       {"Campaign        100,000,000 steps of 12.2 ms", "interrupted", "checkpoints   every",
        "restarts", "lost work", "wall time", "Monte Carlo   50 campaigns (seed 3)",
        "power         300 W per GPU", "energy", "cost"})
    EXPECT_NE(r.output.find(line), std::string::npos) << line << "\n" << r.output;
  testing::write_file(dir + "/w.yaml", std::string(kOneGpu) + kCampaign +
                                           "sweep:\n  grid:\n    workload.layers: [2, 4]\n");
  r = testing::run_shell(bin + " sweep " + dir + "/w.yaml -o " + dir + "/w.h5 2>&1");
  ASSERT_EQ(r.status, 0) << r.output;
  r = testing::run_shell(bin + " sweep " + dir + "/w.yaml -o " + dir + "/w.h5 2>&1");
  EXPECT_NE(r.output.find("0 run now, 2 already done"), std::string::npos) << r.output;
  r = testing::run_shell(bin + " report " + dir + "/w.h5 --csv - -q 2>&1");
  EXPECT_NE(r.output.find("campaign.wall_days"), std::string::npos) << r.output;
  // The table: one column for the campaign, not its two dozen figures.
  r = testing::run_shell(bin + " report " + dir + "/w.h5 2>&1");
  EXPECT_NE(r.output.find(" d at "), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("campaign.goodput"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace orrery
