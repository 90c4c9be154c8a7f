#include "strategies/ps_options.h"

#include <vector>

#include "common/input_limits.h"
#include "common/suggest.h"
#include "common/yaml_reader.h"

namespace orrery {
namespace {

// Index of `value` in `names`, or an InputError naming the key, the accepted values and the
// closest one.
int pick(const YamlMap& m, const std::string& key, const std::string& value,
         const std::vector<std::string>& names) {
  for (size_t i = 0; i < names.size(); ++i)
    if (value == names[i]) return static_cast<int>(i);
  m.fail(key, "expected one of " + join_names(names) + ", got \"" + value + "\"" +
                  did_you_mean(value, names));
}

const std::vector<std::string> kPlacements = {"dedicated", "colocated"};
const std::vector<std::string> kPolicies = {"greedy", "round_robin", "partitioned"};
const std::vector<std::string> kPulls = {"all", "per_layer"};

}  // namespace

const char* ps_placement_name(PsPlacement p) { return kPlacements[static_cast<int>(p)].c_str(); }
const char* ps_policy_name(PsPolicy p) { return kPolicies[static_cast<int>(p)].c_str(); }
const char* ps_pulls_name(PsPulls p) { return kPulls[static_cast<int>(p)].c_str(); }

PsOptions parse_ps_options(const YamlMap& m) {
  PsOptions o;
  o.placement = static_cast<PsPlacement>(
      pick(m, "placement", m.str("placement", ps_placement_name(o.placement)), kPlacements));
  o.shards = m.integer("shards", o.shards, 0, 1 << 20);
  o.policy = static_cast<PsPolicy>(
      pick(m, "policy", m.str("policy", ps_policy_name(o.policy)), kPolicies));
  o.pulls = static_cast<PsPulls>(pick(m, "pulls", m.str("pulls", ps_pulls_name(o.pulls)), kPulls));
  o.rpc_overhead = m.time("rpc_overhead", o.rpc_overhead, limits::kLatency);
  if (m.has("rpc_bandwidth") && m.str("rpc_bandwidth", "") == "0")
    o.rpc_bandwidth = 0;
  else
    o.rpc_bandwidth = m.bandwidth("rpc_bandwidth", o.rpc_bandwidth, limits::kBandwidth);
  o.copies = m.boolean("copies", o.copies);
  o.cores = m.integer("cores", o.cores, 0, 1 << 20);
  m.reject_unknown_keys();
  return o;
}

}  // namespace orrery
