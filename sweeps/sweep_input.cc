#include "sweeps/sweep_input.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "common/errors.h"
#include "common/input_file.h"
#include "common/yaml_reader.h"
#include "sweeps/yaml_path.h"

namespace orrery {
namespace {

std::string read_text(const std::string& path) {
  return read_input_file(path, "scenario file", kMaxYamlBytes);
}

// The scenario text as a tree, overrides applied, sweep and plan sections taken out.
YAML::Node parse_tree(const std::string& path, const std::string& file_text,
                      const std::vector<std::string>& overrides, YAML::Node* sweep,
                      YAML::Node* plan) {
  YAML::Node root = load_yaml_text(file_text, path);
  if (!root || root.IsNull()) throw InputError(path + ": the scenario is empty");
  if (!root.IsMap()) throw InputError(path + ": the scenario must be a mapping of keys to values");
  for (const auto& o : overrides) apply_override(root, o);
  if (sweep) *sweep = root["sweep"];
  const YAML::Node plan_section = root["plan"];
  if (plan) *plan = plan_section;
  root.remove("sweep");
  root.remove("plan");
  apply_llm_search_defaults(plan_section, root);
  return root;
}

// The file text up to the first "# --set" line appended by load_sweep_input.
std::string file_text_of(const SweepInput& in) {
  size_t n = in.text.size();
  for (size_t i = in.overrides.size(); i-- > 0;) {
    std::string line = "\n# --set " + in.overrides[i];
    if (n >= line.size() && in.text.compare(n - line.size(), line.size(), line) == 0)
      n -= line.size();
  }
  return in.text.substr(0, n);
}

// "file:12: key: message" or "file (--set): ..." -> "key: message".
std::string strip_location(const std::string& message, const std::string& origin) {
  if (message.compare(0, origin.size(), origin) != 0) return message;
  size_t colon = message.find(": ", origin.size());
  return colon == std::string::npos ? message : message.substr(colon + 2);
}

bool mentions(const std::string& message, const std::string& path) {
  return message.find("\"" + path + "\"") != std::string::npos ||
         message.find(" " + path + ":") != std::string::npos;
}

// A key inside a mapping the sweep set (a named value `workload: {...}`).
bool mentions_below(const std::string& message, const std::string& path) {
  return message.find("\"" + path + ".") != std::string::npos ||
         message.find(" " + path + ".") != std::string::npos;
}

// Writes the point's keys into `tree`. Mappings and lists are copied first: a later, deeper key
// of the same point would otherwise write into the sweep section itself, and so into every
// other point that uses the same value.
void apply(YAML::Node tree, const std::vector<Assignment>& sets) {
  for (const auto& a : sets) {
    const YAML::Node& v = a.value;
    // Values made by the program (a plan search's) have no line to keep; a copy keeps the
    // point's tree from sharing yaml-cpp's memory pool with a sweep of thousands of values,
    // which every later insert into the tree would merge again.
    const bool copy = v.IsMap() || v.IsSequence() || v.Mark().is_null();
    set_at_path(tree, a.key, copy ? YAML::Clone(v) : v, a.where);
  }
}

}  // namespace

std::string attribute_to_sweep(const std::string& message, const std::vector<Assignment>& sets,
                               const YAML::Node& base, const std::string& origin) {
  for (auto it = sets.rbegin(); it != sets.rend(); ++it) {
    // The key itself (a bad value), or a part of its path the scenario lacks (an unknown key
    // the sweep introduced).
    std::string prefix = it->key;
    for (;;) {
      bool introduced = prefix == it->key || !get_at_path(base, prefix).IsDefined();
      if ((introduced && mentions(message, prefix)) ||
          (prefix == it->key && mentions_below(message, prefix)))
        return it->where + ": " + it->source + " key \"" + it->key +
               "\" (set by the sweep): " + strip_location(message, origin);
      size_t dot = prefix.rfind('.');
      if (dot == std::string::npos) break;
      prefix.resize(dot);
    }
  }
  return message;
}

SweepInput load_sweep_input(const std::string& path, const std::vector<std::string>& overrides) {
  SweepInput in;
  in.path = path;
  in.overrides = overrides;
  std::string file_text = read_text(path);
  in.text = file_text;
  for (const auto& o : overrides) in.text += "\n# --set " + o;
  YAML::Node sweep;
  in.base = parse_tree(path, file_text, overrides, &sweep, &in.plan);
  YamlMap root(in.base, path);
  in.name = root.str("name", std::filesystem::path(path).stem().string());
  in.output_file = root.map("output").str("file", "");
  in.spec = parse_sweep_spec(sweep, path);
  in.search = expand_llm_search(in.plan, in.base, path);
  if (in.search.active) {
    // The plans vary fastest, after the scenario's own axes, which must leave their keys alone.
    SweepSpec plans = parse_sweep_spec(in.search.sweep, path);
    for (const auto& axis : in.spec.axes)
      for (const auto& value : axis.values)
        for (const auto& set : value.sets)
          for (const auto& key : plans.axes.front().values.front().sets)
            if (set.key == key.key)
              throw InputError(set.where + ": " + set.source + " sets \"" + set.key +
                               "\", which plan.search varies; search it there instead");
    for (auto& axis : plans.axes) {
      axis.source = "plan.search";
      for (auto& value : axis.values)
        for (auto& set : value.sets) set.source = "plan.search";
      in.spec.axes.push_back(std::move(axis));
    }
  }
  in.points = expand_sweep(in.spec, in.base, sweep_identity_skip_keys(), path);
  return in;
}

YAML::Node fresh_base_tree(const SweepInput& in) {
  return parse_tree(in.path, file_text_of(in), in.overrides, nullptr, nullptr);
}

namespace {

// A plan prices one workload's throughput per platform; several jobs have no one throughput to
// meet a target with (a sweep of them compares the cluster's figures instead).
Scenario refuse_jobs(Scenario sc, const SweepInput& in) {
  if (sc.jobs && in.plan && !in.plan.IsNull())
    throw InputError(in.path +
                     ": jobs: plans do not take scenarios of several jobs; sweep them and "
                     "compare the cluster's figures (docs/shared-clusters.md)");
  return sc;
}

// Errors of set_at_path already name the sweep entry; those of build_scenario do not.
Scenario build_unattributed(const SweepInput& in, const std::vector<Assignment>& sets,
                            const std::string& text, YAML::Node tree) {
  apply(tree, sets);
  ScenarioBuildOptions options;
  options.skip_out_of_memory = true;  // checking keys and values needs no graph
  return refuse_jobs(build_scenario(tree, in.path, text, options), in);
}

}  // namespace

Scenario build_point_scenario(const SweepInput& in, const SweepPoint& point, YAML::Node tree,
                              const ScenarioBuildOptions& options) {
  apply(tree, point.assignments);
  try {
    return refuse_jobs(build_scenario(tree, in.path, point.canonical, options), in);
  } catch (const InfeasibleError& e) {
    throw InfeasibleError(attribute_to_sweep(e.what(), point.assignments, in.base, in.path));
  } catch (const InputError& e) {
    throw InputError(attribute_to_sweep(e.what(), point.assignments, in.base, in.path));
  }
}

std::string validate_sweep(const SweepInput& in) {
  if (in.points.empty()) throw InputError(in.path + ": the sweep has no points");
  // Every key any axis sets, at its first value, plus point 0's derived keys: one build
  // checks all key paths (a one_at_a_time key is not set in point 0).
  std::vector<Assignment> probe;
  std::map<std::string, size_t> seen;
  for (const auto& axis : in.spec.axes)
    for (const auto& v : axis.values)
      for (const auto& a : v.sets)
        if (seen.emplace(a.key, probe.size()).second) probe.push_back(a);
  for (const auto& a : in.points[0].assignments)
    if (a.source == "sweep.derived") probe.push_back(a);
  std::stable_sort(probe.begin(), probe.end(), [](const Assignment& x, const Assignment& y) {
    return std::count(x.key.begin(), x.key.end(), '.') <
           std::count(y.key.begin(), y.key.end(), '.');
  });
  try {
    build_unattributed(in, probe, in.points[0].canonical, fresh_base_tree(in));
  } catch (const InputError& e) {
    // Only an unknown key the sweep introduced is fatal here: a bad value may come from this
    // mix of first values, which no point has (one_at_a_time), and point 0 decides below.
    std::string attributed = attribute_to_sweep(e.what(), probe, in.base, in.path);
    if (attributed != e.what() && attributed.find("unknown key") != std::string::npos)
      throw InputError(attributed);
  }
  // The first point that builds decides; points asking for plans the GPUs cannot run are
  // recorded as infeasible when the sweep runs, so they are passed over here.
  for (size_t i = 0; i < in.points.size(); ++i) {
    try {
      ScenarioBuildOptions options;
      options.skip_out_of_memory = true;
      return build_point_scenario(in, in.points[i], fresh_base_tree(in), options).platform_summary;
    } catch (const InfeasibleError& e) {
      if (i + 1 < in.points.size()) continue;
      // A plan search reports that no plan fits; a sweep of infeasible points is a mistake.
      if (in.search.active) return "every plan is infeasible (" + std::string(e.what()) + ")";
      throw InputError("every point of the sweep is infeasible; the last: " +
                       std::string(e.what()));
    } catch (const InputError& e) {
      if (in.spec.axes.empty() && in.spec.derived.empty()) throw;
      throw InputError("sweep point " + std::to_string(i) + ": " + e.what());
    }
  }
  throw InputError(in.path + ": the sweep has no points");
}

}  // namespace orrery
