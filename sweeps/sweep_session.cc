#include "sweeps/sweep_session.h"

#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "common/errors.h"
#include "orrery_version.h"
#include "sweeps/child_pool.h"
#include "sweeps/interrupt.h"
#include "sweeps/mpi_link.h"
#include "sweeps/point_detail.h"
#include "sweeps/sweep_driver.h"
#include "sweeps/yaml_path.h"

namespace orrery {
namespace {

std::string params_line(const SweepPoint& p) {
  std::string s;
  for (const auto& [k, v] : p.params) {
    std::string value = v.size() > 60 ? v.substr(0, 57) + "..." : v;
    s += (s.empty() ? "" : "  ") + k + "=" + value;
  }
  return s.empty() ? "(the scenario as written)" : s;
}

void print_failures(const SweepInput& in, const SweepStore& store) {
  int shown = 0, failed = store.points_failed();
  for (const auto& p : in.points) {
    const PointOutcome* o = store.outcome(p.hash);
    if (!o || o->ok || o->infeasible) continue;
    if (++shown > 5) {
      std::printf("  ... %d more failed points: orrery report %s\n", failed - 5,
                  store.output().c_str());
      break;
    }
    std::string error = o->error.size() > 300 ? o->error.substr(0, 297) + "..." : o->error;
    std::printf("  failed point %lld (%s):\n    %s\n", static_cast<long long>(p.index),
                params_line(p).c_str(), error.c_str());
  }
}

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v ? std::atoi(v) : fallback;
}

SweepRunOptions run_options(const SweepSessionArgs& args, const MpiLink& mpi, int jobs) {
  SweepRunOptions opt;
  opt.jobs = jobs;
  // Ranks on one node: Open MPI says how many and which; other launchers bind ranks anyway.
  if (args.bind)
    opt.cpus = child_cpus(jobs, env_int("OMPI_COMM_WORLD_LOCAL_RANK", 0),
                          mpi.size() > 1 ? env_int("OMPI_COMM_WORLD_LOCAL_SIZE", 1) : 1);
  return opt;
}

int coordinate(const SweepSessionArgs& args, const SweepHooks& hooks, SweepInput& in, MpiLink& mpi,
               int jobs) {
  std::string output = args.output.empty() ? in.output_file : args.output;
  if (output.empty())
    throw InputError(in.path +
                     ": a sweep needs a results file: give -o FILE.h5 or output.file in the "
                     "scenario");
  const std::string platform = validate_sweep(in);
  ResultFileMeta meta{in.text, ORRERY_VERSION, platform, args.created_by, "", 0.0, 0.0, "", {}};
  SweepStore store(in, output, meta);
  store.open(args.fresh, args.retry_failed);
  if (hooks.prepare) hooks.prepare(in, store);

  SweepRunOptions opt = run_options(args, mpi, jobs);
  opt.flush_interval_s = args.flush_interval_s;
  opt.progress = args.quiet                  ? ProgressMode::kOff
                 : ::isatty(STDERR_FILENO) ? ProgressMode::kTerminal
                                           : ProgressMode::kLines;
  opt.progress_interval_s = args.progress_interval_s;
  const int resumed = store.points_done();
  if (hooks.conclude) opt.conclude = [&] { hooks.conclude(in, store); };
  SweepRunStats stats = coordinate_sweep(in, store, opt, mpi);

  const int total = static_cast<int>(in.points.size());
  if (stats.interrupted) {
    std::fprintf(stderr,
                 "orrery: interrupted by %s: %d of %d points done, saved in %s; run the same "
                 "command again to resume\n",
                 InterruptGuard::signal_number() == SIGINT   ? "SIGINT"
                 : InterruptGuard::signal_number() == SIGHUP ? "SIGHUP"
                                                             : "SIGTERM", store.points_done(),
                 total, output.c_str());
    // The other ranks are being torn down too: MPI_Finalize could wait for them forever.
    if (mpi.size() > 1) MpiLink::leave(kExitInterrupted);
    return kExitInterrupted;
  }
  if (!args.quiet) {
    std::printf("Sweep      %s: %d point(s), %d run now", in.name.c_str(), total, stats.ran);
    if (resumed > 0) std::printf(", %d already done", resumed);
    if (mpi.size() > 1) {
      std::printf(" (%d ranks x %d job(s); run per rank:", mpi.size(), jobs);
      for (size_t r = 0; r < stats.ran_by_rank.size(); ++r)
        std::printf("%s%d", r ? ", " : " ", stats.ran_by_rank[r]);
      std::printf(")");
    } else {
      std::printf(" (%d job(s))", jobs);
    }
    std::printf(" in %.2f s\n", stats.wall_s);
    const int infeasible = store.points_infeasible();
    std::printf("Results    %s: %d ok, %d failed", output.c_str(),
                store.points_done() - store.points_failed() - infeasible, store.points_failed());
    if (infeasible > 0)
      std::printf(", %d infeasible (a plan the GPUs cannot run: orrery report lists why)",
                  infeasible);
    std::printf("\n");
    print_failures(in, store);
    if (hooks.report) hooks.report(in, store);
    std::printf("Report     orrery report %s\n", output.c_str());
  }
  return store.points_failed() > 0 ? kExitPointsFailed : 0;
}

int jobs_of(int requested) {
  if (requested > 0) return requested;
  long n = ::sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

}  // namespace

void print_points(const SweepInput& in) {
  std::printf("%s: %zu point(s)\n", in.name.c_str(), in.points.size());
  for (const auto& p : in.points)
    std::printf("%6lld  %s  %s\n", static_cast<long long>(p.index), hash_hex(p.hash).c_str(),
                params_line(p).c_str());
}

int run_sweep_session(const SweepSessionArgs& args, const SweepHooks& hooks) {
  if (args.jobs < 0) throw InputError("-j " + std::to_string(args.jobs) + ": must be 0 or more");
  if (args.point_given) {
    SweepInput in = load_sweep_input(args.scenario, args.overrides);
    return run_point_detail(in, {args.point, args.output, args.trace, args.created_by, args.quiet});
  }
  if (args.dry_run) {
    SweepInput in = load_sweep_input(args.scenario, args.overrides);
    validate_sweep(in);
    if (hooks.list)
      hooks.list(in);
    else
      print_points(in);
    return 0;
  }
  MpiLink mpi;
  try {
    SweepInput in = load_sweep_input(args.scenario, args.overrides);
    const int jobs = jobs_of(args.jobs);
    if (mpi.rank() == 0) return coordinate(args, hooks, in, mpi, jobs);
    if (!serve_sweep(in, run_options(args, mpi, jobs), mpi)) MpiLink::leave(kExitInterrupted);
    return 0;
  } catch (const std::exception& e) {
    if (!mpi.active()) throw;
    // The first rank to fail ends the job; a file one node cannot read fails on that rank
    // only, so every rank says what went wrong, naming itself when it is not rank 0.
    bool input = dynamic_cast<const InputError*>(&e) != nullptr;
    std::string who = mpi.rank() == 0 ? "" : " (rank " + std::to_string(mpi.rank()) + ")";
    std::fprintf(stderr, "orrery%s: %s%s\n", who.c_str(),
                 input ? "error: " : "internal error: ", e.what());
    mpi.abort(input ? 2 : 1);
  }
}

}  // namespace orrery
