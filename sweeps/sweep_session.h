// `orrery sweep` and `orrery plan` from start to end, on one rank or many: load and expand the
// scenario, check it, resume from what the output and its journal hold, run the missing points
// (sweep_driver.h) and summarize. Under mpirun every rank calls this; rank 0 owns the output
// and prints, the others only run points.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sweeps/sweep_input.h"
#include "sweeps/sweep_store.h"

namespace orrery {

struct SweepSessionArgs {
  std::string scenario;
  std::vector<std::string> overrides;  // --set
  std::string output;                  // -o; default output.file of the scenario
  int jobs = 1;                        // -j: children at once per rank; 0: one per CPU
  bool bind = true;                    // bind each child to a CPU of this rank (child_cpus)
  bool dry_run = false;                // list the points, run nothing
  int64_t point = -1;         // with point_given: simulate only this point (point_detail.h)
  bool point_given = false;
  std::string trace;          // with point: Chrome trace JSON of its timeline
  bool fresh = false;         // discard earlier results in the output
  bool retry_failed = false;  // run failed points again
  bool quiet = false;
  double flush_interval_s = 5;
  // When stderr is not a terminal: a progress line at most this often (sweeps/progress.h).
  double progress_interval_s = 10;
  std::string created_by;  // stored in the file (the command line)
};

struct SweepHooks {
  // Rank 0, after loading and checking the input, before anything runs (e.g. read a plan
  // section, set a decorator on the store). May throw InputError.
  std::function<void(const SweepInput&, SweepStore&)> prepare;
  // Rank 0, when every point has finished, before the final write.
  std::function<void(const SweepInput&, SweepStore&)> conclude;
  // Rank 0, after the sweep summary, unless quiet.
  std::function<void(const SweepInput&, const SweepStore&)> report;
  // --dry-run: lists the checked points (default: print_points).
  std::function<void(const SweepInput&)> list;
};

// Exit status: 0 every point ok, 3 some points failed (all recorded), 130 interrupted
// (resumable), 2 bad input (InputError, rethrown when not under mpirun; under mpirun the
// message is printed and the job aborted with that status).
inline constexpr int kExitPointsFailed = 3;
inline constexpr int kExitInterrupted = 130;
int run_sweep_session(const SweepSessionArgs& args, const SweepHooks& hooks = {});

// One line per point: index, hash and parameters (for --dry-run).
void print_points(const SweepInput& in);

}  // namespace orrery
