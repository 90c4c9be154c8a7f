#include "scenario/campaign_run.h"

#include <algorithm>
#include <cmath>

#include "common/errors.h"
#include "common/input_file.h"
#include "common/input_limits.h"
#include "scenario/llm_workload.h"

namespace orrery {
namespace {

constexpr Range kFraction{0, 1, Quantity::kNumber};
constexpr Range kSteps{1, 1e12, Quantity::kCount};
constexpr Range kDuration{60, 1e9, Quantity::kTime};
constexpr Range kRestart{0, 30 * 86400, Quantity::kTime};
constexpr Range kStorageRate{1e6, 1e15, Quantity::kBandwidth};
constexpr Range kPue{1, 3, Quantity::kNumber};
constexpr Range kPrice{0, 1e6, Quantity::kNumber};

// Llama 3's Tectonic storage: "a sustainable throughput of 2 TB/s" (The Llama 3 Herd of Models,
// section 3.3.1), reads and writes; one server's client: NVIDIA's DGX SuperPOD reference
// architecture (H100, RA-11333-001), "best" storage tier, 20 GB/s write and 40 GB/s read.
Storage default_storage() { return {2e12, 2e12, 20e9, 40e9}; }

ReliabilityModel read_reliability(const YamlMap& c, const std::string& base_dir) {
  if (!c.has("reliability")) return shipped_reliability_model("llama3-2024");
  const YAML::Node node = c.raw("reliability");
  if (node.IsMap()) return read_reliability_model(node, c.where("reliability"));
  const std::string name = c.str("reliability", "");
  if (name.find('/') != std::string::npos ||
      name.size() > 5 && name.substr(name.size() - 5) == ".yaml") {
    const std::string path = c.input_file("reliability", base_dir, "reliability model");
    return read_reliability_model(load_yaml_file(path), path);
  }
  try {
    return shipped_reliability_model(name);
  } catch (const InputError& e) {
    c.fail("reliability", e.what());
  }
  return {};
}

// The fewest spares with which 99 hardware interruptions in 100 find one free: the servers in
// repair are Poisson of mean (hardware rate x repair time), and k spares serve when fewer than
// k are (ByteDance sizes its warm standbys to the 99th percentile of failures: Wan et al.,
// "Robust LLM Training Infrastructure at ByteDance", SOSP 2025).
int spares_at_p99(double mean) {
  if (mean <= 0) return 0;
  double term = std::exp(-mean), below = 0;
  int k = 0;
  while (below + term < 0.99 && k < 100000) {  // below: P(fewer than k in repair)
    below += term;
    ++k;
    term *= mean / k;
  }
  return k + 1;
}

}  // namespace

std::optional<CampaignSetup> read_campaign(const YamlMap& root, const std::string& base_dir) {
  if (!root.has("campaign")) return std::nullopt;
  const YamlMap c = root.map("campaign");
  CampaignSetup s;
  const int targets = c.has("tokens") + c.has("steps") + c.has("duration");
  if (targets != 1)
    c.fail(c.has("steps")      ? "steps"
           : c.has("duration") ? "duration"
                               : "tokens",
           "give one target: tokens (a language model's, such as 15T), steps, or duration "
           "(such as 30d)");
  s.tokens = read_tokens(c, "tokens");
  s.steps = c.number("steps", 0, kSteps);
  s.duration_s = c.time("duration", 0, kDuration);
  s.reliability = read_reliability(c, base_dir);
  s.restart_s = c.time("restart", s.restart_s, kRestart);
  s.repair_s = c.time("repair", s.repair_s, kRestart);
  if (c.has("spares")) {
    const std::string v = c.str("spares", "");
    if (v == "auto")
      s.spares = -2;
    else if (v == "unlimited")
      s.spares = -1;
    else
      s.spares = c.integer("spares", 0, 0, 1000000);
  }
  const YamlMap ck = c.map("checkpoint");
  if (ck.has("interval")) {
    const std::string v = ck.str("interval", "");
    if (v == "young")
      s.rule = IntervalRule::kYoung;
    else if (v == "daly")
      s.rule = IntervalRule::kDaly;
    else if (v == "optimal")
      s.rule = IntervalRule::kOptimal;
    else
      s.interval_s = ck.time("interval", 0, Range{1, 1e9, Quantity::kTime});
  }
  s.async = ck.boolean("async", false);
  s.overhead_s = ck.time("overhead", s.overhead_s, Range{0, 86400, Quantity::kTime});
  s.checkpoint_bytes = ck.size("bytes", 0, limits::kBytes);
  s.storage = default_storage();
  const YamlMap st = ck.map("storage");
  s.storage.write_bw = st.bandwidth("write", s.storage.write_bw, kStorageRate);
  s.storage.read_bw = st.bandwidth("read", s.storage.read_bw, kStorageRate);
  s.storage.node_write_bw = st.bandwidth("node_write", s.storage.node_write_bw, kStorageRate);
  s.storage.node_read_bw = st.bandwidth("node_read", s.storage.node_read_bw, kStorageRate);
  st.reject_unknown_keys();
  s.host_copy_bw = ck.bandwidth("host_copy", 0, kStorageRate);
  ck.reject_unknown_keys();
  const YamlMap pw = c.map("power");
  s.power.pue = pw.number("pue", s.power.pue, kPue);
  s.power.cap_w = pw.power("cap", 0, limits::kPowerWatts);
  s.power.gpu_idle_fraction = pw.number("gpu_idle", s.power.gpu_idle_fraction, kFraction);
  s.power.memory_bound_draw = pw.number("memory_bound_draw", s.power.memory_bound_draw, kFraction);
  s.power.communication_draw =
      pw.number("communication_draw", s.power.communication_draw, kFraction);
  s.power.other_share =
      pw.number("other_share", s.power.other_share, Range{0, 0.9, Quantity::kNumber});
  pw.reject_unknown_keys();
  const YamlMap pr = c.map("prices");
  s.gpu_hour = pr.number("gpu_hour", 0, kPrice);
  s.kwh = pr.number("kwh", s.kwh, kPrice);
  pr.reject_unknown_keys();
  const YamlMap mc = c.map("monte_carlo");
  s.mc_runs = mc.integer("runs", c.has("monte_carlo") ? 1000 : 0, 1, 1000000);
  s.seed = static_cast<uint64_t>(mc.integer("seed", 1, 0, 2147483647));
  mc.reject_unknown_keys();
  c.reject_unknown_keys();
  return s;
}

CampaignFigures evaluate_campaign(const CampaignSetup& setup, const CampaignStep& step) {
  CampaignFigures f;
  f.step_s = step.step_s;
  f.clock = step.clock;
  f.checkpoint_bytes = setup.checkpoint_bytes > 0 ? setup.checkpoint_bytes : step.checkpoint_bytes;
  if (f.checkpoint_bytes <= 0)
    throw InputError(
        "campaign.checkpoint.bytes: this workload's model is not known to Orrery (it knows a "
        "language model's weights and optimizer states); give the checkpoint's size");
  CheckpointPlan plan;
  plan.bytes = f.checkpoint_bytes;
  const double writers = std::max(1.0, step.checkpoint_writers);
  plan.gpus_per_node = std::max(1, std::min(step.gpus_per_node, static_cast<int>(writers)));
  plan.nodes = std::max(1, static_cast<int>(std::ceil(writers / plan.gpus_per_node)));
  plan.async = setup.async;
  plan.overhead_s = setup.overhead_s;
  plan.host_copy_bw = setup.host_copy_bw > 0  ? setup.host_copy_bw
                      : step.host_copy_bw > 0 ? step.host_copy_bw
                                              : 25e9;
  f.checkpoint = checkpoint_cost(plan, setup.storage);
  f.causes = job_failure_rates(setup.reliability, step.parts);

  CampaignModel m;
  m.causes = f.causes;
  m.checkpoint_s = f.checkpoint.blocking_s;
  m.durable_lag_s = setup.async ? f.checkpoint.write_s : 0;
  m.restart_s = setup.restart_s + f.checkpoint.read_s;
  m.repair_s = setup.repair_s;
  double hardware = 0;  // per second
  for (const auto& c : f.causes)
    if (c.hardware) hardware += c.per_hour / 3600;
  m.spares = setup.spares == -2 ? spares_at_p99(hardware * setup.repair_s) : setup.spares;
  f.spares = m.spares;
  f.restart_s = m.restart_s;

  auto with_work = [&](double work) {
    m.work_s = work;
    const double interval = setup.interval_s > 0 ? std::max(setup.interval_s, m.durable_lag_s)
                                                 : choose_interval(m, setup.rule);
    // A checkpoint is taken between steps: a whole number of them, at least one.
    m.interval_s = std::max(1.0, std::round(interval / step.step_s)) * step.step_s;
    return expect_campaign(m);
  };
  if (setup.tokens > 0) {
    if (step.tokens_per_step <= 0)
      throw InputError("campaign.tokens: the workload is not a language model; give steps");
    f.steps = std::ceil(setup.tokens / step.tokens_per_step);
  } else if (setup.steps > 0) {
    f.steps = setup.steps;
  }
  if (setup.duration_s > 0) {
    // The work that fits: wall time grows about linearly with work, so a few rescalings settle.
    double work = setup.duration_s;
    for (int i = 0; i < 6; ++i) work *= setup.duration_s / with_work(work).wall_s;
    f.steps = work / step.step_s;
  }
  f.work_s = f.steps * step.step_s;
  f.expected = with_work(f.work_s);
  f.interval_s = m.interval_s;
  f.tokens = f.steps * step.tokens_per_step;
  if (setup.mc_runs > 0) f.monte_carlo = simulate_campaign(m, setup.mc_runs, setup.seed);

  PowerSpec p = setup.power;
  p.gpu_tdp_w = step.gpu_tdp_w;
  p.gpus = static_cast<int>(step.parts.gpus);
  p.gpus_per_node = step.gpus_per_node;
  p.nodes = static_cast<int>(step.parts.nodes);
  p.nic_ports = step.parts.nics;
  p.fabric_tiers = step.fabric_tiers;
  f.power = power_figures(p, step.activity);
  const CampaignExpectation& e = f.expected;
  f.energy_j = f.power.facility_train_w * (f.work_s + e.lost_s) +
               f.power.facility_paused_w * (e.checkpoint_s + e.restart_s);
  const double spare_gpus = std::max(0, f.spares) * step.gpus_per_node;
  f.gpu_cost = setup.gpu_hour * (step.parts.gpus + spare_gpus) * e.wall_s / 3600;
  f.energy_cost = setup.kwh * f.energy_j / 3.6e6;
  return f;
}

std::vector<std::pair<std::string, double>> campaign_metrics(const CampaignFigures& f) {
  const CampaignExpectation& e = f.expected;
  const double day = 86400;
  std::vector<std::pair<std::string, double>> m = {
      {"campaign.steps", f.steps},
      {"campaign.tokens", f.tokens},
      {"campaign.work_days", f.work_s / day},
      {"campaign.wall_days", e.wall_s / day},
      {"campaign.goodput", e.goodput},
      {"campaign.interruptions", e.interruptions},
      {"campaign.mtbf_h", e.mtbf_s / 3600},
      {"campaign.lost_days", e.lost_s / day},
      {"campaign.checkpoint_days", e.checkpoint_s / day},
      {"campaign.restart_days", e.restart_s / day},
      {"campaign.interval_min", f.interval_s / 60},
      {"campaign.checkpoint_pause_s", f.checkpoint.blocking_s},
      {"campaign.checkpoint_write_s", f.checkpoint.write_s},
      {"campaign.checkpoint_read_s", f.checkpoint.read_s},
      {"campaign.checkpoint_tb", f.checkpoint_bytes / 1e12},
      {"campaign.spares", static_cast<double>(f.spares)},
      {"campaign.clock", f.clock},
      {"campaign.gpu_power_w", f.power.gpu_train_w},
      {"campaign.power_mw", f.power.facility_train_w / 1e6},
      {"campaign.step_energy_kwh", f.power.facility_train_w * f.step_s / 3.6e6},
      {"campaign.energy_mwh", f.energy_j / 3.6e9},
      {"campaign.gpu_cost", f.gpu_cost},
      {"campaign.energy_cost", f.energy_cost},
      {"campaign.cost", f.gpu_cost + f.energy_cost},
  };
  for (const auto& c : e.by_cause)
    m.emplace_back("campaign.interruptions." + c.id, c.interruptions);
  if (f.monte_carlo) {
    const MonteCarloSummary& mc = *f.monte_carlo;
    m.emplace_back("campaign.mc.runs", mc.runs);
    m.emplace_back("campaign.mc.wall_days", mc.mean_wall_s / day);
    m.emplace_back("campaign.mc.ci95_days", mc.ci95_s / day);
    m.emplace_back("campaign.mc.p10_days", mc.p10_wall_s / day);
    m.emplace_back("campaign.mc.p90_days", mc.p90_wall_s / day);
    m.emplace_back("campaign.mc.interruptions", mc.mean_interruptions);
  }
  return m;
}

}  // namespace orrery
