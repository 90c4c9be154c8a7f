// `orrery`: one binary, subcommands. Exit status: 0 ok, 2 bad input (the message names the file,
// line or item), 1 internal error.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>

#include "cli/commands.h"
#include "engine/errors.h"
#include "orrery_version.h"

namespace {

void add_scenario_options(CLI::App* cmd, orrery::RunArgs* a) {
  cmd->add_option("scenario", a->scenario, "Scenario YAML file")->required();
  cmd->add_option("--set", a->overrides,
                  "Override a scenario key, e.g. --set platform.server.gpus=8 (repeatable)");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Orrery predicts deep-learning training iteration time on GPU clusters by "
      "discrete-event simulation on SimGrid."};
  app.set_version_flag("--version", std::string("orrery ") + ORRERY_VERSION);
  app.require_subcommand(1);

  orrery::RunArgs args;
  for (int i = 0; i < argc; ++i) args.command_line += (i ? " " : "") + std::string(argv[i]);

  auto* run = app.add_subcommand(
      "run", "Simulate one iteration of a scenario and print where the time goes");
  add_scenario_options(run, &args);
  run->add_option("-o,--output", args.output, "HDF5 results file (replaces output.file)");
  run->add_option("--trace", args.trace,
                  "Chrome trace JSON of the timeline (chrome://tracing, Perfetto)");
  run->add_flag("--no-timeline", args.no_timeline,
                "Do not store the per-op timeline in the results");
  run->add_flag("-q,--quiet", args.quiet, "Print nothing but errors");

  auto* validate =
      app.add_subcommand("validate", "Check a scenario and the files it names without simulating");
  add_scenario_options(validate, &args);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  try {
    if (*run) return orrery::run_command(args);
    if (*validate) return orrery::validate_command(args);
  } catch (const orrery::InputError& e) {
    std::fprintf(stderr, "orrery: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "orrery: internal error: %s\n", e.what());
    return 1;
  }
  return 0;
}
