// campaigns/: the expectation formulas by hand (Young's and Daly's intervals, Daly's expected
// wall time, checkpoint costs, power), the Llama 3 reliability data read back as its own
// snapshot, and the Monte-Carlo mode against the expectation within its confidence interval.
#include "campaigns/campaign.h"

#include <gtest/gtest.h>

#include <cmath>

#include "campaigns/checkpoint.h"
#include "campaigns/power.h"
#include "campaigns/reliability.h"
#include "common/errors.h"
#include "common/yaml_reader.h"

namespace orrery {
namespace {

constexpr double kMin = 60, kHour = 3600;

// Daly's paper gives its optimum in three figure captions, all with a 5-minute dump: 117 min at
// a 24 h MTBF, 57 min at 6 h and 9.1 min at 15 min.
TEST(Checkpoint, YoungAndDalyIntervalsByHand) {
  EXPECT_NEAR(young_interval(5 * kMin, 24 * kHour), std::sqrt(2.0 * 5 * 1440) * kMin, 1e-9);
  EXPECT_NEAR(daly_interval(5 * kMin, 24 * kHour) / kMin, 117, 0.5);
  EXPECT_NEAR(daly_interval(5 * kMin, 6 * kHour) / kMin, 57, 0.5);
  EXPECT_NEAR(daly_interval(5 * kMin, 15 * kMin) / kMin, 9.1, 0.05);
  // A dump longer than twice the MTBF: checkpoint once per MTBF.
  EXPECT_DOUBLE_EQ(daly_interval(3 * kHour, kHour), kHour);
}

TEST(Checkpoint, WriteReadAndPauseByHand) {
  CheckpointPlan p;
  p.bytes = 1e12;  // 1 TB over 10 servers of 8 GPUs
  p.nodes = 10;
  p.gpus_per_node = 8;
  p.host_copy_bw = 25e9;
  Storage s{100e9, 200e9, 20e9, 40e9};
  CheckpointCost c = checkpoint_cost(p, s);
  // 1 TB at 100 GB/s (10 s) against 100 GB per server at 20 GB/s (5 s): the system decides.
  EXPECT_DOUBLE_EQ(c.write_s, 10);
  EXPECT_DOUBLE_EQ(c.read_s, 5);
  EXPECT_DOUBLE_EQ(c.blocking_s, 10);
  // One server's own rate decides when the system is faster: 100 GB at 20 GB/s.
  s.write_bw = 10e12;
  EXPECT_DOUBLE_EQ(checkpoint_cost(p, s).write_s, 5);
  // Asynchronous: the pause is one GPU's 12.5 GB over 25 GB/s.
  p.async = true;
  c = checkpoint_cost(p, s);
  EXPECT_DOUBLE_EQ(c.blocking_s, 0.5);
  EXPECT_DOUBLE_EQ(c.write_s, 5);
  // A fixed overhead adds to the pause, not to the write.
  p.overhead_s = 2;
  EXPECT_DOUBLE_EQ(checkpoint_cost(p, s).blocking_s, 2.5);
  EXPECT_DOUBLE_EQ(checkpoint_cost(p, s).write_s, 5);
}

CampaignModel one_cause(double per_hour, bool hardware = false) {
  CampaignModel m;
  m.causes = {{"x", "X", hardware, per_hour}};
  return m;
}

TEST(Campaign, DalysExpectedWallTimeByHand) {
  // 10 h of work in 1 h intervals, 36 s checkpoints, 6 min restarts, one failure per 10 h.
  CampaignModel m = one_cause(0.1);
  m.work_s = 10 * kHour;
  m.interval_s = kHour;
  m.checkpoint_s = 36;
  m.restart_s = 6 * kMin;
  const double lambda = 0.1 / kHour, s = kHour + 36;
  const double per_segment = std::expm1(lambda * s) / lambda / std::exp(-lambda * m.restart_s);
  const CampaignExpectation e = expect_campaign(m);
  EXPECT_NEAR(e.wall_s, 10 * per_segment, 1e-6);
  EXPECT_DOUBLE_EQ(e.checkpoints, 10);
  EXPECT_DOUBLE_EQ(e.checkpoint_s, 360);
  // Failures: e^{lambda s} - 1 per segment during work, 1/q times that with the restarts'.
  EXPECT_NEAR(e.interruptions, 10 * std::expm1(lambda * s) / std::exp(-lambda * m.restart_s), 1e-9);
  EXPECT_NEAR(e.wall_s, m.work_s + e.checkpoint_s + e.restart_s + e.lost_s, 1e-6);
  EXPECT_NEAR(e.goodput, m.work_s / e.wall_s, 1e-12);
  EXPECT_NEAR(e.mtbf_s, 10 * kHour, 1e-9);
  // First order (Young's reasoning, Kokolis et al.'s expected ETTR): each failure costs a restart
  // and half an interval, each interval a checkpoint. Within a percent here.
  const double first_order =
      (1 - lambda * (m.restart_s + (m.interval_s + m.checkpoint_s) / 2)) / (1 + 36.0 / kHour);
  EXPECT_NEAR(e.goodput, first_order, 0.01);
}

TEST(Campaign, WithoutFailuresTheWallIsWorkAndCheckpoints) {
  CampaignModel m = one_cause(0);
  m.work_s = 2.5 * kHour;  // two whole intervals and half of one: three checkpoints
  m.interval_s = kHour;
  m.checkpoint_s = 10;
  const CampaignExpectation e = expect_campaign(m);
  EXPECT_DOUBLE_EQ(e.wall_s, 2.5 * kHour + 30);
  EXPECT_DOUBLE_EQ(e.interruptions, 0);
  EXPECT_DOUBLE_EQ(choose_interval(m, IntervalRule::kDaly), m.work_s);  // never fails: one
}

TEST(Campaign, OptimalIntervalIsNearDalysAndNoWorse) {
  CampaignModel m = one_cause(0.3);
  m.work_s = 30 * 24 * kHour;
  m.checkpoint_s = 60;
  m.restart_s = 10 * kMin;
  const double daly = choose_interval(m, IntervalRule::kDaly);
  const double best = choose_interval(m, IntervalRule::kOptimal);
  EXPECT_NEAR(best / daly, 1, 0.05);
  m.interval_s = daly;
  const double at_daly = expect_campaign(m).wall_s;
  m.interval_s = best;
  EXPECT_LE(expect_campaign(m).wall_s, at_daly * (1 + 1e-6));
  // Young's is sqrt(2 x 60 s x 12000 s).
  EXPECT_NEAR(choose_interval(m, IntervalRule::kYoung), std::sqrt(2 * 60 * kHour / 0.3), 1e-6);
}

// Without spares every hardware interruption waits for its own server's repair.
TEST(Campaign, NoSparesWaitForTheRepair) {
  CampaignModel m = one_cause(0.05, true);
  m.work_s = 100 * kHour;
  m.interval_s = kHour;
  m.restart_s = 5 * kMin;
  m.repair_s = 2 * kHour;
  m.spares = 0;
  CampaignModel plenty = m;
  plenty.spares = -1;
  const CampaignExpectation waiting = expect_campaign(m), free = expect_campaign(plenty);
  EXPECT_DOUBLE_EQ(waiting.no_spare_share, 1);
  EXPECT_DOUBLE_EQ(free.no_spare_share, 0);
  const double lambda = 0.05 / kHour;
  const double per_segment = std::expm1(lambda * kHour) / lambda;
  EXPECT_NEAR(waiting.wall_s, 100 * per_segment / std::exp(-lambda * (5 * kMin + 2 * kHour)), 1e-6);
  EXPECT_GT(waiting.restart_s, free.restart_s);
}

// The Monte-Carlo mode draws the model the expectation averages: their means agree within the
// mode's 95% confidence interval (three of them, for a one-in-a-thousand chance of a miss).
TEST(Campaign, MonteCarloAgreesWithTheExpectation) {
  CampaignModel m;
  m.causes = {{"gpu", "GPU", true, 0.25}, {"software", "Software", false, 0.1}};
  m.work_s = 20 * 24 * kHour;
  m.checkpoint_s = 30;
  m.restart_s = 10 * kMin;
  m.interval_s = choose_interval(m, IntervalRule::kDaly);
  for (int spares : {-1, 0}) {
    m.spares = spares;
    m.repair_s = 3 * kHour;
    const CampaignExpectation e = expect_campaign(m);
    const MonteCarloSummary mc = simulate_campaign(m, 2000, 7);
    EXPECT_NEAR(mc.mean_wall_s, e.wall_s, 3 * mc.ci95_s) << "spares " << spares;
    EXPECT_GT(mc.ci95_s, 0);
    EXPECT_NEAR(mc.mean_interruptions, e.interruptions, 0.03 * e.interruptions);
    EXPECT_LT(mc.p10_wall_s, mc.p90_wall_s);
    // The same seed, the same campaigns.
    EXPECT_EQ(simulate_campaign(m, 50, 7).mean_wall_s, simulate_campaign(m, 50, 7).mean_wall_s);
  }
}

// With spares and an asynchronous checkpoint the expectation approximates (a steady-state spare
// pool; a lag's lost interval taken at its mean): within 1% of the drawn campaigns while few
// interruptions wait for a spare (11% here); docs/campaigns.md has it where most do.
TEST(Campaign, SparePoolAndAsyncCheckpointsCloseToTheDraws) {
  CampaignModel m;
  m.causes = {{"gpu", "GPU", true, 0.4}};
  m.work_s = 20 * 24 * kHour;
  m.checkpoint_s = 2;
  m.durable_lag_s = 120;
  m.restart_s = 10 * kMin;
  m.spares = 8;
  m.repair_s = 12 * kHour;
  m.interval_s = choose_interval(m, IntervalRule::kOptimal);
  EXPECT_GE(m.interval_s, m.durable_lag_s);
  const CampaignExpectation e = expect_campaign(m);
  EXPECT_NEAR(e.no_spare_share, 0.11, 0.01);
  const MonteCarloSummary mc = simulate_campaign(m, 1000, 3);
  EXPECT_NEAR(mc.mean_wall_s / e.wall_s, 1, 0.01);
}

TEST(FailureRates, Llama3RatesGiveItsSnapshotBack) {
  const ReliabilityModel m = shipped_reliability_model("llama3-2024");
  EXPECT_NE(m.source.find("Llama 3 Herd"), std::string::npos);
  // The snapshot's own job: 16,384 GPUs, 2,048 servers, one NIC per GPU, for 54 days.
  const std::vector<CauseRate> r = job_failure_rates(m, {16384, 2048, 16384});
  double total = 0, gpu = 0;
  for (const auto& c : r) {
    total += c.per_hour * 1296;
    if (c.id == "gpu") gpu = c.per_hour * 1296;
  }
  EXPECT_NEAR(total, 466, 1e-6);  // 419 unexpected + 47 planned interruptions
  EXPECT_NEAR(gpu, 148, 1e-9);
  // Faulty GPUs: 148 per 21,233,664 GPU-hours.
  EXPECT_NEAR(m.causes[0].per_unit_hour, 148.0 / 21233664, 1e-15);
  // Half the GPUs, half the rate of GPU causes.
  const std::vector<CauseRate> half = job_failure_rates(m, {8192, 1024, 8192});
  EXPECT_NEAR(half[0].per_hour, r[0].per_hour / 2, 1e-15);
  EXPECT_THROW(shipped_reliability_model("llama4"), InputError);
  EXPECT_EQ(shipped_reliability_names().size(), 3u);
}

TEST(FailureRates, BadModelsNameTheKey) {
  auto error = [](const std::string& text) {
    try {
      read_reliability_model(load_yaml_text(text, "r.yaml"), "r.yaml");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error("name: a\nsource: b\ncauses: [{id: x, unit: rack, per_unit_hour: 1}]\n")
                .find("expected one of gpu, node, nic, job"),
            std::string::npos);
  EXPECT_NE(
      error("name: a\nsource: b\ncauses: [{id: x, unit: gpu, count: 3}]\n").find("exposure.gpu"),
      std::string::npos);
  EXPECT_NE(error("name: a\nsource: b\ncauses: []\n").find("causes"), std::string::npos);
  EXPECT_NE(error("name: a\ncauses: [{id: x, unit: gpu, per_unit_hour: 1}]\n").find("source"),
            std::string::npos);
  EXPECT_NE(error("name: a\nsource: b\ncauses: [{id: x, unit: gpu, per_unit_hour: 1},"
                  " {id: x, unit: gpu, per_unit_hour: 2}]\n")
                .find("named twice"),
            std::string::npos);
}

TEST(Power, GpuServerNetworkAndFacilityByHand) {
  PowerSpec s;
  s.gpu_tdp_w = 700;
  s.gpus = 16;
  s.gpus_per_node = 8;
  s.nodes = 2;
  s.nic_ports = 16;
  s.fabric_tiers = 2;
  StepActivity a{0.8, 0.1, 0.05};
  const PowerFigures p = power_figures(s, a);
  // Idle 0.2 x 700 = 140 W; active 0.8 + 0.6 x 0.1 + 0.35 x 0.05 = 0.8775 of the 560 W above.
  EXPECT_NEAR(p.gpu_idle_w, 140, 1e-9);
  EXPECT_NEAR(p.gpu_train_w, 140 + 560 * 0.8775, 1e-9);
  // GPUs at TDP are 70% of a server: 0.3 / 0.7 x 8 x 700 = 2,400 W besides them.
  EXPECT_NEAR(p.server_other_w, 2400, 1e-9);
  // Each port: two links of two 9 W transceivers, three switch ports of 8.5 W.
  EXPECT_NEAR(p.network_w, 16 * (4 * 9 + 3 * 8.5), 1e-9);
  EXPECT_NEAR(p.it_train_w, 16 * p.gpu_train_w + 2 * 2400 + p.network_w, 1e-9);
  EXPECT_NEAR(p.facility_train_w, 1.1 * p.it_train_w, 1e-9);
  EXPECT_NEAR(p.it_paused_w, 16 * 140 + 2 * 2400 + p.network_w, 1e-9);
  // A 500 W cap: the draw above idle scales with the clock cubed.
  EXPECT_NEAR(capped_clock(p.gpu_train_w, 140, 500), std::cbrt(360 / (p.gpu_train_w - 140)), 1e-12);
  EXPECT_DOUBLE_EQ(capped_clock(p.gpu_train_w, 140, 800), 1);
  s.cap_w = 500;
  EXPECT_DOUBLE_EQ(power_figures(s, a).gpu_train_w, 500);
}

}  // namespace
}  // namespace orrery
