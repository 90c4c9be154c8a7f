// A training campaign's wall time under failures: work in intervals, a checkpoint after each,
// and after every interruption a restart from the last checkpoint, with the work since lost.
// The expectation is Daly's exact model for failures that arrive as a Poisson process (Daly,
// "A higher order estimate of the optimum checkpoint interval for restart dumps", FGCS 22(3),
// 2006): a segment of s seconds (interval plus checkpoint) with restarts of R seconds takes
// (e^{lambda s} - 1) / (lambda q) seconds on average, q = E[e^{-lambda R}] over the restarts
// (failures during a restart start it again). A seeded Monte-Carlo mode replays the same model
// failure by failure, with the spare pool and asynchronous checkpoints exact, to check it and
// to give the spread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "campaigns/reliability.h"

namespace orrery {

struct CampaignModel {
  double work_s = 0;              // failure-free training time: steps x step time
  std::vector<CauseRate> causes;  // the job's interruption rates
  double interval_s = 0;          // work between checkpoints (each segment ends with one)
  double checkpoint_s = 0;        // training pauses this long per checkpoint
  // Asynchronous checkpoints are on storage this long after their pause; a failure before that
  // loses the interval before as well.
  double durable_lag_s = 0;
  double restart_s = 0;  // every interruption: detect, reschedule, initialize, read back
  // Hardware interruptions take a server out: the job restarts on a hot spare, or, when all
  // `spares` are themselves in repair, waits for the first one back. A failed server returns to
  // the pool `repair_s` later. spares < 0: never short of one.
  int spares = -1;
  double repair_s = 0;
};

// Per-cause expected interruptions.
struct CauseCount {
  std::string id;
  std::string name;
  double interruptions = 0;
};

struct CampaignExpectation {
  double wall_s = 0;
  double goodput = 0;  // work_s / wall_s
  double interruptions = 0;
  std::vector<CauseCount> by_cause;
  double checkpoints = 0;     // taken (the last, at the end, saves the trained model)
  double checkpoint_s = 0;    // time paused for them
  double restart_s = 0;       // time restarting (spare waits included)
  double lost_s = 0;          // work done again after interruptions
  double mtbf_s = 0;          // of the whole job
  double no_spare_share = 0;  // of hardware interruptions that find no spare free
};

// The expected campaign. The spare pool is taken in its steady state: servers in repair are a
// Poisson number x of mean (hardware rate x repair_s) with uniform residual repairs, and an
// interruption that finds x >= spares of them waits for x - spares + 1 to come back
// ((x - spares + 1) / (x + 1) of repair_s on average; with no spares its own server's whole
// repair). Asynchronous checkpoints add their lag to the work each interruption of work loses.
CampaignExpectation expect_campaign(const CampaignModel& m);

// How the interval is chosen: Young's or Daly's formula (campaigns/checkpoint.h) at the job's
// MTBF and the checkpoint's pause, or the interval that minimizes expect_campaign's wall time;
// never below an asynchronous checkpoint's write, which must end before the next one starts.
enum class IntervalRule { kYoung, kDaly, kOptimal };
double choose_interval(CampaignModel m, IntervalRule rule);

struct MonteCarloSummary {
  int runs = 0;
  uint64_t seed = 0;
  double mean_wall_s = 0;
  double ci95_s = 0;  // half-width of the 95% confidence interval of the mean
  double p10_wall_s = 0, p50_wall_s = 0, p90_wall_s = 0;
  double mean_interruptions = 0;
};

// `runs` campaigns drawn from `seed` (std::mt19937_64, common/seeded_draw.h): the same seed
// gives the same answer on every machine.
MonteCarloSummary simulate_campaign(const CampaignModel& m, int runs, uint64_t seed);

}  // namespace orrery
