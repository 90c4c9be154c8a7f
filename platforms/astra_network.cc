#include "platforms/astra_network.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <string>
#include <vector>

#include "common/errors.h"
#include "common/input_limits.h"
#include "common/size_guard.h"
#include "common/units.h"
#include "common/yaml_reader.h"

namespace orrery {
namespace {

// ASTRA-sim converts GB/s with 1 GB = 2^30 bytes.
constexpr double kAstraGB = 1073741824.0;

enum class Block { kRing, kFullyConnected, kSwitch };

struct Dimension {
  Block block = Block::kSwitch;
  int npus = 0;
  double bandwidth = 0;  // bytes/s
  double latency = 0;    // s
};

// The list under `key`, one YAML node per dimension.
std::vector<YAML::Node> list(const YamlMap& m, const std::string& key) {
  if (!m.has(key)) m.fail(key, "is required: one value per dimension");
  YAML::Node n = m.raw(key);
  if (!n.IsSequence() || n.size() == 0)
    m.fail(key, "expected a list with one value per dimension, e.g. [ 8, 4 ]");
  std::vector<YAML::Node> out;
  for (const auto& e : n) out.push_back(e);
  return out;
}

double number(const YamlMap& m, const std::string& key, size_t d, const YAML::Node& n) {
  double v = 0;
  try {
    v = n.as<double>();
  } catch (const YAML::Exception&) {
    m.fail(key, "dimension " + std::to_string(d) + ": expected a number, got \"" +
                    (n.IsScalar() ? n.Scalar() : std::string("a list or map")) + "\"");
  }
  if (!std::isfinite(v)) m.fail(key, "dimension " + std::to_string(d) + ": not a finite number");
  return v;
}

std::vector<Dimension> read_dimensions(const std::string& path) {
  const YamlMap m(load_yaml_file(path), path);
  const auto topo = list(m, "topology");
  const auto npus = list(m, "npus_count");
  const auto bw = list(m, "bandwidth");
  const auto lat = list(m, "latency");
  for (const auto& [key, n] : {std::pair{"npus_count", npus.size()},
                               std::pair{"bandwidth", bw.size()}, std::pair{"latency", lat.size()}})
    if (n != topo.size())
      m.fail(key, "has " + std::to_string(n) + " values for " + std::to_string(topo.size()) +
                      " dimensions (topology)");
  m.reject_unknown_keys();
  std::vector<Dimension> dims(topo.size());
  double total = 1;
  for (size_t d = 0; d < topo.size(); ++d) {
    const std::string name = topo[d].IsScalar() ? topo[d].Scalar() : "";
    if (name == "Ring")
      dims[d].block = Block::kRing;
    else if (name == "FullyConnected")
      dims[d].block = Block::kFullyConnected;
    else if (name == "Switch")
      dims[d].block = Block::kSwitch;
    else
      m.fail("topology", "dimension " + std::to_string(d) +
                             ": expected Ring, FullyConnected or Switch, got \"" + name + "\"");
    const double n = number(m, "npus_count", d, npus[d]);
    if (n < 2 || n != std::floor(n) || n > limits::kGpus.hi)
      m.fail("npus_count", "dimension " + std::to_string(d) +
                               ": expected a whole number of NPUs, at least 2, got " +
                               format_exact(n));
    dims[d].npus = static_cast<int>(n);
    total *= n;
    const double b = number(m, "bandwidth", d, bw[d]);
    if (b <= 0) m.fail("bandwidth", "dimension " + std::to_string(d) + ": GB/s must be above 0");
    dims[d].bandwidth = b * kAstraGB;
    const double l = number(m, "latency", d, lat[d]);
    if (l < 0) m.fail("latency", "dimension " + std::to_string(d) + ": ns must be 0 or more");
    dims[d].latency = l * 1e-9;
  }
  if (total > limits::kGpus.hi)
    m.fail("npus_count", "multiplies to " + format_exact(total) + " NPUs, more than the limit of " +
                             format_exact(limits::kGpus.hi));
  return dims;
}

const char* block_name(Block b) {
  switch (b) {
    case Block::kRing:
      return "Ring";
    case Block::kFullyConnected:
      return "FullyConnected";
    default:
      return "Switch";
  }
}

}  // namespace

AstraNetwork read_astra_network(const std::string& path, const DeviceSpec& gpu) {
  const std::vector<Dimension> dims = read_dimensions(path);
  // Refused before anything is built: FullyConnected dimensions grow as n^2.
  double total_npus = 1;
  for (const auto& d : dims) total_npus *= d.npus;
  double links = 0;
  for (const auto& d : dims) {
    const double groups = total_npus / d.npus;
    links += groups * (d.block == Block::kFullyConnected ? d.npus * (d.npus - 1) / 2.0 : d.npus);
  }
  SizeEstimate e;
  e.memory_bytes = total_npus * kBytesPerHost + links * kBytesPerLink;
  e.basis = approximate_count(total_npus) + " NPUs, " + approximate_count(links) + " links";
  check_size(e, path, "building this network");
  // Memory is not what runs out first: every route is a search over all the links, so a
  // FullyConnected dimension of 512 NPUs (131,000 links) takes 13 s and one of 2,048 hours.
  constexpr double kMaxLinks = 500000;
  if (run_limits().size_limits && links > kMaxLinks)
    throw InputError(path + ": building this network would need about " + approximate_count(links) +
                     " links (" + e.basis + "; FullyConnected dimensions grow as n^2), over the "
                     "limit of " + approximate_count(kMaxLinks) +
                     ": finding routes over them would take hours; use a Switch dimension, or "
                     "lift the limit with --no-size-limit");
  AstraNetwork out;
  Topology& t = out.topology;
  t.name = "astra";
  const int total = static_cast<int>(total_npus);  // read_dimensions keeps it within the limit
  const int per_server = dims[0].npus;
  auto host = [&](int k) {
    return "n" + std::to_string(k / per_server) + "_gpu" + std::to_string(k % per_server);
  };
  for (int k = 0; k < total; ++k)
    t.hosts.push_back(
        {host(k), gpu.fp32, 1, "gpu", {{"mem_bw", format_exact(gpu.mem_bw)}, {"model", gpu.name}}});
  std::string summary;
  int stride = 1;  // distance between NPU ids that differ by one in this coordinate
  for (size_t d = 0; d < dims.size(); ++d) {
    const Dimension& dim = dims[d];
    const std::string cls = d == 0 ? "nvlink" : "network";
    const std::string dn = "d" + std::to_string(d);
    auto link = [&](const std::string& a, const std::string& b, const std::string& name) {
      t.links.push_back({name, dim.bandwidth, dim.latency, true, cls});
      t.edges.push_back({a, b, name});
    };
    // Each group: the NPUs whose other coordinates are equal; `base` has coordinate d = 0.
    int group = 0;
    for (int base = 0; base < total; ++base) {
      if ((base / stride) % dim.npus != 0) continue;
      const std::string g = dn + "_g" + std::to_string(group++);
      auto member = [&](int i) { return base + i * stride; };
      if (dim.block == Block::kSwitch) {
        t.routers.push_back(g + "_switch");
        for (int i = 0; i < dim.npus; ++i)
          link(host(member(i)), g + "_switch", g + "_l" + std::to_string(i));
      } else if (dim.block == Block::kRing) {
        // Two NPUs: one link, not two parallel ones.
        const int links = dim.npus == 2 ? 1 : dim.npus;
        for (int i = 0; i < links; ++i)
          link(host(member(i)), host(member((i + 1) % dim.npus)), g + "_l" + std::to_string(i));
      } else {
        for (int i = 0; i < dim.npus; ++i)
          for (int j = i + 1; j < dim.npus; ++j)
            link(host(member(i)), host(member(j)),
                 g + "_l" + std::to_string(i) + "_" + std::to_string(j));
      }
    }
    summary +=
        std::string(d ? " x " : "") + block_name(dim.block) + "(" + std::to_string(dim.npus) + ")";
    stride *= dim.npus;
  }
  out.summary = "ASTRA-sim network " + summary + ": " + std::to_string(total) + " NPUs";
  return out;
}

}  // namespace orrery
