#include "engine/collective_cost.h"

#include <algorithm>
#include <limits>
#include <map>
#include <unordered_map>

namespace orrery {
namespace {

using Flow = std::pair<int, int>;  // (src device, dst device)

// Time for every flow of `flows` to move `bytes` when they all run at once.
double concurrent_step_time(const std::vector<Flow>& flows, double bytes,
                            const RouteLookup& route) {
  std::unordered_map<int, int> load;
  for (const auto& [s, d] : flows)
    for (const auto& [link, bw] : route(s, d).links) ++load[link];
  double worst = 0.0;
  for (const auto& [s, d] : flows) {
    const RouteInfo& r = route(s, d);
    double rate = std::numeric_limits<double>::infinity();
    for (const auto& [link, bw] : r.links) rate = std::min(rate, bw / load[link]);
    worst = std::max(worst, r.latency + (bytes > 0 ? bytes / rate : 0.0));
  }
  return worst;
}

std::vector<Flow> ring_flows(const std::vector<int>& ranks) {
  std::vector<Flow> f;
  for (size_t i = 0; i < ranks.size(); ++i) f.push_back({ranks[i], ranks[(i + 1) % ranks.size()]});
  return f;
}

double max_block(const Collective& c) {
  if (c.counts.empty()) return c.ranks.empty() ? 0.0 : c.bytes / c.ranks.size();
  return *std::max_element(c.counts.begin(), c.counts.end());
}

// Ranks grouped by node (as in collective_algos.cc).
std::vector<std::vector<int>> node_groups(const std::vector<int>& ranks,
                                          const std::vector<int>& node_of) {
  std::vector<std::vector<int>> groups;
  std::map<int, size_t> where;
  for (size_t p = 0; p < ranks.size(); ++p) {
    auto it = where.emplace(node_of[p], groups.size()).first;
    if (it->second == groups.size()) groups.emplace_back();
    groups[it->second].push_back(ranks[p]);
  }
  return groups;
}

double pipelined(int steps, int chunks, double step_time) {
  return steps <= 0 ? 0.0 : (steps + chunks - 1) * step_time;
}

// Ring-shaped algorithms keep every link of the ring busy at every step, so chunking cannot beat
// the per-link volume: steps x (block / rate), plus latency paid once per pipelined step.
double ring_time(int steps, int chunks, double block, const std::vector<Flow>& flows,
                 const RouteLookup& route) {
  if (steps <= 0) return 0.0;
  double latency = concurrent_step_time(flows, 0.0, route);
  double transfer = concurrent_step_time(flows, block, route) - latency;
  return steps * transfer + (steps + chunks - 1) * latency;
}

}  // namespace

double analytical_collective_time(const Collective& c, CollectiveAlgo algo,
                                  const std::vector<int>& node_of, const RouteLookup& route) {
  const int n = static_cast<int>(c.ranks.size());
  if (n <= 1) return 0.0;
  const int ch = c.chunks;
  switch (c.type) {
    case CollectiveType::kAllToAll: {
      std::vector<Flow> flows;
      for (int i = 0; i < n; ++i)
        for (int k = 1; k < n; ++k) flows.push_back({c.ranks[i], c.ranks[(i + k) % n]});
      double per_peer =
          (c.counts.empty() ? c.bytes : *std::max_element(c.counts.begin(), c.counts.end())) /
          (n - 1);
      return concurrent_step_time(flows, per_peer, route);
    }
    case CollectiveType::kBroadcast:
    case CollectiveType::kReduce:
      if (algo != CollectiveAlgo::kTree) {
        double step = 0.0;  // pipelined hops run on distinct links: the slowest hop paces them
        for (int h = 0; h + 1 < n; ++h)
          step = std::max(step, concurrent_step_time(
                                    {{c.ranks[(c.root + h) % n], c.ranks[(c.root + h + 1) % n]}},
                                    c.bytes / ch, route));
        return pipelined(n - 1, ch, step);
      }
      [[fallthrough]];
    case CollectiveType::kAllReduce:
      if (algo == CollectiveAlgo::kTree) {
        // All tree edges busy at once in steady state; depth levels to fill the pipeline.
        std::vector<Flow> edges;
        int depth = 0;
        for (int p = 1; p < n; ++p) {
          edges.push_back({c.ranks[(c.root + p) % n], c.ranks[(c.root + (p - 1) / 2) % n]});
          int d = 0;
          for (int q = p; q > 0; q = (q - 1) / 2) ++d;
          depth = std::max(depth, d);
        }
        double step = concurrent_step_time(edges, c.bytes / ch, route);
        int phases = c.type == CollectiveType::kAllReduce ? 2 : 1;
        return phases * pipelined(depth, ch, step);
      }
      if (algo == CollectiveAlgo::kHierarchical) {
        auto groups = node_groups(c.ranks, node_of);
        const int g = static_cast<int>(groups[0].size());
        const int nodes = static_cast<int>(groups.size());
        std::vector<Flow> intra, inter;
        for (const auto& node : groups)
          for (const auto& f : ring_flows(node)) intra.push_back(f);
        for (int l = 0; l < g; ++l) {
          std::vector<int> ring;
          for (const auto& node : groups) ring.push_back(node[l]);
          for (const auto& f : ring_flows(ring)) inter.push_back(f);
        }
        return 2 * ring_time(g - 1, ch, c.bytes / g, intra, route) +
               ring_time(2 * (nodes - 1), ch, c.bytes / g / nodes, inter, route);
      }
      return ring_time(2 * (n - 1), ch, c.bytes / n, ring_flows(c.ranks), route);
    case CollectiveType::kAllGather:
    case CollectiveType::kReduceScatter:
      return ring_time(n - 1, ch, max_block(c), ring_flows(c.ranks), route);
  }
  return 0.0;
}

}  // namespace orrery
