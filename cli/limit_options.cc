#include "cli/limit_options.h"

#include <cmath>
#include <string>

#include "common/input_limits.h"
#include "common/units.h"

namespace orrery {
namespace {

// Simulated time limits run to days: accept min, h and d besides the units of parse_time.
double parse_duration(const std::string& text) {
  const std::pair<const char*, double> long_units[] = {{"min", 60}, {"h", 3600}, {"d", 86400}};
  for (const auto& [unit, factor] : long_units) {
    const std::string u = unit;
    if (text.size() > u.size() && text.compare(text.size() - u.size(), u.size(), u) == 0) {
      double v = 0;
      if (parse_time(text.substr(0, text.size() - u.size()) + "s", &v)) return v * factor;
    }
  }
  double v = 0;
  if (!parse_time(text, &v) || !(v > 0) || !std::isfinite(v))
    throw CLI::ValidationError("--max-simulated-time",
                               "expected a positive duration such as 30d, 12h or 3600s, got \"" +
                                   text + "\"");
  return v;
}

double parse_count(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(v >= 1) || !std::isfinite(v))
    throw CLI::ValidationError(flag, "expected a count >= 1 such as 5e7, got \"" + text + "\"");
  return v;
}

}  // namespace

void add_limit_options(CLI::App* cmd) {
  RunLimits& lim = run_limits();
  const std::string group = "Limits";
  cmd->add_option_function<std::string>(
         "--max-simulated-time",
         [&lim](const std::string& s) { lim.max_simulated_seconds = parse_duration(s); },
         "Stop a simulation whose simulated time passes this (default 30d)")
      ->group(group);
  cmd->add_flag_function(
         "--no-size-limit", [&lim](std::int64_t) { lim.size_limits = false; },
         "Build and simulate however many ops, flows and bytes the scenario needs")
      ->group(group);
  cmd->add_option_function<std::string>(
         "--max-ops", [&lim](const std::string& s) { lim.max_ops = parse_count("--max-ops", s); },
         "Refuse workloads of more execution-graph ops than this (default 2e7)")
      ->group(group);
  cmd->add_option_function<std::string>(
         "--max-flows",
         [&lim](const std::string& s) { lim.max_activities = parse_count("--max-flows", s); },
         "Refuse simulations of more activities (ops and collective flows) than this "
         "(default 1e8)")
      ->group(group);
  cmd->add_option_function<std::string>(
         "--max-memory",
         [&lim](const std::string& s) {
           double v = 0;
           if (!parse_size(s, &v) || !(v > 0) || !std::isfinite(v))
             throw CLI::ValidationError("--max-memory",
                                        "expected a size such as 32GiB, got \"" + s + "\"");
           lim.max_memory_bytes = v;
         },
         "Refuse scenarios whose estimated memory passes this (default 16GiB)")
      ->group(group);
  cmd->add_option_function<std::string>(
         "--max-points",
         [&lim](const std::string& s) { lim.max_points = parse_count("--max-points", s); },
         "Refuse sweeps and plans of more points than this (default 1e5)")
      ->group(group);
}

}  // namespace orrery
