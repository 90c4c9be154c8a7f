// build_topology: PlatformSpec -> Topology. Each part of the machine has its own file (see
// topology_writer.h); this one puts them together and answers questions about the result.
#include <string>
#include <unordered_map>
#include <vector>

#include "common/errors.h"
#include "common/size_guard.h"
#include "platforms/platform_spec.h"
#include "platforms/topology_writer.h"

namespace orrery {

Topology build_topology(const PlatformSpec& spec) {
  // Specs built in code never went through the parser's checks.
  check_platform_spec(spec, [](const std::string& key, const std::string& message) {
    throw InputError("platform." + key + ": " + message);
  });
  check_size(estimate_platform_size(spec), "platform", "building this platform");
  Topology topo;
  topo.name = spec.name;
  TopoWriter w(&topo);
  std::vector<ServerNodes> servers;
  for (int n = 0; n < spec.servers; ++n) {
    servers.push_back(add_server(spec, n, w));
    add_nvlink(spec, servers.back(), w);
  }
  add_fabric(spec, servers, w);
  add_server_routes(servers, topo);
  return topo;
}

std::vector<std::string> gpu_hosts(const Topology& topo) {
  std::vector<std::string> out;
  for (const auto& h : topo.hosts)
    if (h.role == "gpu") out.push_back(h.name);
  return out;
}

std::string launch_host_of(const Topology& topo, const std::string& gpu_host) {
  // Callers ask for every GPU in turn: a linear scan each time made a 100,000-server platform
  // take minutes. The index is checked against the host it points at, so a stale one (another
  // topology at the same address) is rebuilt, never trusted.
  thread_local std::unordered_map<std::string, size_t> index;
  auto find = [&]() -> const TopoHost* {
    auto it = index.find(gpu_host);
    if (it == index.end() || it->second >= topo.hosts.size()) return nullptr;
    const TopoHost& h = topo.hosts[it->second];
    return h.name == gpu_host ? &h : nullptr;
  };
  const TopoHost* h = find();
  if (!h) {
    index.clear();
    for (size_t i = 0; i < topo.hosts.size(); ++i) index.emplace(topo.hosts[i].name, i);
    h = find();
  }
  if (!h) return gpu_host;
  auto it = h->properties.find("launch_host");
  return it == h->properties.end() ? gpu_host : it->second;
}

}  // namespace orrery
