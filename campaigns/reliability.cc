#include "campaigns/reliability.h"

#include <map>

#include "common/embedded_data.h"
#include "common/errors.h"
#include "common/input_limits.h"
#include "common/suggest.h"
#include "common/yaml_reader.h"

namespace orrery {
namespace {

const std::vector<std::string> kUnits = {"gpu", "node", "nic", "job"};

bool known_unit(const std::string& u) {
  for (const auto& k : kUnits)
    if (k == u) return true;
  return false;
}

// Counts up to a million, unit-hours up to 1e15, rates up to one per unit-second.
constexpr Range kCount{0, 1e6, Quantity::kCount};
constexpr Range kExposure{0, 1e15, Quantity::kNumber, true};
constexpr Range kRate{0, 3600, Quantity::kNumber};

}  // namespace

ReliabilityModel read_reliability_model(const YAML::Node& root_node, const std::string& origin) {
  YamlMap root(root_node, origin);
  ReliabilityModel m;
  m.name = root.required_str("name");
  m.source = root.required_str("source");
  std::map<std::string, double> exposure;
  if (root.has("exposure")) {
    YamlMap e = root.map("exposure");
    for (const auto& u : kUnits)
      if (e.has(u)) exposure[u] = e.number(u, 0, kExposure);
    e.reject_unknown_keys();
  }
  const YAML::Node list = root.raw("causes");
  if (!list || !list.IsSequence() || list.size() == 0)
    root.fail("causes", "expected a list of causes, each {id, unit, count or per_unit_hour}");
  for (size_t i = 0; i < list.size(); ++i) {
    if (!list[i].IsMap()) root.fail("causes", "[" + std::to_string(i) + "]: expected a mapping");
    const YamlMap c(list[i], origin, "causes[" + std::to_string(i) + "]");
    FailureCause f;
    f.id = c.required_str("id");
    f.name = c.str("name", f.id);
    f.unit = c.required_str("unit");
    if (!known_unit(f.unit))
      c.fail("unit", "expected one of " + join_names(kUnits) + ", got \"" + f.unit + "\"" +
                         did_you_mean(f.unit, kUnits));
    f.hardware = c.boolean("hardware", false);
    if (c.has("count") == c.has("per_unit_hour"))
      c.fail("count",
             "give either count (with an exposure for unit " + f.unit + ") or per_unit_hour");
    if (c.has("count")) {
      if (!exposure.count(f.unit))
        c.fail("count",
               "needs exposure." + f.unit + ": the " + f.unit + "-hours the study counted over");
      f.per_unit_hour = c.number("count", 0, kCount) / exposure[f.unit];
    } else {
      f.per_unit_hour = c.number("per_unit_hour", 0, kRate);
    }
    for (const auto& other : m.causes)
      if (other.id == f.id) c.fail("id", "\"" + f.id + "\" is named twice");
    c.reject_unknown_keys();
    m.causes.push_back(f);
  }
  root.reject_unknown_keys();
  return m;
}

std::vector<std::string> shipped_reliability_names() {
  std::vector<std::string> names;
  for (const auto& [name, text] : embedded_files("reliability")) names.push_back(name);
  return names;
}

ReliabilityModel shipped_reliability_model(const std::string& name) {
  const auto& files = embedded_files("reliability");
  auto it = files.find(name);
  if (it == files.end())
    throw InputError("no reliability model \"" + name + "\"" +
                     did_you_mean(name, shipped_reliability_names()) +
                     " (shipped: " + join_names(shipped_reliability_names()) + "; or give a file)");
  return read_reliability_model(
      load_yaml_text(it->second, "campaigns/reliability/" + name + ".yaml"),
      "campaigns/reliability/" + name + ".yaml");
}

std::vector<CauseRate> job_failure_rates(const ReliabilityModel& model, const JobParts& parts) {
  std::vector<CauseRate> out;
  for (const auto& c : model.causes) {
    const double units = c.unit == "gpu"    ? parts.gpus
                         : c.unit == "node" ? parts.nodes
                         : c.unit == "nic"  ? parts.nics
                                            : 1.0;
    out.push_back({c.id, c.name, c.hardware, c.per_unit_hour * units});
  }
  return out;
}

}  // namespace orrery
