// What sharing the platform did to each job of a `jobs` scenario (jobs.h): its iteration times
// in the shared run, the same job replayed alone on the same GPUs, the slowdown between them,
// and the links two or more jobs crossed.
#pragma once

#include <string>
#include <vector>

#include "common/child_process.h"
#include "engine/replay.h"
#include "engine/run_result.h"
#include "results/h5_store.h"
#include "scenario/scenario.h"

namespace orrery {

struct SharedLink {
  std::string name;
  std::vector<std::string> jobs;  // that sent bytes over it (from their runs alone)
  double bytes = 0.0;             // in the shared run
  double busy = 0.0;              // bytes / (bandwidth x makespan) in the shared run
};

struct JobsOutcome {
  // Parallel to Scenario::jobs->jobs, as the results file stores them (results/h5_store.h):
  // stdev is the population one, alone_mean the job replayed alone on the same GPUs.
  std::vector<JobRecord> jobs;
  std::vector<SharedLink> shared;  // links two or more jobs cross, busiest first
};

// Replays each job of `sc` alone (in forked children: replay() runs once per process), with
// the timeline recorded whatever `options` says.
std::vector<RunResult> replay_jobs_alone(const Scenario& sc, ReplayOptions options);

// The same, started in a child that runs beside the caller (its own replay of the shared run
// takes the other core); finish_jobs_alone collects the results. Start it before this process
// starts its own SimGrid engine.
ChildRun start_jobs_alone(const Scenario& sc, ReplayOptions options);
std::vector<RunResult> finish_jobs_alone(ChildRun& run);

// `shared` must have its timeline; `alone` parallel to sc.jobs->spans.
JobsOutcome job_outcomes(const Scenario& sc, const RunResult& shared,
                         const std::vector<RunResult>& alone);

}  // namespace orrery
