// Running the points of a sweep: rank 0 (or the only process) owns the results and hands out
// point indices; every rank, rank 0 included, runs points in forked children, `jobs` at a
// time. Assignment is dynamic, one point per request, so a slow point never leaves another
// rank idle while work remains.
//
// Messages (bytes over MpiLink): worker -> 0 REQUEST(n slots) at start and RESULT(outcome),
// which also asks for one more point; 0 -> worker ASSIGN(index, hash) and STOP.
#pragma once

#include <functional>
#include <vector>

#include "sweeps/mpi_link.h"
#include "sweeps/sweep_input.h"
#include "sweeps/progress.h"
#include "sweeps/sweep_store.h"

namespace orrery {

struct SweepRunOptions {
  int jobs = 1;                    // children at once on this rank
  std::vector<int> cpus;           // child_cpus(): a CPU per child slot; empty: unbound
  double flush_interval_s = 5;     // rewrite the HDF5 file at most this often while running
  ProgressMode progress = ProgressMode::kOff;  // rank 0 (sweeps/progress.h)
  double progress_interval_s = 10;             // kLines: a line at most this often
  std::function<void()> conclude;  // rank 0: every point finished, before the final write
};

struct SweepRunStats {
  int ran = 0;                   // points run by this session
  std::vector<int> ran_by_rank;  // of which, per rank
  bool interrupted = false;
  double wall_s = 0;
};

// Rank 0: runs every point the store lacks (first index of each distinct hash), records the
// outcomes, rewrites the output periodically and at the end (store.finish(), or
// store.write_output() when interrupted). `mpi` may be inactive.
SweepRunStats coordinate_sweep(SweepInput& in, SweepStore& store, const SweepRunOptions& opt,
                               MpiLink& mpi);

// Ranks > 0: runs what rank 0 assigns until told to stop. Returns false when interrupted.
bool serve_sweep(SweepInput& in, const SweepRunOptions& opt, MpiLink& mpi);

}  // namespace orrery
