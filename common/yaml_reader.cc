#include "common/yaml_reader.h"

#include <cmath>
#include <fstream>
#include <sstream>

#include "common/units.h"
#include "engine/errors.h"

namespace orrery {

YAML::Node load_yaml_text(const std::string& text, const std::string& origin) {
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InputError(origin + ":" + std::to_string(e.mark.line + 1) + ":" +
                     std::to_string(e.mark.column + 1) + ": YAML syntax error: " + e.msg);
  }
}

YAML::Node load_yaml_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot open file");
  std::stringstream ss;
  ss << in.rdbuf();
  return load_yaml_text(ss.str(), path);
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
// Nodes made by --set overrides carry no position in the file.
std::string location(const std::string& origin, const YAML::Mark& mark) {
  if (mark.line < 0) return origin + " (--set)";
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
  long v = std::strtol(s.c_str(), &end, 10);
  if (end == s.c_str() || *end != '\0') fail(key, "expected an integer, got \"" + s + "\"");
  return static_cast<int>(v);
}

bool YamlMap::boolean(const std::string& key, bool fallback) const {
  if (!has(key)) return fallback;
  std::string s = scalar(key, "true or false");
  if (s == "true" || s == "yes" || s == "on") return true;
  if (s == "false" || s == "no" || s == "off") return false;
  fail(key, "expected true or false, got \"" + s + "\"");
}

namespace {
using Parser = bool (*)(const std::string&, double*);
}

#define ORRERY_UNIT_GETTER(fn, parser, what)                                                \
  double YamlMap::fn(const std::string& key, double fallback) const {                       \
    if (!has(key)) return fallback;                                                         \
    std::string s = scalar(key, what);                                                      \
    double v;                                                                               \
    if (!parser(s, &v)) fail(key, std::string("expected ") + what + ", got \"" + s + "\""); \
    return v;                                                                               \
  }
ORRERY_UNIT_GETTER(bandwidth, parse_bandwidth, "a bandwidth such as 25Gbps or 10GBps")
ORRERY_UNIT_GETTER(time, parse_time, "a time such as 5us or 1.5ms")
ORRERY_UNIT_GETTER(size, parse_size, "a size such as 25MiB or 4GB")
ORRERY_UNIT_GETTER(flops, parse_flops, "a compute rate such as 15.7TFLOP/s")
#undef ORRERY_UNIT_GETTER

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
    std::string list;
    std::set<std::string> all(read_.begin(), read_.end());
    all.insert(allowed.begin(), allowed.end());
    for (const auto& r : all) list += (list.empty() ? "" : ", ") + r;
    throw InputError(location(origin_, it->first.Mark()) + ": unknown key \"" + key_path(k) + "\"" +
                     (list.empty() ? "" : " (expected one of: " + list + ")"));
  }
}

}  // namespace orrery
