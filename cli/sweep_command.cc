// `orrery sweep`: every point of a scenario's sweep section, each in its own process, resumable,
// shared among MPI ranks under mpirun (sweeps/sweep_session.h, docs/sweeps.md).
#include "cli/commands.h"
#include "cli/limit_options.h"
#include "cli/sweep_args.h"
#include "common/data_dir.h"
#include "sweeps/sweep_session.h"

namespace orrery {

void add_sweep_options(CLI::App* cmd, SweepSessionArgs& args, bool plan) {
  add_limit_options(cmd);
  // `orrery plan` runs a sweep session too; its help speaks of candidates and prices.
  const char* point = plan ? "candidate" : "point";
  cmd->add_option("scenario", args.scenario,
                  plan ? "Plan file: a scenario with a plan section (target, prices) and a "
                         "sweep section spanning the candidate platforms"
                       : "Scenario YAML file with a sweep section (or a shipped one's name)")
      ->required()
      ->transform([](std::string s) { return find_scenario_file(s); });
  cmd->add_option("--set", args.overrides,
                  std::string("Override a scenario key for every ") + point +
                      ", e.g. --set workload.layers=8 (repeatable)");
  cmd->add_option("-o,--output", args.output, "HDF5 results file (replaces output.file)");
  cmd->add_option("-j,--jobs", args.jobs,
                  std::string(plan ? "Candidates" : "Points") +
                      " simulated at once (per MPI rank); 0: one per CPU")
      ->default_val(1);
  cmd->add_flag("!--no-bind", args.bind,
                "Do not bind each simulation to a CPU (by default, with -j > 1, the k-th "
                "running simulation is bound to the k-th CPU this process may use)");
  cmd->add_flag("--dry-run", args.dry_run,
                plan ? "List every candidate with its price and check the plan; simulate nothing"
                     : "List the points and check the sweep; run nothing");
  // The option's presence, not its value, says one point runs: --point -1 is refused with the
  // sweep's range, not taken for "no point".
  cmd->add_option_function<int64_t>(
      "--point",
      [&args](const int64_t& n) {
        args.point = n;
        args.point_given = true;
      },
      std::string("Simulate only ") + point + " N, with its per-op timeline, into -o FILE.h5");
  cmd->add_option("--trace", args.trace, "With --point: Chrome trace JSON of its timeline");
  cmd->add_flag("--fresh", args.fresh,
                "Discard earlier results in the output instead of resuming from them");
  cmd->add_flag("--retry-failed", args.retry_failed,
                std::string("Run ") + point + "s that failed before again");
  cmd->add_option("--flush-interval", args.flush_interval_s,
                  "Seconds between rewrites of the HDF5 file while the sweep runs")
      ->default_val(5.0);
  cmd->add_option("--progress-interval", args.progress_interval_s,
                  "When stderr is not a terminal (mpirun, nohup, Slurm): seconds between "
                  "progress lines (points done / total, ETA)")
      ->default_val(10.0)
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("-q,--quiet", args.quiet, "Print nothing but errors");
}

void register_sweep_commands(CLI::App& app, CommandList& out) {
  static SweepSessionArgs args;
  auto* sweep = app.add_subcommand(
      "sweep", "Run every point of a scenario's sweep (resumable; MPI-parallel under mpirun)");
  add_sweep_options(sweep, args, false);
  sweep->footer(
      "Each point runs in its own process; results go to one HDF5 file (output.file or -o), "
      "rewritten as points finish, and a later run resumes from it. See docs/sweeps.md.");
  out.push_back({sweep, [] {
                   args.created_by = current_command_line();
                   return run_sweep_session(args);
                 }});
}

}  // namespace orrery
