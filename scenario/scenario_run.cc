#include "scenario/scenario_run.h"

#include <algorithm>
#include <utility>

#include "orrery_version.h"

namespace orrery {
namespace {

ResultFileMeta meta_of(const Scenario& sc, const RunOptions& options) {
  ResultFileMeta meta;
  meta.scenario_text = sc.text;
  meta.orrery_version = ORRERY_VERSION;
  meta.platform_description = sc.platform_summary;
  meta.created_by = options.created_by;
  meta.device = device_label(sc.device);
  if (sc.llm) {
    meta.tokens_per_iteration = sc.llm->tokens;
    meta.model_flops_per_iteration = sc.llm->model_flops;
    meta.memory = sc.llm->memory;
  }
  return meta;
}

}  // namespace

ScenarioRun run_scenario(const Scenario& sc, const RunOptions& options) {
  ScenarioRun run;
  ReplayOptions replay_options = options.replay;
  // Each job alone runs in a child beside this replay (the child forks before this process
  // starts its engine: replay() runs once per process); iteration ends come from the timeline.
  std::optional<ChildRun> alone_runs;
  if (sc.jobs) {
    alone_runs.emplace(start_jobs_alone(sc, replay_options));
    replay_options.record_timeline = true;
  }
  // The sensitivity variants replay after this run, each in a child: this process must not hold
  // a SimGrid engine when it forks them.
  const bool isolated = options.isolated || sc.sensitivity;
  run.result = isolated ? replay_isolated(sc.platform, sc.graph, replay_options)
                        : replay(sc.platform, sc.graph, replay_options);
  RunResult& r = run.result;
  r.analytical_seconds = sc.analytical ? sc.analytical_seconds : 0.0;
  r.iterations = std::max(1, sc.iterations);
  run.iteration_s = r.makespan / r.iterations;
  run.meta = meta_of(sc, options);
  if (sc.llm) {
    run.llm = llm_figures(*sc.llm, r);
    run.metrics = llm_metrics(*run.llm);
  }
  if (sc.error_band.known && !sc.jobs) {
    run.metrics.emplace_back("likely.low_s", likely_low(sc.error_band, run.iteration_s));
    run.metrics.emplace_back("likely.high_s", likely_high(sc.error_band, run.iteration_s));
    run.metrics.emplace_back("likely.runs", sc.error_band.runs);
    run.metrics.emplace_back("likely.median_error", sc.error_band.median_abs);
  }
  if (sc.sensitivity && !sc.jobs) {
    run.sensitivity = sensitivity_runs(sc);
    for (auto& m : sensitivity_metrics(run.sensitivity)) run.metrics.push_back(std::move(m));
  }
  if (alone_runs) {
    const JobsAlone alone = finish_jobs_alone(*alone_runs, sc);
    run.jobs = job_outcomes(sc, r, alone);
    run.cluster = cluster_figures(sc, r, *run.jobs);
    run.metrics = cluster_metrics(*run.cluster);
    run.meta.jobs = run.jobs->jobs;
    if (!options.replay.record_timeline) r.timeline.clear();
  }
  return run;
}

}  // namespace orrery
