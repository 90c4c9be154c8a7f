// build_topology: PlatformSpec -> Topology. Each part of the machine has its own file (see
// topology_writer.h); this one puts them together and answers questions about the result.
#include <string>
#include <vector>

#include "engine/errors.h"
#include "platforms/platform_spec.h"
#include "platforms/topology_writer.h"

namespace orrery {

Topology build_topology(const PlatformSpec& spec) {
  // Specs built in code never went through the parser's checks.
  check_platform_spec(spec, [](const std::string& key, const std::string& message) {
    throw InputError("platform." + key + ": " + message);
  });
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
  for (const auto& h : topo.hosts)
    if (h.name == gpu_host) {
      auto it = h.properties.find("launch_host");
      return it == h.properties.end() ? gpu_host : it->second;
    }
  return gpu_host;
}

}  // namespace orrery
