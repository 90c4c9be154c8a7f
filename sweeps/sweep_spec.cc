#include "sweeps/sweep_spec.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "common/errors.h"
#include "common/input_limits.h"
#include "common/size_guard.h"
#include "common/yaml_reader.h"
#include "platforms/device_spec.h"
#include "platforms/platform_spec.h"
#include "sweeps/expression.h"
#include "sweeps/yaml_path.h"

namespace orrery {
namespace {

constexpr size_t kMaxPoints = 10'000'000;

std::string where_of(const std::string& origin, const YAML::Node& n) {
  if (!n || n.Mark().line < 0) return origin;
  return origin + ":" + std::to_string(n.Mark().line + 1);
}

size_t depth(const std::string& path) { return std::count(path.begin(), path.end(), '.'); }

class Parser {
 public:
  explicit Parser(std::string origin) : origin_(std::move(origin)) {}

  SweepSpec parse(const YAML::Node& sweep) {
    if (!sweep.IsMap())
      fail(sweep, "sweep", "expected a mapping with grid, zip, named, one_at_a_time or derived");
    for (auto it = sweep.begin(); it != sweep.end(); ++it) {
      const std::string section = it->first.Scalar();
      const YAML::Node& body = it->second;
      if (section == "grid") {
        grid(body);
      } else if (section == "zip") {
        zip(body);
      } else if (section == "named") {
        named(body);
      } else if (section == "one_at_a_time") {
        one_at_a_time(body);
      } else if (section == "derived") {
        derived(body);
      } else {
        fail(it->first, "sweep." + section,
             "unknown key (expected one of: derived, grid, named, one_at_a_time, zip)");
      }
    }
    for (const auto& name : spec_.named_axes)
      if (owner_.count(name))
        fail(sweep, "sweep.named." + name,
             "the axis name is also a key set by " + owner_[name] + "; rename the axis");
    if (spec_.point_count() > kMaxPoints)
      fail(sweep, "sweep",
           "expands to more than " + std::to_string(kMaxPoints) + " points; split the sweep");
    // Refused before the points are built: each is a scenario to write out and hash first.
    const RunLimits& lim = run_limits();
    const double points = static_cast<double>(spec_.point_count());
    if (lim.size_limits && points > lim.max_points)
      fail(sweep, "sweep",
           "expands to " + approximate_count(points) + " points, over the limit of " +
               approximate_count(lim.max_points) + " (listing them alone takes about " +
               approximate_count(std::ceil(points * 1e-4)) +
               " s); split the sweep, or lift the limit with --max-points N");
    return std::move(spec_);
  }

 private:
  [[noreturn]] void fail(const YAML::Node& at, const std::string& key,
                         const std::string& message) const {
    throw InputError(where_of(origin_, at) + ": " + key + ": " + message);
  }

  // A key one axis sets; two axes setting one key would make the point order decide.
  Assignment assign(const YAML::Node& key_node, const YAML::Node& value,
                    const std::string& source) {
    const std::string key = key_node.Scalar();
    const std::string where = where_of(origin_, key_node);
    split_key_path(key, where, source + " key");
    auto [it, inserted] = owner_.emplace(key, source);
    if (!inserted && it->second != source)
      fail(key_node, source + "." + key,
           "is also set by " + it->second + "; set a key in one place");
    return {key, value, source, where_of(origin_, value ? value : key_node)};
  }

  const YAML::Node& list(const YAML::Node& key_node, const YAML::Node& values,
                         const std::string& source) {
    if (!values.IsSequence() || values.size() == 0)
      fail(key_node, source + "." + key_node.Scalar(),
           "expected a non-empty list of values, e.g. [10Gbps, 25Gbps]");
    return values;
  }

  void require_map(const YAML::Node& n, const std::string& key, const char* what) {
    if (!n.IsMap() || n.size() == 0) fail(n, key, std::string("expected ") + what);
  }

  void grid(const YAML::Node& body) {
    require_map(body, "sweep.grid", "a mapping of scenario keys to lists of values");
    for (auto it = body.begin(); it != body.end(); ++it) {
      SweepAxis axis;
      axis.source = "sweep.grid." + it->first.Scalar();
      for (const auto& item : list(it->first, it->second, "sweep.grid")) {
        SweepAxisValue v;
        v.sets.push_back(assign(it->first, item, "sweep.grid"));
        v.params[it->first.Scalar()] = node_text(item);
        axis.values.push_back(std::move(v));
      }
      spec_.axes.push_back(std::move(axis));
    }
  }

  void zip_group(const YAML::Node& group, const std::string& source) {
    require_map(group, source, "a mapping of scenario keys to lists of equal length");
    SweepAxis axis;
    axis.source = source;
    size_t length = 0;
    std::string first_key;
    for (auto it = group.begin(); it != group.end(); ++it) {
      const YAML::Node& values = list(it->first, it->second, source);
      if (first_key.empty()) {
        first_key = it->first.Scalar();
        length = values.size();
        axis.values.resize(length);
      } else if (values.size() != length) {
        fail(it->first, source + "." + it->first.Scalar(),
             "has " + std::to_string(values.size()) + " values but " + first_key + " has " +
                 std::to_string(length) + "; zipped lists advance together and need equal lengths");
      }
      for (size_t i = 0; i < length; ++i) {
        axis.values[i].sets.push_back(assign(it->first, values[i], source));
        axis.values[i].params[it->first.Scalar()] = node_text(values[i]);
      }
    }
    spec_.axes.push_back(std::move(axis));
  }

  void zip(const YAML::Node& body) {
    if (body.IsMap()) return zip_group(body, "sweep.zip");
    if (!body.IsSequence() || body.size() == 0)
      fail(body, "sweep.zip", "expected a list of mappings of scenario keys to lists");
    for (size_t i = 0; i < body.size(); ++i)
      zip_group(body[i], "sweep.zip[" + std::to_string(i) + "]");
  }

  void named(const YAML::Node& body) {
    require_map(body, "sweep.named", "a mapping of axis names to labelled values");
    for (auto it = body.begin(); it != body.end(); ++it) {
      const std::string name = it->first.Scalar();
      const std::string source = "sweep.named." + name;
      if (name.empty()) fail(it->first, source, "an axis needs a name");
      if (std::find(spec_.named_axes.begin(), spec_.named_axes.end(), name) !=
          spec_.named_axes.end())
        fail(it->first, source, "axis name used twice");
      require_map(it->second, source, "a mapping of labels to {scenario key: value} mappings");
      SweepAxis axis;
      axis.source = source;
      for (auto label = it->second.begin(); label != it->second.end(); ++label) {
        const std::string label_source = source + "." + label->first.Scalar();
        require_map(label->second, label_source, "a mapping of scenario keys to values");
        SweepAxisValue v;
        for (auto kv = label->second.begin(); kv != label->second.end(); ++kv)
          v.sets.push_back(assign(kv->first, kv->second, source));
        v.params[name] = label->first.Scalar();
        axis.values.push_back(std::move(v));
      }
      spec_.named_axes.push_back(name);
      spec_.axes.push_back(std::move(axis));
    }
  }

  void one_at_a_time(const YAML::Node& body) {
    require_map(body, "sweep.one_at_a_time", "a mapping of scenario keys to lists of values");
    SweepAxis axis;
    axis.source = "sweep.one_at_a_time";
    SweepAxisValue base;
    base.params[kParamVaried] = "base";
    axis.values.push_back(base);
    for (auto it = body.begin(); it != body.end(); ++it) {
      const std::string key = it->first.Scalar();
      axis.reported_keys.push_back(key);
      for (const auto& item : list(it->first, it->second, axis.source)) {
        SweepAxisValue v;
        v.sets.push_back(assign(it->first, item, axis.source));
        v.params[key] = node_text(item);
        v.params[kParamVaried] = key;
        axis.values.push_back(std::move(v));
      }
    }
    spec_.axes.push_back(std::move(axis));
  }

  void derived(const YAML::Node& body) {
    require_map(body, "sweep.derived", "a mapping of scenario keys to expressions");
    for (auto it = body.begin(); it != body.end(); ++it) {
      const std::string key = it->first.Scalar();
      if (!it->second.IsScalar())
        fail(it->second, "sweep.derived." + key,
             "expected an expression such as \"${platform.servers} * 8\"");
      Assignment a = assign(it->first, it->second, "sweep.derived");
      spec_.derived.push_back({key, it->second.Scalar(), a.where});
    }
  }

  std::string origin_;
  SweepSpec spec_;
  std::map<std::string, std::string> owner_;  // key -> the axis source that sets it
};

// The value `path` has in the point: the last assignment at or above it, else the base tree.
YAML::Node written_value(const YAML::Node& base, const std::vector<Assignment>& sets,
                         const std::string& path) {
  for (auto it = sets.rbegin(); it != sets.rend(); ++it) {
    if (it->key == path) return it->value;
    if (path.compare(0, it->key.size() + 1, it->key + ".") == 0) {
      YAML::Node below = get_at_path(it->value, path.substr(it->key.size() + 1));
      if (below.IsDefined() || !it->value.get().IsMap()) return below;
      break;  // a mapping the sweep set without this key: the preset may still have it
    }
  }
  return get_at_path(base, path);
}

// The platform preset's value of a platform key the scenario does not write, so derived keys
// and one_at_a_time base values can use it ("${platform.server.gpu.flops}").
YAML::Node preset_value(const YAML::Node& base, const std::vector<Assignment>& sets,
                        const std::string& path) {
  static const std::string prefix = "platform.";
  if (path.compare(0, prefix.size(), prefix) != 0) return YAML::Node(YAML::NodeType::Undefined);
  YAML::Node name = written_value(base, sets, "platform.preset");
  if (!name.IsDefined() || !name.IsScalar()) return YAML::Node(YAML::NodeType::Undefined);
  static std::map<std::string, YAML::Node> presets;
  auto it = presets.find(name.Scalar());
  if (it == presets.end()) {
    YAML::Node tree(YAML::NodeType::Undefined);
    try {
      tree = load_yaml_text(platform_preset_yaml(name.Scalar()), "preset " + name.Scalar());
    } catch (const InputError&) {
      // An unknown preset is reported when the point's scenario is built.
    }
    it = presets.emplace(name.Scalar(), tree).first;
  }
  YAML::Node v = get_at_path(it->second, path.substr(prefix.size()));
  static const std::string gpu = "platform.server.gpu.";
  if (v.IsDefined() || path.compare(0, gpu.size(), gpu) != 0) return v;
  // A GPU rate the preset leaves to its device spec (platforms/devices/).
  YAML::Node model = written_value(base, sets, gpu + "model");
  if (!model.IsDefined()) model = get_at_path(it->second, "server.gpu.model");
  if (!model.IsDefined() || !model.IsScalar()) return v;
  try {
    const std::string text =
        device_field_text(device_spec(model.Scalar()), path.substr(gpu.size()));
    if (!text.empty()) return YAML::Node(text);
  } catch (const InputError&) {
    // An unknown device is reported when the point's scenario is built.
  }
  return v;
}

// The value `path` has in the point: the last assignment at or above it, else the scenario,
// else the platform preset.
YAML::Node lookup(const YAML::Node& base, const std::vector<Assignment>& sets,
                  const std::string& path) {
  YAML::Node v = written_value(base, sets, path);
  return v.IsDefined() ? v : preset_value(base, sets, path);
}

// A key whose path runs through a scalar can never be set; report it once, with its origin.
void check_path(const YAML::Node& base, const Assignment& a, std::set<std::string>* checked) {
  if (!checked->insert(a.key).second) return;
  std::vector<std::string> keys = split_key_path(a.key, a.where, a.source + " key");
  std::string prefix;
  for (size_t i = 0; i + 1 < keys.size(); ++i) {
    prefix += (i ? "." : "") + keys[i];
    YAML::Node n = get_at_path(base, prefix);
    if (n.IsDefined() && !n.IsNull() && !n.IsMap())
      throw InputError(a.where + ": " + a.source + " key \"" + a.key + "\": \"" + prefix +
                       "\" holds a value in the scenario, not a mapping of keys");
  }
}

}  // namespace

YAML::Node point_value(const YAML::Node& base, const SweepPoint& point, const std::string& path) {
  return lookup(base, point.assignments, path);
}

size_t SweepSpec::point_count() const {
  size_t n = 1;
  for (const auto& a : axes) {
    if (a.values.empty()) return 0;
    if (n > kMaxPoints) return n;
    n *= a.values.size();
  }
  return n;
}

SweepSpec parse_sweep_spec(const YAML::Node& sweep, const std::string& origin) {
  if (!sweep || sweep.IsNull()) return {};
  return Parser(origin).parse(sweep);
}

const std::vector<std::string>& sweep_identity_skip_keys() {
  static const std::vector<std::string> keys = {"sweep", "plan", "output"};
  return keys;
}

std::vector<SweepPoint> expand_sweep(const SweepSpec& spec, const YAML::Node& base,
                                     const std::vector<std::string>& skip,
                                     const std::string& origin) {
  (void)origin;
  const size_t n = spec.point_count();
  std::vector<SweepPoint> points(n);
  std::set<std::string> checked;
  std::vector<size_t> digit(spec.axes.size());
  for (size_t index = 0; index < n; ++index) {
    SweepPoint& p = points[index];
    p.index = static_cast<int64_t>(index);
    size_t rest = index;
    for (size_t a = spec.axes.size(); a-- > 0;) {
      digit[a] = rest % spec.axes[a].values.size();
      rest /= spec.axes[a].values.size();
    }
    for (size_t a = 0; a < spec.axes.size(); ++a) {
      const SweepAxisValue& v = spec.axes[a].values[digit[a]];
      p.assignments.insert(p.assignments.end(), v.sets.begin(), v.sets.end());
      p.params.insert(v.params.begin(), v.params.end());
    }
    std::stable_sort(
        p.assignments.begin(), p.assignments.end(),
        [](const Assignment& x, const Assignment& y) { return depth(x.key) < depth(y.key); });
    for (const auto& axis : spec.axes)
      for (const auto& key : axis.reported_keys)
        if (!p.params.count(key)) p.params[key] = node_text(lookup(base, p.assignments, key));
    for (const auto& d : spec.derived) {
      Resolver resolve = [&](const std::string& name, std::string* text) {
        if (std::find(spec.named_axes.begin(), spec.named_axes.end(), name) !=
            spec.named_axes.end()) {
          *text = p.params.at(name);
          return true;
        }
        YAML::Node v = lookup(base, p.assignments, name);
        if (!v.IsDefined() || v.IsNull()) return false;
        *text = node_text(v);
        return true;
      };
      bool computed = false;
      std::string text =
          evaluate_template(d.expression, resolve, d.where + ": sweep.derived." + d.key, &computed);
      YAML::Node value(text);
      // Arithmetic over quantities yields base units with no unit written: say so, or the
      // scenario reader would refuse the bare number.
      if (computed) value.SetTag(kBaseUnitsTag);
      p.assignments.push_back({d.key, value, "sweep.derived", d.where});
      p.params[d.key] = text;
    }
    std::vector<std::pair<std::string, YAML::Node>> overlay;
    overlay.reserve(p.assignments.size());
    for (const auto& a : p.assignments) {
      check_path(base, a, &checked);
      overlay.emplace_back(a.key, a.value.get());
    }
    p.canonical = canonical_yaml(base, overlay, skip);
    p.hash = fnv1a64(p.canonical);
  }
  return points;
}

}  // namespace orrery
