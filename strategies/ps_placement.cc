#include "strategies/ps_placement.h"

#include <algorithm>
#include <numeric>

#include "common/errors.h"

namespace orrery {

std::vector<PsShard> place_ps_shards(const ClusterLayout& layout, const std::vector<int>& servers,
                                     int shards, int cores) {
  if (servers.empty()) throw InputError("strategy.ps: no server to run parameter servers on");
  if (shards < 1) throw InputError("strategy.ps.shards: must be at least 1");
  std::vector<PsShard> out;
  const int s = static_cast<int>(servers.size());
  for (int k = 0; k < shards; ++k) {
    PsShard p;
    p.server = servers[k % s];
    const ClusterServer& server = layout.servers.at(p.server);
    if (server.cpus.empty())
      throw InputError("strategy.ps: server " + std::to_string(p.server) + " has no CPU");
    p.socket = (k / s) % static_cast<int>(server.cpus.size());
    p.host = server.cpus[p.socket];
    const int socket_cores =
        p.socket < static_cast<int>(server.cpu_cores.size()) ? server.cpu_cores[p.socket] : 1;
    p.cores = cores > 0 ? cores : std::max(1, socket_cores);
    out.push_back(p);
  }
  return out;
}

std::vector<PsPiece> place_variables(const std::vector<Variable>& vars, int shards,
                                     PsPolicy policy) {
  std::vector<PsPiece> out;
  if (policy == PsPolicy::kPartitioned) {
    for (size_t v = 0; v < vars.size(); ++v)
      for (int k = 0; k < shards; ++k) out.push_back({static_cast<int>(v), k, 1.0 / shards});
    return out;
  }
  std::vector<int> order(vars.size());
  std::iota(order.begin(), order.end(), 0);
  std::vector<int> shard_of(vars.size(), 0);
  if (policy == PsPolicy::kGreedy) {
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return vars[a].pull_bytes > vars[b].pull_bytes; });
    std::vector<double> load(shards, 0.0);
    for (int v : order) {
      const int k = static_cast<int>(std::min_element(load.begin(), load.end()) - load.begin());
      shard_of[v] = k;
      load[k] += vars[v].pull_bytes;
    }
  } else {
    // Creation order is the order forward reads the variables; a variable no forward op reads
    // is created last.
    auto created = [&](int v) {
      return vars[v].forward.empty() ? 1 << 30 : vars[v].forward.front();
    };
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return created(a) < created(b); });
    for (size_t i = 0; i < order.size(); ++i) shard_of[order[i]] = static_cast<int>(i) % shards;
  }
  for (size_t v = 0; v < vars.size(); ++v) out.push_back({static_cast<int>(v), shard_of[v], 1.0});
  return out;
}

}  // namespace orrery
