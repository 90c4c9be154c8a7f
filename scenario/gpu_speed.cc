#include "scenario/gpu_speed.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

#include "common/input_limits.h"

namespace orrery {
namespace {

// A standard normal draw fixed by the standard's mt19937_64 and this arithmetic alone
// (std::normal_distribution's algorithm is the library's choice): Box-Muller on two 53-bit
// uniforms in (0, 1].
double standard_normal(std::mt19937_64& rng) {
  auto uniform = [&] { return (static_cast<double>(rng() >> 11) + 1.0) * 0x1.0p-53; };
  const double u1 = uniform(), u2 = uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

}  // namespace

std::map<std::string, double> read_gpu_speeds(const YamlMap& root,
                                              const std::vector<std::string>& gpu_hosts) {
  std::map<std::string, double> out;
  if (root.has("gpu_speed_variation")) {
    const YamlMap v = root.map("gpu_speed_variation");
    const double stdev = v.number("stdev", 0.0, limits::kSpeedStdev);
    std::mt19937_64 rng(static_cast<uint64_t>(v.integer("seed", 1, 0, 2147483647)));
    v.reject_unknown_keys();
    for (const std::string& h : gpu_hosts)
      out[h] = std::clamp(1.0 + stdev * standard_normal(rng), 0.05, 2.0);
  }
  if (root.has("gpu_speeds")) {
    const YamlMap m = root.map("gpu_speeds");
    const std::set<std::string> known(gpu_hosts.begin(), gpu_hosts.end());
    const YAML::Node node = root.raw("gpu_speeds");
    for (const auto& kv : node) {
      // A key that is itself a list or a mapping names no host.
      if (!kv.first.IsScalar())
        root.fail("gpu_speeds", "expected GPU host names as keys ({n0_gpu3: 0.5}), got a " +
                                    std::string(kv.first.IsSequence() ? "list" : "mapping"));
      const std::string host = kv.first.Scalar();
      if (!known.count(host))
        m.fail(host, "is not a GPU host of the platform (e.g. " +
                         (gpu_hosts.empty() ? std::string("none") : gpu_hosts.front()) + ")");
      const double f = m.number(host, 1.0, limits::kSpeedFactor);
      out[host] = f;
    }
    m.reject_unknown_keys();
  }
  return out;
}

void apply_gpu_speeds(const std::map<std::string, double>& speeds, ExecutionGraph* g) {
  if (speeds.empty()) return;
  std::vector<double> factor(g->devices.size(), 1.0);
  for (size_t d = 0; d < g->devices.size(); ++d) {
    auto it = speeds.find(g->devices[d].host);
    if (it != speeds.end()) factor[d] = it->second;
  }
  for (Op& op : g->ops) {
    if (op.kind != OpKind::kCompute || op.stream.cls != StreamClass::kCompute) continue;
    const double f = factor[op.device];
    if (f == 1.0) continue;
    if (op.duration >= 0) {
      op.duration /= f;
    } else {
      op.flops /= f;
      op.bytes /= f;
    }
  }
}

}  // namespace orrery
