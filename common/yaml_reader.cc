#include "common/yaml_reader.h"

#include <yaml-cpp/depthguard.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "common/errors.h"
#include "common/input_file.h"
#include "common/input_limits.h"
#include "common/suggest.h"
#include "common/units.h"
#include "common/utf8.h"

namespace orrery {
namespace {

std::string line_of(const YAML::Mark& m) { return std::to_string(m.line + 1); }

// yaml-cpp keeps every pair of a mapping and answers lookups with the first, so a repeated key
// would silently lose its second value. Walks the whole tree (depth bounded: yaml-cpp itself
// refuses documents nested more than a few hundred levels).
// Values a document may expand to, aliases counted each time they are used: a scenario, a sweep
// or a preset has thousands; "billion laughs" (anchors each repeating the previous one several
// times) has billions, and every walk of the tree (this one, sweep hashing, --set) would take
// minutes or exhaust memory.
constexpr long kMaxExpandedValues = 1000000;

void reject_duplicate_keys(const YAML::Node& node, const std::string& origin,
                           const std::string& path, int depth, long* visited) {
  if (depth > 10000) throw InputError(origin + ": the document nests too deeply");
  if (++*visited > kMaxExpandedValues)
    throw InputError(origin + ": the document expands to more than " +
                     std::to_string(kMaxExpandedValues) +
                     " values with its aliases (*name) repeated where they are used, near \"" +
                     path + "\": anchors repeating anchors (a YAML alias bomb?)");
  if (node.IsMap()) {
    std::map<std::string, YAML::Mark> seen;
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (!it->first.IsScalar()) continue;
      const std::string& k = it->first.Scalar();
      const std::string key_path = path.empty() ? k : path + "." + k;
      auto [first, fresh] = seen.emplace(k, it->first.Mark());
      if (!fresh)
        throw InputError(origin + ":" + line_of(it->first.Mark()) + ": duplicate key \"" +
                         key_path + "\" (first given on line " + line_of(first->second) +
                         "); give each key once");
      reject_duplicate_keys(it->second, origin, key_path, depth + 1, visited);
    }
  } else if (node.IsSequence()) {
    size_t i = 0;
    for (const auto& item : node)
      reject_duplicate_keys(item, origin, path + "[" + std::to_string(i++) + "]", depth + 1,
                            visited);
  }
}

}  // namespace

YAML::Node load_yaml_text(const std::string& text, const std::string& origin) {
  // Names and text go into result files, whose readers decode UTF-8 (yaml-cpp does not check).
  if (const size_t bad = invalid_utf8_at(text); bad != std::string::npos) {
    const size_t line = 1 + static_cast<size_t>(std::count(text.begin(), text.begin() + bad, '\n'));
    const size_t line_start = text.rfind('\n', bad == 0 ? 0 : bad - 1);
    const size_t column =
        bad - (line_start == std::string::npos || bad == 0 ? 0 : line_start + 1) + 1;
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned char>(text[bad]));
    throw InputError(origin + ":" + std::to_string(line) + ":" + std::to_string(column) +
                     ": not valid UTF-8 (byte " + byte +
                     "): save the file as UTF-8; names and text are stored in result files");
  }
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::DeepRecursion& e) {
    throw InputError(origin + ":" + line_of(e.mark) +
                     ": the document nests deeper than the YAML "
                     "reader accepts (a few hundred levels)");
  } catch (const YAML::Exception& e) {
    throw InputError(origin + ":" + line_of(e.mark) + ":" + std::to_string(e.mark.column + 1) +
                     ": YAML syntax error: " + e.msg);
  }
  long visited = 0;
  reject_duplicate_keys(root, origin, "", 0, &visited);
  return root;
}

YAML::Node load_yaml_file(const std::string& path) {
  return load_yaml_text(read_input_file(path, "YAML file", kMaxYamlBytes), path);
}

YamlMap::YamlMap(const YAML::Node& node, std::string origin, std::string path)
    : node_(node), origin_(std::move(origin)), path_(std::move(path)) {
  if (node_ && !node_.IsNull() && !node_.IsMap())
    throw InputError(where() + ": " + (path_.empty() ? std::string("the document") : path_) +
                     " must be a mapping of keys to values");
}

std::string YamlMap::key_path(const std::string& key) const {
  return path_.empty() ? key : path_ + "." + key;
}

namespace {
// Nodes made by --set overrides carry kOverrideTag and no position in the file; other nodes
// without a position (an absent mapping, one a reader built) are named by the file alone.
std::string location(const std::string& origin, const YAML::Mark& mark) {
  if (mark.line < 0) return origin;
  return origin + ":" + std::to_string(mark.line + 1);
}
std::string location(const std::string& origin, const YAML::Node& n) {
  if (n.Tag() == kOverrideTag) return origin + " (--set)";
  return location(origin, n.Mark());
}
}  // namespace

std::string YamlMap::where(const std::string& key) const {
  YAML::Node n = key.empty() ? node_ : get(key);
  if (!n) n = node_;
  return n ? location(origin_, n) : location(origin_, YAML::Mark::null_mark());
}

std::string YamlMap::where_path(const std::string& dotted) const {
  // reset(), not =: assigning a yaml-cpp node writes into the node it refers to.
  YAML::Node n;
  n.reset(node_);
  std::string found;
  size_t start = 0;
  while (n && n.IsMap() && start <= dotted.size()) {
    const size_t dot = std::min(dotted.find('.', start), dotted.size());
    const std::string key = dotted.substr(start, dot - start);
    YAML::Node value;
    bool there = false;
    for (auto it = n.begin(); !there && it != n.end(); ++it)
      if (it->first.IsScalar() && it->first.Scalar() == key) {
        there = true;
        // A block mapping carries no position of its own: its key's line is where it starts.
        const bool placed = it->second.Mark().line >= 0 || it->second.Tag() == kOverrideTag;
        found = location(origin_, placed ? it->second : it->first);
        value.reset(it->second);
      }
    if (!there) break;
    n.reset(value);
    start = dot + 1;
  }
  return found;
}

void YamlMap::fail(const std::string& key, const std::string& message) const {
  throw InputError(where(key) + ": " + key_path(key) + ": " + message);
}

YAML::Node YamlMap::get(const std::string& key) const {
  if (!node_ || !node_.IsMap()) return YAML::Node();
  for (auto it = node_.begin(); it != node_.end(); ++it)
    if (it->first.Scalar() == key) return it->second;
  return YAML::Node();
}

bool YamlMap::has(const std::string& key) const {
  read_.insert(key);
  YAML::Node n = get(key);
  return n && !n.IsNull();
}

std::string YamlMap::scalar(const std::string& key, const char* expected) const {
  read_.insert(key);
  YAML::Node n = get(key);
  if (!n.IsScalar()) fail(key, std::string("expected ") + expected);
  return n.Scalar();
}

std::string YamlMap::str(const std::string& key, const std::string& fallback) const {
  return has(key) ? scalar(key, "a string") : fallback;
}

std::string YamlMap::required_str(const std::string& key) const {
  if (!has(key)) fail(key, "is required");
  return scalar(key, "a string");
}

double YamlMap::number(const std::string& key, double fallback) const {
  if (!has(key)) return fallback;
  std::string s = scalar(key, "a number");
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || *end != '\0' || !std::isfinite(v))
    fail(key, "expected a number, got \"" + s + "\"");
  return v;
}

int YamlMap::integer(const std::string& key, int fallback) const {
  if (!has(key)) return fallback;
  std::string s = scalar(key, "an integer");
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (end == s.c_str() || *end != '\0') fail(key, "expected an integer, got \"" + s + "\"");
  // Checked here, not by the caller: a cast would wrap 4294967297 to 1.
  if (errno == ERANGE || v < INT_MIN || v > INT_MAX)
    fail(key, "\"" + s + "\" is out of range: integers here are between " +
                  std::to_string(INT_MIN) + " and " + std::to_string(INT_MAX));
  return static_cast<int>(v);
}

int YamlMap::integer(const std::string& key, int fallback, int min, int max) const {
  int v = integer(key, fallback);
  if (has(key) && (v < min || v > max))
    fail(key, "must be between " + std::to_string(min) + " and " + std::to_string(max) + ", got " +
                  std::to_string(v));
  return v;
}

bool YamlMap::boolean(const std::string& key, bool fallback) const {
  if (!has(key)) return fallback;
  std::string s = scalar(key, "true or false");
  if (s == "true" || s == "yes" || s == "on") return true;
  if (s == "false" || s == "no" || s == "off") return false;
  fail(key, "expected true or false, got \"" + s + "\"");
}

// A quantity with units: how it parses, and what a bare number most likely meant.
struct QuantityKind {
  bool (*parse)(const std::string&, double*);
  const char* expected;
  // Suggestions for a bare number n, each a suffix to append ("Gbps", "GBps").
  std::vector<const char*> likely_units;
};

namespace {

const QuantityKind kBandwidth{
    parse_bandwidth, "a bandwidth such as 25Gbps or 10GBps", {"Gbps", "GBps"}};
const QuantityKind kTime{parse_time, "a time such as 5us, 1.5ms or 10min", {"us", "ms", "s"}};
const QuantityKind kPowerKind{parse_power, "a power such as 700W or 1.2kW", {"W", "kW"}};
const QuantityKind kSize{parse_size, "a size such as 25MiB or 4GB", {"MB", "GB", "MiB"}};
const QuantityKind kFlops{parse_flops, "a compute rate such as 15.7TFLOP/s", {"TFLOP/s"}};
const QuantityKind kFrequency{parse_frequency, "a frequency such as 1410MHz", {"MHz", "GHz"}};

bool is_bare_number(const std::string& s) {
  char* end = nullptr;
  std::strtod(s.c_str(), &end);
  return end != s.c_str() && *end == '\0';
}

}  // namespace

double YamlMap::quantity(const std::string& key, double fallback, const QuantityKind& kind,
                         bool may_be_negative) const {
  if (!has(key)) return fallback;
  std::string s = scalar(key, kind.expected);
  double v;
  if (!kind.parse(s, &v))
    fail(key, std::string("expected ") + kind.expected + ", got \"" + s + "\"");
  // No quantity Orrery reads is negative; said before the unit check, whose hint ("-1MB")
  // would suggest a value that is refused next.
  if (v < 0 && !may_be_negative) fail(key, "must not be negative, got \"" + s + "\"");
  // A bare number would be read in base units (bytes/s, bytes, seconds), which is almost never
  // what was meant ("bandwidth: 25" is 25 bytes/s). Zero needs no unit; values computed by a
  // sweep's arithmetic are in base units and say so with kBaseUnitsTag.
  if (is_bare_number(s) && v != 0.0 && get(key).Tag() != kBaseUnitsTag) {
    std::string hint;
    for (const char* u : kind.likely_units) hint += (hint.empty() ? "" : " or ") + s + u;
    fail(key,
         "\"" + s + "\" has no unit; write it with one, e.g. " + hint + " (" + kind.expected + ")");
  }
  return v;
}

double YamlMap::bandwidth(const std::string& key, double fallback) const {
  return quantity(key, fallback, kBandwidth);
}
double YamlMap::time(const std::string& key, double fallback) const {
  return quantity(key, fallback, kTime);
}
double YamlMap::signed_time(const std::string& key, double fallback) const {
  return quantity(key, fallback, kTime, true);
}
double YamlMap::size(const std::string& key, double fallback) const {
  return quantity(key, fallback, kSize);
}
double YamlMap::flops(const std::string& key, double fallback) const {
  return quantity(key, fallback, kFlops);
}
double YamlMap::frequency(const std::string& key, double fallback) const {
  return quantity(key, fallback, kFrequency);
}
double YamlMap::power(const std::string& key, double fallback, const Range& range) const {
  return in_range(key, quantity(key, fallback, kPowerKind), range);
}

double YamlMap::in_range(const std::string& key, double v, const Range& range) const {
  if (has(key) && !range.contains(v)) fail(key, out_of_range(v, range));
  return v;
}
double YamlMap::number(const std::string& key, double fallback, const Range& range) const {
  return in_range(key, number(key, fallback), range);
}
double YamlMap::bandwidth(const std::string& key, double fallback, const Range& range) const {
  return in_range(key, bandwidth(key, fallback), range);
}
double YamlMap::time(const std::string& key, double fallback, const Range& range) const {
  return in_range(key, time(key, fallback), range);
}
double YamlMap::size(const std::string& key, double fallback, const Range& range) const {
  return in_range(key, size(key, fallback), range);
}
double YamlMap::flops(const std::string& key, double fallback, const Range& range) const {
  return in_range(key, flops(key, fallback), range);
}
double YamlMap::frequency(const std::string& key, double fallback, const Range& range) const {
  return in_range(key, frequency(key, fallback), range);
}

std::string YamlMap::input_file(const std::string& key, const std::string& base_dir,
                                const std::string& what) const {
  const std::string path = resolve_input_path(base_dir, required_str(key));
  try {
    require_regular_file(path, what);
  } catch (const InputError& e) {
    fail(key, e.what());
  }
  return path;
}

std::vector<std::string> YamlMap::str_list(const std::string& key) const {
  std::vector<std::string> out;
  if (!has(key)) return out;
  YAML::Node n = get(key);
  if (n.IsScalar()) return {n.Scalar()};
  if (!n.IsSequence()) fail(key, "expected a list of strings");
  for (const auto& item : n) {
    if (!item.IsScalar()) fail(key, "expected a list of strings");
    out.push_back(item.Scalar());
  }
  return out;
}

YamlMap YamlMap::map(const std::string& key) const {
  read_.insert(key);
  YAML::Node n = get(key);
  if (n && !n.IsNull() && !n.IsMap()) fail(key, "expected a mapping of keys to values");
  return YamlMap(n ? n : YAML::Node(), origin_, key_path(key));
}

YAML::Node YamlMap::raw(const std::string& key) const {
  read_.insert(key);
  return get(key);
}

void YamlMap::reject_unknown_keys(const std::vector<std::string>& allowed) const {
  if (!node_ || !node_.IsMap()) return;
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    const std::string k = it->first.Scalar();
    bool known = read_.count(k) > 0;
    for (const auto& a : allowed) known = known || a == k;
    if (known) continue;
    std::set<std::string> all(read_.begin(), read_.end());
    all.insert(allowed.begin(), allowed.end());
    const std::vector<std::string> names(all.begin(), all.end());
    throw InputError(location(origin_, it->first.Mark()) + ": unknown key \"" + key_path(k) + "\"" +
                     did_you_mean(k, names) +
                     (names.empty() ? "" : " (expected one of: " + join_names(names) + ")"));
  }
}

}  // namespace orrery
