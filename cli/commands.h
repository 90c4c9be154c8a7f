// The `orrery` subcommands. Each command family lives in its own file and registers its
// subcommands on the CLI11 app; main.cc calls every register_* function once and then runs the
// handler of the subcommand that was parsed. A handler returns the process exit status
// (0 ok, 2 bad input, 1 internal error); exceptions are mapped in main.cc (InputError -> 2).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace orrery {

struct Command {
  CLI::App* app;                 // the (sub)subcommand
  std::function<int()> handler;  // runs when `app` was the one parsed
};
using CommandList = std::vector<Command>;

// The process's own command line, stored in result files so they explain themselves.
std::string current_command_line();

// `run` and `validate` (cli/run_command.cc).
void register_run_commands(CLI::App& app, CommandList& out);

}  // namespace orrery
