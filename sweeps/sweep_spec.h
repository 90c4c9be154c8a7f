// The `sweep:` section of a scenario and its expansion into points.
//
//   sweep:
//     grid:           {KEY: [v1, v2], KEY2: [...]}        # every combination
//     zip:            [{KEY: [a, b], KEY2: [c, d]}]       # lists advanced together, one axis each
//     named:          {AXIS: {LABEL: {KEY: v, ...}}}       # a label stands for several keys
//     one_at_a_time:  {KEY: [v1, v2], KEY2: [...]}        # the base point, then each key alone
//     derived:        {KEY: "${OTHER.KEY} * 8"}           # computed per point, after the axes
//
// KEY is a dotted scenario path (platform.server.nic.bandwidth). Axes combine as a product in
// the order they are written, the last one varying fastest. The syntax reference is
// docs/sweeps.md.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sweeps/yaml_path.h"

namespace orrery {

// One scenario key a point sets.
struct Assignment {
  std::string key;     // dotted path
  NodeHandle value;    // shared with the sweep section, so errors can point at its line
  std::string source;  // "sweep.grid", "sweep.named.gpu", ... for messages
  std::string where;   // "file:line" of the entry in the sweep section
};

struct SweepAxisValue {
  std::vector<Assignment> sets;
  std::map<std::string, std::string> params;
};

struct SweepAxis {
  std::string source;  // "sweep.grid.KEY", "sweep.zip[0]", "sweep.named.AXIS", ...
  std::vector<SweepAxisValue> values;
  // one_at_a_time: every point records the value of each of these keys (base value or "").
  std::vector<std::string> reported_keys;
};

struct DerivedKey {
  std::string key;
  std::string expression;
  std::string where;
};

struct SweepSpec {
  std::vector<SweepAxis> axes;
  std::vector<DerivedKey> derived;
  std::vector<std::string> named_axes;  // axis names, usable as ${name} in derived keys
  size_t point_count() const;
};

struct SweepPoint {
  int64_t index = 0;
  // Applied in order: shallower paths first (a whole mapping before a key inside it), derived
  // keys last.
  std::vector<Assignment> assignments;
  std::map<std::string, std::string> params;  // axis key or name -> value text
  std::string canonical;  // canonical YAML of the point's scenario (yaml_path.h)
  uint64_t hash = 0;      // fnv1a64(canonical): the point's identity on disk
};

// Parses a sweep section (null: no sweep, one point). Throws InputError naming the file, the
// line and the sweep key for malformed axes, lists of unequal length in a zip, and a key set by
// two axes.
SweepSpec parse_sweep_spec(const YAML::Node& sweep, const std::string& origin);

// All points of `spec` over `base` (the scenario tree without its sweep section). Root keys in
// `skip` are left out of the canonical text (they do not change results). Throws InputError
// for a key path that runs through a value that is not a mapping, and for derived keys that
// cannot be evaluated.
std::vector<SweepPoint> expand_sweep(const SweepSpec& spec, const YAML::Node& base,
                                     const std::vector<std::string>& skip,
                                     const std::string& origin);

// The value `path` has in a point: the last of its assignments at or above the path, else the
// base tree, else (for platform keys) the platform preset. Invalid (IsDefined() false) when
// none has it (a built-in default).
YAML::Node point_value(const YAML::Node& base, const SweepPoint& point, const std::string& path);

// The root keys that never change a result: left out of a point's identity.
const std::vector<std::string>& sweep_identity_skip_keys();

// Parameter names the sweep adds to every point's RunRecord::params.
inline constexpr const char* kParamIndex = "sweep.index";
inline constexpr const char* kParamHash = "sweep.hash";
inline constexpr const char* kParamStatus = "sweep.status";  // "ok", "failed", "infeasible"
inline constexpr const char* kParamError = "sweep.error";
inline constexpr const char* kParamVaried = "sweep.varied";  // one_at_a_time: key, or "base"

}  // namespace orrery
