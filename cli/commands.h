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
// `sweep` (cli/sweep_command.cc).
void register_sweep_commands(CLI::App& app, CommandList& out);
// `plan` (cli/plan_command.cc).
void register_plan_commands(CLI::App& app, CommandList& out);
// `report` (cli/report_command.cc).
void register_report_commands(CLI::App& app, CommandList& out);
// `analyze` and `devices` (cli/analyze_command.cc).
void register_analyze_commands(CLI::App& app, CommandList& out);
// `profile import` and `profile show` (cli/profile_command.cc).
void register_profile_commands(CLI::App& app, CommandList& out);
// `platform list|show|export|bench` (cli/platform_command.cc).
void register_platform_commands(CLI::App& app, CommandList& out);
// `workload show`, `workload list`, `workload export` (cli/workload_command.cc).
void register_workload_commands(CLI::App& app, CommandList& out);
// `accuracy` (cli/accuracy_command.cc).
void register_accuracy_commands(CLI::App& app, CommandList& out);
// `cost` (cli/cost_command.cc).
void register_cost_commands(CLI::App& app, CommandList& out);
// `bench collective` (cli/bench_command.cc).
void register_bench_commands(CLI::App& app, CommandList& out);
// `llm list` and `llm memory` (cli/llm_command.cc).
void register_llm_commands(CLI::App& app, CommandList& out);
// `frameworks` (cli/framework_command.cc).
void register_framework_commands(CLI::App& app, CommandList& out);
// `estimator train` and `estimator eval` (cli/estimator_command.cc).
void register_estimator_commands(CLI::App& app, CommandList& out);

}  // namespace orrery
