// The `campaign:` section of a scenario (docs/campaigns.md): train to a token target, a step
// count or for a duration, under a reliability model, a checkpoint policy, a power model and
// prices, and what that makes of a run's step: expected interruptions by cause, lost work,
// checkpoint and restart time, goodput, wall time, energy and cost (campaigns/ does the
// arithmetic; this file reads the section and hands it the step's figures).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "campaigns/campaign.h"
#include "campaigns/checkpoint.h"
#include "campaigns/power.h"
#include "campaigns/reliability.h"
#include "common/yaml_reader.h"

namespace orrery {

struct CampaignSetup {
  // The target, one of: tokens (a language model's), steps, or a wall-clock duration (then the
  // figures say how far the campaign gets).
  double tokens = 0;
  double steps = 0;
  double duration_s = 0;
  ReliabilityModel reliability;
  double restart_s = 600;
  int spares = -2;  // -2: as many as the 99th percentile of servers in repair; -1: unlimited
  double repair_s = 86400;
  IntervalRule rule = IntervalRule::kDaly;
  double interval_s = 0;  // a fixed interval instead of the rule
  bool async = false;
  // The pause beyond the bytes: "several seconds" for the GPU-to-host stage of MegaScale's
  // checkpoints (Jiang et al., "MegaScale: Scaling Large Language Model Training to More Than
  // 10,000 GPUs", NSDI 2024, section 4.4), taken as 3 s.
  double overhead_s = 3;
  double checkpoint_bytes = 0;  // 0: the language model's weights and optimizer states
  Storage storage;
  double host_copy_bw = 0;  // 0: the platform's PCIe link
  PowerSpec power;          // pue, cap and the draw assumptions; the rest comes from the run
  double gpu_hour = 0;      // price per GPU-hour (0: no GPU cost)
  double kwh = 0.08;        // price per kWh of the facility's energy
  int mc_runs = 0;          // 0: expectation only
  uint64_t seed = 1;
};

// Reads `campaign` (absent: nullopt). Relative paths (a reliability file) are under base_dir.
// InputError naming the file, line and key.
std::optional<CampaignSetup> read_campaign(const YamlMap& root, const std::string& base_dir);

// A step as the campaign sees it.
struct CampaignStep {
  double step_s = 0;
  double tokens_per_step = 0;  // 0: not a language model
  StepActivity activity;
  JobParts parts;
  int gpus_per_node = 8;
  int fabric_tiers = 1;
  double gpu_tdp_w = 0;
  double checkpoint_bytes = 0;  // the model's (0: unknown)
  // GPUs that write a shard of it: every GPU when the optimizer states are sharded over the
  // data-parallel ranks (ZeRO-1 and up, Megatron's distributed optimizer), one replica's when
  // each replica holds them whole, one GPU for a data-parallel model (DDP saves from rank 0).
  double checkpoint_writers = 1;
  double host_copy_bw = 0;  // the platform's GPU-to-host link
  double clock = 1;         // under a power cap: the clock the step ran at
};

struct CampaignFigures {
  double steps = 0;
  double tokens = 0;
  double step_s = 0;
  double work_s = 0;
  double checkpoint_bytes = 0;
  CheckpointCost checkpoint;
  double interval_s = 0;
  int spares = -1;
  double restart_s = 0;  // per interruption, the checkpoint's read included
  std::vector<CauseRate> causes;
  CampaignExpectation expected;
  std::optional<MonteCarloSummary> monte_carlo;
  PowerFigures power;
  double clock = 1;
  double energy_j = 0;  // the facility's
  double gpu_cost = 0;
  double energy_cost = 0;
};

// The campaign of `step` under `setup`. InputError when the target cannot be reached as given
// (a token target for a workload without tokens, a checkpoint size for a workload whose model
// is not known).
CampaignFigures evaluate_campaign(const CampaignSetup& setup, const CampaignStep& step);

// The figures a run and a sweep point store: "campaign.wall_days", "campaign.goodput", ...
std::vector<std::pair<std::string, double>> campaign_metrics(const CampaignFigures& f);

}  // namespace orrery
