// Replay of an ExecutionGraph on a SimGrid platform.
//
// SimGrid holds the platform: hosts, links, routes. The activities run in Orrery's own fluid
// model (engine/fluid_model.h), which shares links and hosts as SimGrid 3.32's CM02 and Cas01
// models do. The dependency graph lives in our own arrays; each activity starts when its
// dependencies are done and its stream is free, and each end releases its successors
// (docs/design.md, "Replay").
#pragma once

#include <functional>

#include "common/input_limits.h"
#include "engine/execution_graph.h"
#include "engine/run_result.h"
#include "platforms/simgrid_platform.h"

namespace orrery {

struct ReplayOptions {
  bool record_timeline = true;  // keep every op's start/end in RunResult::timeline
  // On a terminal (stderr), print a progress line every few seconds of a long replay.
  bool progress = false;
  // The replay stops with an InputError naming this limit when simulated time passes it (a
  // workload of 1e300-second ops, a link of 1 B/s): default from --max-simulated-time.
  double max_simulated_seconds = run_limits().max_simulated_seconds;
  // Keep the flows collectives issue in RunResult::flows (Chrome traces show them on each
  // rank's track), at 40 bytes each: the first max_recorded_flows are kept, the rest counted.
  bool record_flows = false;
  int64_t max_recorded_flows = 1000000;
  // Sample every link's usage at each advance of simulated time into LinkStats::utilization,
  // at most this many bins over the run (engine/link_usage.h); 0: off.
  int link_usage_bins = 0;
  // False: replay() leaves the platform model and its own state for the process's end to free,
  // for a caller that exits right after (the one-shot CLI) and allocates little more. Tearing
  // them down object by object took a tenth of a 65,536-GPU run.
  bool free_on_return = true;
  // Run the alike rings of a collective (its channels, a hierarchical all-reduce's rings across
  // servers) as one where that is exact (engine/alike_traffic.h): the same dates, a k-th of the
  // flows. Off when flows are recorded, so that every flow shows.
  bool aggregate_alike = true;
};

// Replays `graph` in this process. SimGrid allows one Engine per process and keeps its clock,
// so call this at most once per process; replay_isolated() has no such limit.
// Throws InputError when a device names a host the platform lacks, when simulated time passes
// options.max_simulated_seconds, or when the simulation stops making progress (activities that
// never end); the message names the limit and the ops still running.
RunResult replay(const PlatformSource& platform, const ExecutionGraph& graph,
                 const ReplayOptions& options);

// Replays `count` graphs on one platform, one after the other, in this process: SimGrid holds
// the platform, built once, and each replay has its own fluid model, so the results are those
// of replay() on each graph alone. graph(i) builds the i-th graph when its turn comes (only one
// is held at a time); result(i, r) receives its result. Like replay(), once per process.
void replay_each(const PlatformSource& platform, size_t count,
                 const std::function<ExecutionGraph(size_t)>& graph, const ReplayOptions& options,
                 const std::function<void(size_t, RunResult)>& result);

// Runs replay() in a forked child and returns its result through a pipe. A child that fails
// rethrows here: InputError as InputError, anything else (including a SimGrid abort or a
// signal) as std::runtime_error with the reason.
RunResult replay_isolated(const PlatformSource& platform, const ExecutionGraph& graph,
                          const ReplayOptions& options);

// The duration replay gives a compute op: its fixed duration, or else the roofline
// max(flops / host speed, bytes / mem_bw) with mem_bw from the host property "mem_bw"
// (bytes/s; infinite when absent). Cost models in models/ normally fix durations beforehand.
double default_op_duration(const Op& op, double host_speed, double host_mem_bw);

}  // namespace orrery
