// `orrery`: one binary, subcommands. Exit status: 0 ok, 2 bad input (the message names the file,
// line or item), 1 internal error.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>

#include "cli/commands.h"
#include "common/errors.h"
#include "orrery_version.h"

namespace {

// Ends the process once a command is done, without exit handlers: every file a command writes
// is closed by then, and SimGrid's handler would tear down the platform of the replay it ran
// (half a million links for 16,384 GPUs: 0.5 s, a tenth of such a run) only for the process to
// give the memory back anyway.
[[noreturn]] void finish(int status) {
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(status);
}

int run_commands(const orrery::CommandList& commands) {
  try {
    for (const auto& c : commands)
      if (c.app->parsed()) return c.handler();
  } catch (const orrery::InputError& e) {
    std::fprintf(stderr, "orrery: error: %s\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    // Only reachable past the size guards (engine/size_estimate.h), i.e. with them lifted.
    std::fprintf(stderr,
                 "orrery: error: out of memory: the scenario needs more than this machine has "
                 "(the size limits, if lifted with --no-size-limit or --max-*, would have "
                 "refused it)\n");
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "orrery: internal error: %s\n", e.what());
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Orrery predicts deep-learning training iteration time on GPU clusters by "
      "discrete-event simulation on SimGrid."};
  app.set_version_flag("--version", std::string("orrery ") + ORRERY_VERSION);
  app.require_subcommand(1);

  orrery::CommandList commands;
  orrery::register_run_commands(app, commands);
  orrery::register_sweep_commands(app, commands);
  orrery::register_plan_commands(app, commands);
  orrery::register_report_commands(app, commands);
  orrery::register_analyze_commands(app, commands);
  orrery::register_framework_commands(app, commands);
  orrery::register_profile_commands(app, commands);
  orrery::register_platform_commands(app, commands);
  orrery::register_workload_commands(app, commands);
  orrery::register_estimator_commands(app, commands);
  orrery::register_cost_commands(app, commands);
  orrery::register_bench_commands(app, commands);
  orrery::register_llm_commands(app, commands);
  orrery::register_accuracy_commands(app, commands);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  finish(run_commands(commands));
}
