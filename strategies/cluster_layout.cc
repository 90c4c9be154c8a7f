#include "strategies/cluster_layout.h"

#include <cstdlib>
#include <map>
#include <set>

#include "common/errors.h"

namespace orrery {
namespace {

// "n12_gpu3" -> 12; -1 when the name does not follow the generated scheme.
int server_of(const std::string& host) {
  if (host.size() < 3 || host[0] != 'n') return -1;
  auto us = host.find('_');
  if (us == std::string::npos || us == 1) return -1;
  char* end = nullptr;
  long v = std::strtol(host.c_str() + 1, &end, 10);
  return end == host.c_str() + us ? static_cast<int>(v) : -1;
}

}  // namespace

ClusterLayout cluster_layout(const Topology& topo) {
  ClusterLayout out;
  std::map<int, ClusterServer> servers;
  for (const auto& h : topo.hosts) {
    int s = server_of(h.name);
    if (s < 0 || (h.role != "gpu" && h.role != "cpu")) continue;
    if (h.role == "cpu") {
      servers[s].cpus.push_back(h.name);
      servers[s].cpu_cores.push_back(h.cores);
      continue;
    }
    auto it = h.properties.find("launch_host");
    servers[s].gpus.push_back(static_cast<int>(out.gpus.size()));
    out.gpus.push_back({h.name, it == h.properties.end() ? h.name : it->second, s});
  }
  for (auto& [index, server] : servers) {
    if (index != static_cast<int>(out.servers.size()))
      throw InputError("platform " + topo.name + ": servers are not numbered n0, n1, ...");
    out.servers.push_back(std::move(server));
  }
  // Domains: the switches outside the servers that their NICs plug into.
  std::vector<std::set<std::string>> attached(out.servers.size());
  for (const auto& e : topo.edges)
    for (const auto& [inside, outside] : {std::pair{&e.a, &e.b}, std::pair{&e.b, &e.a}}) {
      const int s = server_of(*inside);
      if (s >= 0 && s < static_cast<int>(attached.size()) && server_of(*outside) < 0)
        attached[s].insert(*outside);
    }
  std::map<std::set<std::string>, int> domains;
  for (size_t s = 0; s < out.servers.size(); ++s)
    out.servers[s].domain =
        domains.emplace(attached[s], static_cast<int>(domains.size())).first->second;
  return out;
}

ClusterLayout cluster_layout_from_hosts(const std::vector<std::string>& gpu_hosts) {
  ClusterLayout out;
  bool named = !gpu_hosts.empty();
  for (const auto& h : gpu_hosts) named = named && server_of(h) >= 0;
  std::map<std::string, int> servers;
  for (const auto& h : gpu_hosts) {
    const std::string key = named ? std::to_string(server_of(h)) : h;
    auto [it, fresh] = servers.emplace(key, static_cast<int>(out.servers.size()));
    if (fresh) out.servers.push_back({});
    const int s = it->second;
    out.servers[s].gpus.push_back(static_cast<int>(out.gpus.size()));
    out.servers[s].cpus.push_back(h);
    out.servers[s].cpu_cores.push_back(1);
    out.gpus.push_back({h, h, s});
  }
  return out;
}

}  // namespace orrery
