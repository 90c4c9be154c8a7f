// One run of a scenario, as every front end reports it: `orrery run`, a sweep's points (the
// forked child and `orrery sweep --point`) and Python's orrery.run all call run_scenario and
// only print, store or convert what it returns. Replay, the jobs replayed alone, the language
// model's and the cluster's figures and the results file's metadata are assembled here once,
// so no front end can leave one out or compute it its own way.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/replay.h"
#include "engine/run_result.h"
#include "results/h5_store.h"
#include "scenario/job_report.h"
#include "scenario/llm_figures.h"
#include "scenario/scenario.h"
#include "scenario/sensitivity.h"

namespace orrery {

struct RunOptions {
  // What the replay records (the timeline is kept in ScenarioRun::result only when asked: a
  // jobs scenario records it anyway, for each job's iteration ends, and drops it after).
  ReplayOptions replay;
  // Replay in a forked child: for callers that simulate more than once per process (Python,
  // tests). SimGrid allows one engine per process, so the one-shot CLI and a sweep's point
  // child replay in place and save the fork.
  bool isolated = false;
  std::string created_by;  // the results file's created_by (a command line)
};

struct ScenarioRun {
  RunResult result;  // the whole run; result.iterations says how many steps it holds
  // Simulated seconds of one training step: the run's length over its steps (a jobs scenario:
  // the run's length, each job's steps are in `jobs`).
  double iteration_s = 0.0;
  std::optional<LlmFigures> llm;          // language-model workloads
  std::optional<JobsOutcome> jobs;        // scenarios of several jobs
  std::optional<ClusterFigures> cluster;  // likewise, the whole cluster's figures
  // The named figures a sweep stores with each point ("llm.*", "jobs.*", "likely.*",
  // "sensitivity.*"), in a fixed order.
  std::vector<std::pair<std::string, double>> metrics;
  // With sc.sensitivity: how far each uncertain input moves the step.
  std::vector<SensitivityRow> sensitivity;
  // With a `campaign` section: the training campaign around this step.
  std::optional<CampaignFigures> campaign;
  // What a results file of this run says about it (scenario text, device, LLM tokens, FLOPs
  // and memory verdict, job table).
  ResultFileMeta meta;
};

// Replays `sc` (and, for several jobs, each job alone beside it) and derives every figure.
// Throws what replay throws.
ScenarioRun run_scenario(const Scenario& sc, const RunOptions& options);

}  // namespace orrery
