// Reading YAML mappings strictly: every key read is checked for type and unit, every key left
// unread is an error, and every error names the file, the line and the dotted key path.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <set>
#include <string>
#include <vector>

namespace orrery {

// Tag given to values set from the command line (--set), so messages say so instead of
// pointing at a line of the file.
inline constexpr const char* kOverrideTag = "!orrery-set";
// Tag of numbers already in base units (bytes/s, bytes, seconds, flop/s): values a sweep computed
// with arithmetic. Only these may stand without a unit where a quantity is expected.
inline constexpr const char* kBaseUnitsTag = "!orrery-base-units";
// Largest YAML file read (scenarios, presets, platforms): far above any real one.
inline constexpr std::size_t kMaxYamlBytes = std::size_t{64} << 20;

struct QuantityKind;
struct Range;

// Parses a YAML file or text; syntax errors become InputError "file:line:col: message". A key
// given twice in one mapping is an error naming both lines. Files must be regular files.
YAML::Node load_yaml_file(const std::string& path);
YAML::Node load_yaml_text(const std::string& text, const std::string& origin);

class YamlMap {
 public:
  // `node` must be a mapping (or null, read as empty). `origin` is the file name; `path` the
  // dotted key path of this mapping ("" at the root, "platform", "platform.fabric"...).
  YamlMap(const YAML::Node& node, std::string origin, std::string path = "");

  bool has(const std::string& key) const;
  std::string str(const std::string& key, const std::string& fallback) const;
  std::string required_str(const std::string& key) const;
  double number(const std::string& key, double fallback) const;
  // Integers must fit an int (no silent wrap-around); the second form also enforces [min, max].
  int integer(const std::string& key, int fallback) const;
  int integer(const std::string& key, int fallback, int min, int max) const;
  bool boolean(const std::string& key, bool fallback) const;
  // Quantities with units (common/units.h), returned in base units. A bare number other than 0
  // is refused (its unit would be a guess) unless tagged kBaseUnitsTag.
  double bandwidth(const std::string& key, double fallback) const;
  double time(const std::string& key, double fallback) const;
  // A time that may be negative: a fitted per-op correction (HostOverheads), nothing a user
  // writes by hand.
  double signed_time(const std::string& key, double fallback) const;
  double size(const std::string& key, double fallback) const;
  double flops(const std::string& key, double fallback) const;
  double frequency(const std::string& key, double fallback) const;  // Hz
  // The same, with the value given also checked against its accepted range
  // (common/input_limits.h): "key: 0 is outside the accepted range, above 0 and at most 10".
  // A quantity is never negative: "-5ms" or "-1" is refused whatever the range.
  double number(const std::string& key, double fallback, const Range& range) const;
  double bandwidth(const std::string& key, double fallback, const Range& range) const;
  double time(const std::string& key, double fallback, const Range& range) const;
  double size(const std::string& key, double fallback, const Range& range) const;
  double flops(const std::string& key, double fallback, const Range& range) const;
  double frequency(const std::string& key, double fallback, const Range& range) const;
  double power(const std::string& key, double fallback, const Range& range) const;  // watts
  // A required file name, resolved against `base_dir` (the scenario's folder) and checked to be
  // a regular file; a missing one is an error at the key's line ("s.yaml:3: workload.file:
  // g.json: no such file"). `what` names the kind of file in messages.
  std::string input_file(const std::string& key, const std::string& base_dir,
                         const std::string& what) const;
  std::vector<std::string> str_list(const std::string& key) const;
  YamlMap map(const std::string& key) const;  // empty map if absent
  YAML::Node raw(const std::string& key) const;

  // Throws InputError for the first key that was never read, listing the keys that were.
  void reject_unknown_keys(const std::vector<std::string>& allowed = {}) const;

  // "file:line" of a key (or of the mapping when the key is absent), for messages.
  std::string where(const std::string& key = "") const;
  // "file:line" of a dotted path below this mapping ("strategy.gpus"), or of the deepest part
  // of it that is there; "" when not even its first key is.
  std::string where_path(const std::string& dotted) const;
  std::string key_path(const std::string& key) const;
  const std::string& origin() const { return origin_; }
  // Throws InputError "file:line: key: message".
  [[noreturn]] void fail(const std::string& key, const std::string& message) const;

 private:
  YAML::Node get(const std::string& key) const;
  std::string scalar(const std::string& key, const char* expected) const;
  double quantity(const std::string& key, double fallback, const QuantityKind& kind,
                  bool may_be_negative = false) const;
  double in_range(const std::string& key, double v, const Range& range) const;

  YAML::Node node_;
  std::string origin_;
  std::string path_;
  mutable std::set<std::string> read_;
};

}  // namespace orrery
