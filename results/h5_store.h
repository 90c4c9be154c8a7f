// The HDF5 result store: one file per run or sweep that explains itself (scenario text,
// version, platform) next to a table of points, per-device and per-link breakdowns and, when
// recorded, per-op timelines. The exact layout is docs/hdf5-layout.md; bump
// kResultsFormatVersion whenever it changes incompatibly.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/execution_graph.h"
#include "engine/run_result.h"

namespace orrery {

// 2: /runs gained analytical_s. 3: /run_values (parameters as numbers with units) and
// checksummed metadata (the HDF5 1.8 object format). 4: /jobs gained best_mean_s and
// placement_cost.
inline constexpr int kResultsFormatVersion = 4;

// One simulated run (a sweep point).
struct RunRecord {
  std::string name;                           // e.g. the scenario name, or "<name>/<point>"
  std::map<std::string, std::string> params;  // the point's scenario parameters; may be empty
  RunResult result;
};

// One job of a scenario of several jobs (docs/shared-clusters.md), as /jobs and
// /job_iterations store it.
struct JobRecord {
  std::string name;
  std::string placement;  // policy, or "explicit"
  int gpus = 0;
  std::vector<double> iteration_times;  // seconds, in the shared run
  double mean = 0.0, min = 0.0, max = 0.0, stdev = 0.0;
  double alone_mean = 0.0;  // mean iteration time replayed alone on the same GPUs
  double slowdown = 1.0;    // mean / alone_mean
  double end = 0.0;         // when its last iteration ended
  // Mean iteration time replayed alone on its best GPUs (where packed placement puts it on an
  // empty platform: the fewest servers), and what its own placement costs against that:
  // alone_mean / best_mean (1 where those are its GPUs; 0 and 1 in files of format 3 and
  // before, which lack them).
  double best_mean = 0.0;
  double placement_cost = 1.0;
};

// A job's max - min iteration time, a difference under a billionth of the iteration (the
// rounding of sums of doubles between identical iterations) read as none.
inline double iteration_spread(double max, double min) {
  return max - min <= 1e-9 * max ? 0.0 : max - min;
}

// What makes a file explain itself; stored as root attributes.
struct ResultFileMeta {
  std::string scenario_text;  // the full scenario file, verbatim
  std::string orrery_version;
  std::string platform_description;
  std::string created_by;  // e.g. the command line
  // The run's GPU as the run header names it (platforms/device_spec.h device_label); "" in
  // files written before the attribute existed.
  std::string device;
  // Language-model runs (scenario/llm_workload.h): per iteration, the tokens trained and the
  // model FLOPs, and the memory verdict of the fullest GPU; 0 and "" for other runs (the
  // attributes are then not written).
  double tokens_per_iteration = 0.0;
  double model_flops_per_iteration = 0.0;
  std::string memory;
  // Scenarios of several jobs: one record per placed job (the /jobs and /job_iterations
  // datasets); empty otherwise (not written).
  std::vector<JobRecord> jobs;
};

// The headline numbers of one run: one row of /runs. Means are over the devices that ran at
// least one op (input-only CPUs would dilute them), so a device-count sweep stays comparable;
// all values in seconds, per training step (a run of RunResult::iterations steps is divided by
// them).
struct RunSummary {
  double iteration_time_s = 0.0;  // makespan
  double compute_s = 0.0;         // compute-stream busy time
  double comm_s = 0.0;            // communication-stream busy time
  double io_s = 0.0;              // copy_h2d + copy_d2h busy time
  double host_s = 0.0;            // host (launch) stream busy time
  double idle_s = 0.0;            // makespan minus compute-stream busy time
  double exposed_comm_s = 0.0;    // communication not hidden behind compute
  double memory_bound_s = 0.0;    // compute-stream time in memory-bound ops
};
RunSummary summarize_run(const RunResult& result);

// Writes `runs` to `path`. graphs[i] is the graph runs[i] replayed; it names the ops, devices and
// streams of runs[i].result.timeline and may be null (or `graphs` empty) for runs without one.
// The file is written to "<path>.tmp.<pid>" and renamed to `path` only when complete, so a crash
// never leaves a file that looks whole and an existing `path` survives a failed write.
// Throws InputError when `path` cannot be created (missing or unwritable directory, a
// directory in the way), std::invalid_argument when a timeline does not match its graph, and
// std::runtime_error on HDF5 failures (the temp file is removed first).
void write_results_h5(const std::string& path, const ResultFileMeta& meta,
                      const std::vector<RunRecord>& runs,
                      const std::vector<const ExecutionGraph*>& graphs);

// write_results_h5 without the temp file and rename: writes `file_path` itself, for a caller
// that adds to the file before renaming it (sweeps/sweep_h5.cc) inside its own
// write_atomically. Throws std::runtime_error on HDF5 failures.
void write_results_h5_file(const std::string& file_path, const ResultFileMeta& meta,
                           const std::vector<RunRecord>& runs,
                           const std::vector<const ExecutionGraph*>& graphs);

// One op of a stored timeline, by name (seconds from the start of the run).
struct TimelineRow {
  std::string op;
  std::string device;
  std::string stream;  // stream_name() form: "compute", "comm:1", ...
  std::string phase;
  double start = 0.0;
  double end = 0.0;
};

struct LoadedResults {
  int format_version = 0;
  ResultFileMeta meta;
  // Everything written, except that result.timeline is filled from the stored rows.
  std::vector<RunRecord> runs;
  std::vector<RunSummary> summaries;                // the /runs rows, parallel to runs
  std::vector<std::vector<TimelineRow>> timelines;  // parallel to runs; empty where none stored
};

// Reads a file written by write_results_h5. Throws InputError naming the file when it cannot be
// opened, is not an Orrery results file, or has a newer format_version.
LoadedResults read_results_h5(const std::string& path);

}  // namespace orrery
