#include "sweeps/plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "common/errors.h"
#include "common/input_limits.h"
#include "common/units.h"
#include "common/yaml_reader.h"
#include "engine/run_result_io.h"
#include "platforms/device_spec.h"
#include "platforms/platform_spec.h"
#include "sweeps/expression.h"
#include "sweeps/yaml_path.h"

namespace orrery {
namespace {

PriceList read_prices(const YamlMap& prices, const std::string& key, bool by_bandwidth,
                      bool required) {
  PriceList list;
  list.key = prices.key_path(key);
  if (!prices.has(key)) {
    if (required) prices.fail(key, "is required (a price per item, or one per kind)");
    list.flat = true;
    return list;
  }
  YAML::Node node = prices.raw(key);
  if (node.IsScalar()) {
    list.flat = true;
    list.price = prices.number(key, 0, limits::kPrice);
    return list;
  }
  YamlMap m = prices.map(key);
  for (auto it = node.begin(); it != node.end(); ++it) {
    const std::string name = it->first.Scalar();
    double price = m.number(name, 0, limits::kPrice);
    if (by_bandwidth) {
      double bw;
      if (!parse_bandwidth(name, &bw) || bw <= 0)
        m.fail(name, "expected a bandwidth such as 25Gbps as the key");
      list.by_bandwidth.emplace_back(bw, price);
    } else {
      list.by_name[name] = price;
    }
  }
  return list;
}

std::string known(const PriceList& list) {
  std::string s;
  for (const auto& [name, price] : list.by_name) s += (s.empty() ? "" : ", ") + name;
  for (const auto& [bw, price] : list.by_bandwidth)
    s += (s.empty() ? "" : ", ") + format_bandwidth(bw);
  return s.empty() ? "none" : s;
}

[[noreturn]] void missing(const PriceList& list, const std::string& what, const SweepPoint& p,
                          const std::string& origin) {
  throw InputError(origin + ": " + list.key + ": no price for " + what + ", which point " +
                   std::to_string(p.index) + " uses (priced: " + known(list) + ")");
}

double price_of(const PriceList& list, const std::string& name, const SweepPoint& p,
                const std::string& origin) {
  if (list.flat) return list.price;
  auto it = list.by_name.find(name);
  if (it == list.by_name.end()) missing(list, "\"" + name + "\"", p, origin);
  return it->second;
}

double price_of(const PriceList& list, double bandwidth, const SweepPoint& p,
                const std::string& origin) {
  if (list.flat) return list.price;
  for (const auto& [bw, price] : list.by_bandwidth)
    if (std::fabs(bw - bandwidth) <= 1e-9 * bandwidth) return price;
  missing(list, "a link of " + format_bandwidth(bandwidth), p, origin);
}

std::string gbit(double bytes_per_s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g Gb/s", bytes_per_s * 8 / 1e9);
  return buf;
}

}  // namespace

double gpu_price(const PriceList& list, const DeviceSpec& gpu, const SweepPoint& p,
                 const std::string& origin) {
  if (list.flat) return list.price;
  for (const auto& [name, price] : list.by_name)
    if (device_spec(name).name == gpu.name) return price;
  missing(list, "\"" + gpu.name + "\"", p, origin);
}

PriceList read_gpu_prices(const YamlMap& prices, const std::string& key, bool required) {
  PriceList list = read_prices(prices, key, false, required);
  // Keys name devices as a platform does ("A100" is A100-SXM4-40GB), so each must name one.
  for (const auto& [name, price] : list.by_name) {
    try {
      device_spec(name);
    } catch (const InputError& e) {
      prices.map(key).fail(name, e.what());
    }
  }
  return list;
}

PlatformSpec point_platform(const SweepInput& in, const SweepPoint& point) {
  YAML::Node root(YAML::NodeType::Map);
  // The platform, and the scenario's `device`, which replaces its GPU in every server as the
  // scenario reader does (scenario/scenario.h): the GPU a point simulates is the one it prices.
  for (const char* section : {"platform", "device"}) {
    YAML::Node base = get_at_path(in.base, section);
    if (base.IsDefined()) root[section] = YAML::Clone(base);
  }
  for (const auto& a : point.assignments) {
    const bool ours = a.key == "platform" || a.key.compare(0, 9, "platform.") == 0 ||
                      a.key == "device" || a.key.compare(0, 7, "device.") == 0;
    if (!ours) continue;
    const YAML::Node& v = a.value;
    set_at_path(root, a.key, v.IsScalar() ? v : YAML::Clone(v), a.where);
  }
  YAML::Node platform = root["platform"];
  if (platform.IsMap() && platform["xml"])
    throw InputError(in.path + ": plan: a plan prices a preset platform, not a SimGrid XML file");
  try {
    PlatformSpec spec = parse_platform_spec(platform, in.path, "platform");
    if (root["device"] && spec.server_groups.empty())
      spec.server.gpu = parse_device_spec(root["device"], in.path, "device", spec.server.gpu);
    return spec;
  } catch (const InputError& e) {
    throw InputError(attribute_to_sweep(e.what(), point.assignments, in.base, in.path));
  }
}

PlanSpec parse_plan_spec(const YAML::Node& plan, const std::string& origin) {
  if (!plan || plan.IsNull())
    throw InputError(origin +
                     ": plan: is required by `orrery plan` (a target, prices, and the "
                     "platform space as sweep axes; see docs/sweeps.md)");
  YamlMap m(plan, origin, "plan");
  PlanSpec spec;
  if (!m.has("target"))
    m.fail("target", "is required: {samples_per_s: N} or {iterations_per_s: N}");
  YamlMap target = m.map("target");
  for (const char* metric : {"samples_per_s", "iterations_per_s"}) {
    if (!target.has(metric)) continue;
    if (!spec.metric.empty())
      target.fail(metric, "give one target: samples_per_s or iterations_per_s");
    spec.metric = metric;
    spec.target = target.number(metric, 0);
    if (spec.target <= 0) target.fail(metric, "must be positive");
  }
  target.reject_unknown_keys();
  if (spec.metric.empty()) m.fail("target", "expected {samples_per_s: N} or {iterations_per_s: N}");
  spec.samples_per_iteration = m.str("samples_per_iteration", "");
  spec.samples_where = m.where("samples_per_iteration");
  if (spec.metric == "samples_per_s" && spec.samples_per_iteration.empty())
    m.fail("samples_per_iteration",
           "is required with a samples_per_s target, e.g. \"${gpus} * 32\" (32 samples per GPU)");
  if (!m.has("prices")) m.fail("prices", "is required");
  YamlMap prices = m.map("prices");
  spec.server = prices.number("server", 0, limits::kPrice);
  spec.gpu = read_gpu_prices(prices, "gpu", true);
  spec.nic = read_prices(prices, "nic", true, true);
  spec.switch_port = read_prices(prices, "switch_port", true, false);
  spec.has_nvlink_prices = prices.has("nvlink");
  spec.nvlink = read_prices(prices, "nvlink", false, false);
  prices.reject_unknown_keys();
  spec.top = m.integer("top", spec.top);
  if (spec.top < 1) m.fail("top", "must be at least 1");
  const std::string meet = m.str("meet", "expected");
  if (meet != "expected" && meet != "pessimistic")
    m.fail("meet",
           "expected (the predicted throughput meets the target) or pessimistic (the slow end "
           "of its likely range does), got \"" +
               meet + "\"");
  spec.pessimistic = meet == "pessimistic";
  m.reject_unknown_keys();
  return spec;
}

PointPlan plan_point(const PlanSpec& plan, const SweepInput& in, const SweepPoint& point) {
  const PlatformSpec spec = point_platform(in, point);
  const std::string& origin = in.path;
  const ServerSpec& s = spec.server;
  double per_server = plan.server + s.gpus * gpu_price(plan.gpu, s.gpu, point, origin) +
                      s.nic.count * (price_of(plan.nic, s.nic.bandwidth, point, origin) +
                                     price_of(plan.switch_port, s.nic.bandwidth, point, origin));
  if (plan.has_nvlink_prices) per_server += price_of(plan.nvlink, s.nvlink.topology, point, origin);
  PointPlan out;
  out.cost = spec.servers * per_server;
  out.hardware = std::to_string(spec.servers) + " x " + std::to_string(s.gpus) + " " + s.gpu.name +
                 ", " + std::to_string(s.nic.count) + " x " + gbit(s.nic.bandwidth) + " NIC";
  if (s.nvlink.topology != "none") out.hardware += ", NVLink " + s.nvlink.topology;
  if (plan.metric == "samples_per_s") {
    Resolver resolve = [&](const std::string& name, std::string* text) {
      if (name == "gpus")
        *text = std::to_string(spec.servers * s.gpus);
      else if (name == "servers")
        *text = std::to_string(spec.servers);
      else if (name == "gpus_per_server")
        *text = std::to_string(s.gpus);
      else {
        YAML::Node v = point_value(in.base, point, name);
        if (!v.IsDefined() || v.IsNull()) return false;
        *text = node_text(v);
      }
      return true;
    };
    std::string text = evaluate_template(plan.samples_per_iteration, resolve,
                                         plan.samples_where + ": plan.samples_per_iteration");
    double v;
    if (!evaluate_arithmetic("0+" + text, &v) || v <= 0)
      throw InputError(plan.samples_where + ": plan.samples_per_iteration: \"" +
                       plan.samples_per_iteration + "\" gives \"" + text + "\" for point " +
                       std::to_string(point.index) + ", not a positive number");
    out.samples_per_iteration = v;
  }
  return out;
}

std::vector<PlanRow> analyze_plan(const PlanSpec& plan, const SweepInput& in,
                                  const std::vector<PointPlan>& costs,
                                  const std::vector<const PointOutcome*>& outcomes) {
  std::vector<PlanRow> rows;
  std::set<uint64_t> seen;
  for (const auto& p : in.points) {
    const PointOutcome* o = outcomes[p.index];
    if (!o || !o->ok || !seen.insert(p.hash).second) continue;
    double t = deserialize_run_result(o->result_bytes).makespan;
    if (t <= 0) continue;
    PlanRow r;
    r.index = p.index;
    r.cost = costs[p.index].cost;
    const double per_iteration =
        plan.metric == "samples_per_s" ? costs[p.index].samples_per_iteration : 1.0;
    r.throughput = per_iteration / t;
    r.likely_slow = r.likely_fast = r.throughput;
    double low = 0, high = 0;
    if (likely_range(*o, &low, &high)) {
      r.has_range = true;
      r.likely_slow = per_iteration / high;
      r.likely_fast = per_iteration / low;
    }
    r.meets = (plan.pessimistic ? r.likely_slow : r.throughput) >= plan.target;
    rows.push_back(r);
  }
  // Pareto front: nothing else is at most as expensive and at least as fast, one strictly.
  std::vector<PlanRow*> order;
  for (auto& r : rows) order.push_back(&r);
  std::sort(order.begin(), order.end(), [](const PlanRow* a, const PlanRow* b) {
    return a->cost != b->cost ? a->cost < b->cost : a->throughput > b->throughput;
  });
  double best_cheaper = -1;
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    double best_here = order[i]->throughput;  // the group of equal cost, fastest first
    while (j < order.size() && order[j]->cost == order[i]->cost) {
      order[j]->pareto = order[j]->throughput == best_here && best_here > best_cheaper;
      ++j;
    }
    best_cheaper = std::max(best_cheaper, best_here);
    i = j;
  }
  return rows;
}

}  // namespace orrery
