// The flags that lift or change the process's run limits (common/input_limits.h RunLimits):
// --max-simulated-time, --no-size-limit, --max-ops, --max-flows, --max-memory. They write the
// limits while the command line is parsed, before any scenario is read; sweep points run in
// forked children and inherit them.
#pragma once

#include <CLI/CLI.hpp>

namespace orrery {

void add_limit_options(CLI::App* cmd);

}  // namespace orrery
