// Options shared by `orrery sweep` and `orrery plan` (both run a sweep session).
#pragma once

#include <CLI/CLI.hpp>

#include "sweeps/sweep_session.h"

namespace orrery {

// The scenario argument and --set, -o, -j, --dry-run, --fresh, --retry-failed,
// --flush-interval, -q; `plan` words the help for `orrery plan` (candidates, prices).
void add_sweep_options(CLI::App* cmd, SweepSessionArgs& args, bool plan);

}  // namespace orrery
