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

struct JobOutcome {
  std::string name;
  std::vector<double> iteration_times;                   // seconds, shared run, in order
  double mean = 0.0, min = 0.0, max = 0.0, stdev = 0.0;  // of iteration_times (population)
  double alone_mean = 0.0;  // the same, replaying the job alone on the same GPUs
  double slowdown = 1.0;    // mean / alone_mean
  double end = 0.0;         // when its last iteration ended in the shared run
};

struct SharedLink {
  std::string name;
  std::vector<std::string> jobs;  // that sent bytes over it (from their runs alone)
  double bytes = 0.0;             // in the shared run
  double busy = 0.0;              // bytes / (bandwidth x makespan) in the shared run
};

struct JobsOutcome {
  std::vector<JobOutcome> jobs;    // parallel to Scenario::jobs->jobs
  std::vector<SharedLink> shared;  // links two or more jobs cross, busiest first
};

// The outcomes as the results file stores them (results/h5_store.h JobRecord).
std::vector<JobRecord> job_records(const JobsSetup& setup, const JobsOutcome& outcome);

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
