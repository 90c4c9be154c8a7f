#include "platforms/platform_spec.h"

#include "common/embedded_data.h"
#include "common/errors.h"
#include "common/input_limits.h"
#include "common/suggest.h"
#include "common/yaml_reader.h"

namespace orrery {
namespace {

// Replaces the base tree's values with the override's, recursing into mappings present in both.
// Override nodes keep their marks, so errors point at the user's file and line.
YAML::Node deep_merge(const YAML::Node& base, const YAML::Node& over) {
  if (!over || over.IsNull()) return base;
  if (!base || !base.IsMap() || !over.IsMap()) return over;
  // force_insert keeps the key nodes themselves, and with them their line numbers.
  YAML::Node out(YAML::NodeType::Map);
  for (auto it = base.begin(); it != base.end(); ++it)
    if (!over[it->first.Scalar()]) out.force_insert(it->first, it->second);
  for (auto it = over.begin(); it != over.end(); ++it) {
    YAML::Node b = base[it->first.Scalar()];
    out.force_insert(
        it->first, (b && b.IsMap() && it->second.IsMap()) ? deep_merge(b, it->second) : it->second);
  }
  return out;
}

void require(bool ok, const YamlMap& m, const std::string& key, const std::string& what) {
  if (!ok) m.fail(key, what);
}

double positive_bw(const YamlMap& m, const std::string& key, double fallback) {
  double v = m.bandwidth(key, fallback);
  require(v > 0, m, key, "bandwidth must be positive");
  return v;
}

int count_at_least(const YamlMap& m, const std::string& key, int fallback, int min) {
  int v = m.integer(key, fallback);
  require(v >= min, m, key, "must be at least " + std::to_string(min));
  return v;
}

double efficiency(const YamlMap& m, const std::string& key, double fallback) {
  return m.number(key, fallback, limits::kEfficiency);
}

double overhead(const YamlMap& m, const std::string& key, double fallback) {
  return m.number(key, fallback, limits::kOverhead);
}

// A list of non-negative integers (indices); absent means empty.
std::vector<int> index_list(const YamlMap& m, const std::string& key) {
  std::vector<int> out;
  if (!m.has(key)) return out;
  YAML::Node list = m.raw(key);
  if (!list.IsSequence()) m.fail(key, "expected a list of indices such as [0, 0, 1]");
  for (const auto& item : list) {
    int v = -1;
    if (!item.IsScalar() || !YAML::convert<int>::decode(item, v) || v < 0)
      m.fail(key, "expected a list of non-negative integers, got \"" +
                      (item.IsScalar() ? item.Scalar() : std::string("a nested value")) + "\"");
    out.push_back(v);
  }
  return out;
}

CpuSpec parse_cpu(const YamlMap& m) {
  CpuSpec c;
  c.model = m.str("model", c.model);
  c.sockets = count_at_least(m, "sockets", c.sockets, 1);
  c.flops = m.flops("flops", c.flops);
  require(c.flops > 0, m, "flops", "must be positive");
  c.mem_bw = positive_bw(m, "mem_bw", c.mem_bw);
  c.qpi_bandwidth = positive_bw(m, "qpi_bandwidth", c.qpi_bandwidth);
  c.qpi_latency = m.time("qpi_latency", c.qpi_latency);
  c.qpi_duplex_overhead = overhead(m, "qpi_duplex_overhead", c.qpi_duplex_overhead);
  m.reject_unknown_keys();
  return c;
}

PcieSpec parse_pcie(const YamlMap& m) {
  PcieSpec p;
  p.bandwidth = positive_bw(m, "bandwidth", p.bandwidth);
  p.latency = m.time("latency", p.latency);
  p.write_efficiency = efficiency(m, "write_efficiency", p.write_efficiency);
  p.read_efficiency = efficiency(m, "read_efficiency", p.read_efficiency);
  p.duplex_overhead = overhead(m, "duplex_overhead", p.duplex_overhead);
  p.switches_per_socket = count_at_least(m, "switches_per_socket", p.switches_per_socket, 0);
  p.gpu_switch = index_list(m, "gpu_switch");
  p.root_complex_p2p_bandwidth =
      m.bandwidth("root_complex_p2p_bandwidth", p.root_complex_p2p_bandwidth);
  m.reject_unknown_keys();
  return p;
}

NvlinkSpec parse_nvlink(const YamlMap& m) {
  NvlinkSpec n;
  n.topology = m.str("topology", n.topology);
  if (n.topology != "none" && n.topology != "cube-mesh" && n.topology != "nvswitch" &&
      n.topology != "bridge")
    m.fail("topology", "expected none, cube-mesh, nvswitch or bridge, got \"" + n.topology + "\"");
  n.bandwidth = positive_bw(m, "bandwidth", n.bandwidth);
  n.efficiency = efficiency(m, "efficiency", n.efficiency);
  n.latency = m.time("latency", n.latency);
  n.links_per_gpu = count_at_least(m, "links_per_gpu", n.links_per_gpu, 1);
  n.nonadjacent = m.str("nonadjacent", n.nonadjacent);
  if (n.nonadjacent != "nvlink" && n.nonadjacent != "pcie")
    m.fail("nonadjacent", "expected nvlink or pcie, got \"" + n.nonadjacent + "\"");
  n.sharp = m.boolean("sharp", n.sharp);
  m.reject_unknown_keys();
  return n;
}

NicSpec parse_nic(const YamlMap& m) {
  NicSpec n;
  n.model = m.str("model", n.model);
  n.count = count_at_least(m, "count", n.count, 0);
  n.bandwidth = positive_bw(m, "bandwidth", n.bandwidth);
  n.latency = m.time("latency", n.latency);
  n.pcie_switch = index_list(m, "pcie_switch");
  // Which MTUs a fabric kind allows is checked with the kind (check_platform_spec).
  n.mtu = m.integer("mtu", n.mtu);
  require(n.mtu >= 0, m, "mtu", "must be a packet size in bytes such as 4096");
  m.reject_unknown_keys();
  return n;
}

FabricSpec parse_fabric(const YamlMap& m) {
  FabricSpec f;
  f.kind = m.str("kind", f.kind);
  if (f.kind != "ethernet" && f.kind != "roce" && f.kind != "infiniband")
    m.fail("kind", "expected ethernet, roce or infiniband, got \"" + f.kind + "\"");
  f.topology = m.str("topology", f.topology);
  if (f.topology != "switch" && f.topology != "fat-tree" && f.topology != "rail-optimized")
    m.fail("topology", "expected switch, fat-tree or rail-optimized, got \"" + f.topology + "\"");
  f.latency = m.time("latency", f.latency);
  f.servers_per_leaf = count_at_least(m, "servers_per_leaf", f.servers_per_leaf, 1);
  f.oversubscription = m.number("oversubscription", f.oversubscription, limits::kOversubscription);
  f.sharp = m.boolean("sharp", f.sharp);
  m.reject_unknown_keys();
  return f;
}

ServerSpec parse_server(const YamlMap& server, const std::string& origin) {
  ServerSpec s;
  s.gpus = count_at_least(server, "gpus", s.gpus, 1);
  if (server.has("gpu"))
    s.gpu = parse_device_spec(server.raw("gpu"), origin, server.key_path("gpu"), s.gpu);
  s.cpu = parse_cpu(server.map("cpu"));
  s.pcie = parse_pcie(server.map("pcie"));
  s.nvlink = parse_nvlink(server.map("nvlink"));
  s.nic = parse_nic(server.map("nic"));
  s.nccl_launch = server.time("nccl_launch", s.nccl_launch);
  server.reject_unknown_keys();
  return s;
}

// `server_groups`: each group's keys replace the platform server's (`base`, the merged tree's
// server mapping); the groups' server counts add up to the platform's.
void read_server_groups(const YamlMap& m, const YAML::Node& base, const std::string& origin,
                        bool user_servers, PlatformSpec* spec) {
  const YAML::Node list = m.raw("server_groups");
  if (!list.IsSequence() || list.size() == 0)
    m.fail("server_groups",
           "expected a list of groups such as {servers: 2, gpu: A100-SXM4-80GB}, in server order");
  int total = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string path = m.key_path("server_groups") + "[" + std::to_string(i) + "]";
    if (!list[i].IsMap())
      m.fail("server_groups", "[" + std::to_string(i) + "]: expected a mapping");
    YamlMap g(list[i], origin, path);
    for (const char* fixed : {"gpus", "nic"})
      if (g.has(fixed))
        g.fail(fixed, "is the platform's (server." + std::string(fixed) +
                          "), the same in every server of a mixed cluster");
    YAML::Node over(YAML::NodeType::Map);
    for (auto it = list[i].begin(); it != list[i].end(); ++it)
      if (it->first.Scalar() != "servers") over.force_insert(it->first, it->second);
    ServerGroup group;
    group.servers = count_at_least(g, "servers", 1, 1);
    group.server = parse_server(YamlMap(deep_merge(base, over), origin, path), origin);
    // Read through the merged tree above; marked known here.
    for (const char* k : {"gpu", "cpu", "pcie", "nvlink"})
      if (g.has(k)) g.raw(k);
    g.reject_unknown_keys();
    total += group.servers;
    if (total > limits::kServers.hi)
      g.fail("servers", "the groups add up to more servers than " + limits::kServers.text());
    spec->server_groups.push_back(std::move(group));
  }
  if (user_servers && m.integer("servers", 0) != total)
    m.fail("servers", "is " + std::to_string(m.integer("servers", 0)) +
                          " but the server_groups add up to " + std::to_string(total));
  spec->servers = total;
  spec->server = spec->server_groups.front().server;
}

}  // namespace

const ServerSpec& server_spec(const PlatformSpec& spec, int n) {
  return spec.server_groups.empty() ? spec.server
                                    : spec.server_groups[server_group_of(spec, n)].server;
}

int server_group_of(const PlatformSpec& spec, int n) {
  for (size_t g = 0; g < spec.server_groups.size(); ++g) {
    n -= spec.server_groups[g].servers;
    if (n < 0) return static_cast<int>(g);
  }
  return spec.server_groups.empty() ? 0 : static_cast<int>(spec.server_groups.size()) - 1;
}

std::vector<std::string> platform_preset_names() {
  std::vector<std::string> names;
  for (const auto& [name, text] : embedded_files("platform_presets")) names.push_back(name);
  return names;
}

const std::string& platform_preset_yaml(const std::string& name) {
  const auto& presets = embedded_files("platform_presets");
  auto it = presets.find(name);
  if (it == presets.end()) {
    std::vector<std::string> names;
    for (const auto& [n, t] : presets) names.push_back(n);
    throw InputError("unknown platform preset \"" + name + "\"" + did_you_mean(name, names) +
                     " (known presets: " + join_names(names) + ")");
  }
  return it->second;
}

PlatformSpec parse_platform_spec(const YAML::Node& node, const std::string& origin,
                                 const std::string& key_path) {
  YamlMap user(node, origin, key_path);
  // Read before the merge below, which assigns through `tree` into the node itself.
  bool user_servers = false;  // rather than the preset's
  for (auto it = node.begin(); node.IsMap() && it != node.end(); ++it)
    user_servers = user_servers || it->first.Scalar() == "servers";
  YAML::Node tree = node;
  std::string preset = user.str("preset", "");
  if (!preset.empty()) {
    YAML::Node base;
    try {
      base = load_yaml_text(platform_preset_yaml(preset), "preset " + preset);
    } catch (const InputError& e) {
      user.fail("preset", e.what());
    }
    YAML::Node over(YAML::NodeType::Map);
    for (auto it = node.begin(); it != node.end(); ++it)
      if (it->first.Scalar() != "preset") over.force_insert(it->first, it->second);
    tree = deep_merge(base, over);
  }
  YamlMap m(tree, origin, key_path);
  m.str("preset", "");
  PlatformSpec spec;
  spec.name = preset.empty() ? "custom" : preset;
  spec.description = m.str("description", "");
  spec.sources = m.str_list("sources");
  spec.servers = count_at_least(m, "servers", spec.servers, 1);
  YamlMap server = m.map("server");
  YamlMap fabric = m.map("fabric");
  spec.server = parse_server(server, origin);
  spec.fabric = parse_fabric(fabric);
  if (m.has("server_groups")) read_server_groups(m, tree["server"], origin, user_servers, &spec);
  m.reject_unknown_keys();
  // Cross-key checks report at the offending key's line: find the mapping that holds it.
  check_platform_spec(spec, [&](const std::string& key, const std::string& message) {
    if (key.rfind("server_groups", 0) == 0)
      m.fail("server_groups", key.substr(13) + ": " + message);
    auto dot = key.rfind('.');
    if (dot == std::string::npos) m.fail(key, message);
    std::string section = key.substr(0, dot), leaf = key.substr(dot + 1);
    if (section == "server") server.fail(leaf, message);
    if (section == "fabric") fabric.fail(leaf, message);
    server.map(section.substr(section.find('.') + 1)).fail(leaf, message);
  });
  return spec;
}

}  // namespace orrery
