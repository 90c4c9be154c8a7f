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

// Each job replayed alone: on its own GPUs (parallel to sc.jobs->spans), and on the best GPUs
// (parallel to sc.jobs->best_placement).
struct JobsAlone {
  std::vector<RunResult> own;
  std::vector<RunResult> best;
};

// Replays each job of `sc` alone (in forked children: replay() runs once per process), with
// the timeline recorded whatever `options` says.
JobsAlone replay_jobs_alone(const Scenario& sc, ReplayOptions options);

// The same, started in a child that runs beside the caller (its own replay of the shared run
// takes the other core); finish_jobs_alone collects the results. Start it before this process
// starts its own SimGrid engine.
ChildRun start_jobs_alone(const Scenario& sc, ReplayOptions options);
JobsAlone finish_jobs_alone(ChildRun& run, const Scenario& sc);

// `shared` must have its timeline.
JobsOutcome job_outcomes(const Scenario& sc, const RunResult& shared, const JobsAlone& alone);

// What the whole cluster got out of one shared run, the figures a capacity study compares
// between platforms (docs/shared-clusters.md); sweeps store them as "jobs.<name>".
struct ClusterFigures {
  int placed = 0, unplaced = 0;
  int gpus = 0;             // the platform's
  int gpus_used = 0;        // held by placed jobs
  int fragmented_gpus = 0;  // free while a job waits
  // Sum over jobs of GPUs / mean iteration time: per-GPU batches a second, which for
  // data-parallel jobs is samples a second over the per-GPU batch.
  double gpu_batches_per_s = 0.0;
  double iterations_per_s = 0.0;                   // sum over jobs of 1 / mean iteration time
  double mean_slowdown = 1.0, max_slowdown = 1.0;  // over placed jobs
  // What the placements cost: each job alone on its GPUs over alone on its best GPUs
  // (JobRecord::placement_cost), over placed jobs.
  double mean_placement_cost = 1.0, max_placement_cost = 1.0;
  // Compute-stream busy time of the platform's GPUs over (GPUs x the run's length): idle and
  // unallocated GPUs count as 0.
  double gpu_utilization = 0.0;
};

ClusterFigures cluster_figures(const Scenario& sc, const RunResult& shared, const JobsOutcome& o);
// As named metrics: "jobs.placed", "jobs.gpu_batches_per_s", ... in a fixed order.
std::vector<std::pair<std::string, double>> cluster_metrics(const ClusterFigures& f);

}  // namespace orrery
