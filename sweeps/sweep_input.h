// A sweep's input: the scenario file with its --set overrides, split into the base scenario
// tree, the sweep section (expanded into points) and an optional plan section; and the
// building of one point's Scenario from them.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "scenario/scenario.h"
#include "sweeps/llm_search.h"
#include "sweeps/sweep_spec.h"

namespace orrery {

struct SweepInput {
  std::string path;  // the scenario file
  std::string text;  // verbatim file text plus one "# --set K=V" line per override
  std::vector<std::string> overrides;
  YAML::Node base;  // the scenario tree, overrides applied, without `sweep` and `plan`
  YAML::Node plan;  // the `plan` section (null when absent)
  std::string name;
  std::string output_file;  // output.file of the scenario ("" when absent)
  SweepSpec spec;
  std::vector<SweepPoint> points;
  LlmSearchSummary search;  // plan.search: the parallel plans added as an axis (llm_search.h)
};

// Reads, overrides and expands. Throws InputError naming the file, line and key.
SweepInput load_sweep_input(const std::string& path, const std::vector<std::string>& overrides);

// The scenario of one point. `tree` must be a private copy of the base tree (a forked child's
// own in.base, or fresh_base_tree()): the point's keys are written into it. Errors are
// rethrown as InputError saying which sweep entry set the offending key.
Scenario build_point_scenario(const SweepInput& in, const SweepPoint& point, YAML::Node tree,
                              const ScenarioBuildOptions& options = {});

// A new copy of the base tree (parsed again: yaml-cpp's Clone drops line numbers).
YAML::Node fresh_base_tree(const SweepInput& in);

// Checks every axis key by building one scenario that sets each of them (to its first value):
// an unknown key path is an InputError naming the sweep entry. Then builds point 0, whose
// errors (a bad value) are InputErrors too. Returns the platform summary of point 0.
std::string validate_sweep(const SweepInput& in);

// `message` (an InputError from building a point) restated from the sweep entry that set the
// key it names, or unchanged when no sweep key is involved.
std::string attribute_to_sweep(const std::string& message, const std::vector<Assignment>& sets,
                               const YAML::Node& base, const std::string& origin);

}  // namespace orrery
