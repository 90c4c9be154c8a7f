// Capacity planning over a sweep: price every point's platform from a price table, and find the
// cheapest configurations that reach a throughput target and the Pareto front of cost versus
// throughput. The `plan:` section of a plan file:
//
//   plan:
//     target: {samples_per_s: 6000}          # or {iterations_per_s: 10}
//     samples_per_iteration: "${gpus} * 32"  # needed for samples_per_s
//     prices:
//       server: 9000                          # per server (chassis, CPUs, memory)
//       gpu: {V100: 8000, A100: 11000}        # per GPU, by platform.server.gpu.model
//       nic: {25Gbps: 300, 100Gbps: 900}      # per NIC, by bandwidth (or one number)
//       switch_port: {25Gbps: 150, 100Gbps: 450}  # per NIC port on the fabric
//       nvlink: {none: 0, cube-mesh: 4000}    # per server, by topology (optional)
//     top: 5                                  # how many of the cheapest to list
//     meet: expected                          # or pessimistic: the target must hold at the
//                                             # slow end of the point's likely range
//
// In samples_per_iteration, ${gpus} is the platform's GPU count (servers x GPUs per server),
// ${servers} and ${gpus_per_server} likewise; any other ${key} is a scenario key of the point.
#pragma once

#include <yaml-cpp/yaml.h>

#include <map>
#include <string>
#include <vector>

#include "common/yaml_reader.h"
#include "platforms/platform_spec.h"
#include "sweeps/point_outcome.h"
#include "sweeps/sweep_input.h"

namespace orrery {

// A price per item, either one number for all or one per key (a model name, a topology, or a
// bandwidth such as 25Gbps, matched by value).
struct PriceList {
  bool flat = false;
  double price = 0;
  std::map<std::string, double> by_name;
  std::vector<std::pair<double, double>> by_bandwidth;  // bytes/s -> price
  std::string key;                                      // "plan.prices.nic", for messages
};

struct PlanSpec {
  std::string metric;  // "samples_per_s" or "iterations_per_s"
  double target = 0;
  std::string samples_per_iteration;  // expression
  std::string samples_where;          // file:line of it
  double server = 0;
  PriceList gpu, nic, switch_port, nvlink;
  bool has_nvlink_prices = false;
  int top = 5;
  bool pessimistic = false;  // meet: pessimistic
};

// Reads the plan section strictly (InputError naming the file, line and key).
PlanSpec parse_plan_spec(const YAML::Node& plan, const std::string& origin);

struct PointPlan {
  double cost = 0;
  double samples_per_iteration = 1;
  std::string hardware;  // "2 x (8 V100, 1 NIC 25 Gb/s)", for tables
};

// Per-GPU prices under `prices.key`: one number, or one per device name (aliases allowed, each
// checked to name a device). Throws InputError naming the key.
PriceList read_gpu_prices(const YamlMap& prices, const std::string& key, bool required);
// A GPU's price, under its spec name or any alias the list uses. Throws InputError naming the
// list and the point when it has none.
double gpu_price(const PriceList& list, const DeviceSpec& gpu, const SweepPoint& p,
                 const std::string& origin);
// The point's platform as it resolves (preset, scenario and sweep values). Throws InputError
// for a SimGrid XML platform or a bad value, attributed to the sweep entry that set it.
PlatformSpec point_platform(const SweepInput& in, const SweepPoint& point);

// The cost of a point's platform. Throws InputError naming the plan key when a price is
// missing for something the point uses, or when the platform is a SimGrid XML file.
PointPlan plan_point(const PlanSpec& plan, const SweepInput& in, const SweepPoint& point);

struct PlanRow {
  int64_t index = 0;  // the point
  double cost = 0;
  double throughput = 0;  // in plan.metric units
  // The throughput over the point's likely step times (scenario/error_band.h): the slow end and
  // the fast end; both equal to `throughput` when no validated run is like the point.
  double likely_slow = 0;
  double likely_fast = 0;
  bool has_range = false;
  bool meets = false;  // throughput (meet: pessimistic: likely_slow) >= the target
  bool pareto = false;
};

// One row per distinct ok point (the first index of each hash), in point order.
std::vector<PlanRow> analyze_plan(const PlanSpec& plan, const SweepInput& in,
                                  const std::vector<PointPlan>& costs,
                                  const std::vector<const PointOutcome*>& outcomes);

// Parameter names a plan adds to every point.
inline constexpr const char* kParamCost = "plan.cost";
inline constexpr const char* kParamThroughput = "plan.throughput";
inline constexpr const char* kParamMeets = "plan.meets_target";
inline constexpr const char* kParamPareto = "plan.pareto";

}  // namespace orrery
