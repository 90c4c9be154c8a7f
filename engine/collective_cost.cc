#include "engine/collective_cost.h"

#include <algorithm>
#include <limits>
#include <unordered_map>

#include "engine/collective_algos.h"

namespace orrery {
namespace {

using Flow = std::pair<int, int>;  // (src device, dst device)

// Time of each flow of `flows` moving `bytes` of payload when they all run at once.
std::vector<double> flow_times(const std::vector<Flow>& flows, double bytes,
                               const RouteLookup& route, const CollectivePlan& plan) {
  std::unordered_map<int, int> load;
  for (const auto& [s, d] : flows)
    for (const auto& [link, bw] : route(s, d).links) ++load[link];
  const double wire = bytes / plan.efficiency;
  std::vector<double> out;
  out.reserve(flows.size());
  for (const auto& [s, d] : flows) {
    const RouteInfo& r = route(s, d);
    double rate = std::numeric_limits<double>::infinity();
    for (const auto& [link, bw] : r.links) rate = std::min(rate, bw / load[link]);
    if (plan.max_rate > 0) rate = std::min(rate, plan.max_rate);
    out.push_back(r.latency + plan.step_delay(r) + (wire > 0 ? wire / rate : 0.0));
  }
  return out;
}

// Time for every flow of `flows` to move `bytes` of payload when they all run at once.
double concurrent_step_time(const std::vector<Flow>& flows, double bytes, const RouteLookup& route,
                            const CollectivePlan& plan) {
  double worst = 0.0;
  for (double t : flow_times(flows, bytes, route, plan)) worst = std::max(worst, t);
  return worst;
}

void add_ring_flows(const std::vector<int>& ranks, std::vector<Flow>* f) {
  if (ranks.size() < 2) return;
  for (size_t i = 0; i < ranks.size(); ++i) f->push_back({ranks[i], ranks[(i + 1) % ranks.size()]});
}

double max_block(const Collective& c) {
  if (c.counts.empty()) return c.ranks.empty() ? 0.0 : c.bytes / c.ranks.size();
  return *std::max_element(c.counts.begin(), c.counts.end());
}

// Ring-shaped algorithms keep every link of the ring busy at every step, so chunking cannot beat
// the per-link volume: steps x (block / rate), plus latency paid once per pipelined step.
double ring_time(int steps, int chunks, double block, const std::vector<Flow>& flows,
                 const RouteLookup& route, const CollectivePlan& plan) {
  if (steps <= 0 || flows.empty()) return 0.0;
  double latency = concurrent_step_time(flows, 0.0, route, plan);
  double transfer = concurrent_step_time(flows, block, route, plan) - latency;
  return steps * transfer + (steps + chunks - 1) * latency;
}

// One chunk's time in each phase, and the resource (set of links) each phase occupies.
struct Phase {
  double time = 0.0;
  int resource = 0;
};

// Chunks flowing through phases in order: the first chunk crosses them all, each later chunk
// adds the busiest resource's time (phases on one resource cannot overlap each other).
double pipelined_phases(const std::vector<Phase>& phases, int chunks) {
  double sum = 0.0;
  std::map<int, double> busy;
  for (const auto& p : phases) {
    sum += p.time;
    busy[p.resource] += p.time;
  }
  double worst = 0.0;
  for (const auto& [r, t] : busy) worst = std::max(worst, t);
  return sum + (chunks - 1) * worst;
}

std::vector<Flow> fan_flows(const CollectivePlan& plan, bool in) {
  std::vector<Flow> flows;
  for (size_t q = 0; q < plan.groups.size(); ++q) {
    const int e = plan.endpoints[std::min(q, plan.endpoints.size() - 1)];
    for (int d : plan.groups[q]) flows.push_back(in ? Flow{d, e} : Flow{e, d});
  }
  return flows;
}

double plan_time(const Collective& c, const CollectivePlan& plan, const RouteLookup& route) {
  const int n = static_cast<int>(c.ranks.size());
  if (n <= 1) return 0.0;
  const int ch = plan.chunks;
  const int P = plan.pipeline;
  switch (plan.algo) {
    case CollectiveAlgo::kDirect: {
      std::vector<Flow> flows;
      if (c.type == CollectiveType::kSendRecv) {
        for (int i = 0; i < n; ++i) flows.push_back({c.ranks[i], c.ranks[(i + 1) % n]});
        return concurrent_step_time(flows, c.bytes, route, plan);
      }
      for (int i = 0; i < n; ++i)
        for (int k = 1; k < n; ++k) flows.push_back({c.ranks[i], c.ranks[(i + k) % n]});
      double per_peer =
          (c.counts.empty() ? c.bytes : *std::max_element(c.counts.begin(), c.counts.end())) /
          (n - 1);
      return concurrent_step_time(flows, per_peer, route, plan);
    }
    case CollectiveAlgo::kTree: {
      // Pipelined chunks keep all tree edges busy at once in steady state. The first chunk
      // climbs the slowest path from a leaf (each edge at its own pace), every later chunk adds
      // the slowest edge.
      // Edge first_edge[t] + p - 1 is tree t's from position p to its parent.
      std::vector<Flow> edges;
      std::vector<size_t> first_edge;
      for (size_t t = 0; t < plan.tree.size(); ++t) {
        first_edge.push_back(edges.size());
        for (size_t p = 1; p < plan.tree[t].size(); ++p)
          edges.push_back({plan.tree[t][p], plan.tree[t][plan.parent[t][p]]});
      }
      const double share = c.bytes / static_cast<double>(plan.tree.size());
      const bool allreduce = c.type == CollectiveType::kAllReduce;
      // With chunks in flight both ways, the broadcast runs down while the reduce climbs.
      const bool overlap = allreduce && ch > 1 && plan.protocol != CollectiveProtocol::kIdeal;
      std::vector<double> t_edge;
      if (ch == 1) {
        // One chunk moves as a wave: the edges above subtrees of one height send together
        // (every leaf at once, then their parents, ...), each tree's alongside the other
        // channels' trees, which head the servers' chains at other GPUs.
        std::vector<int> height;  // per edge
        for (size_t t = 0; t < plan.tree.size(); ++t) {
          std::vector<int> h(plan.tree[t].size(), 0);
          for (size_t p = plan.tree[t].size(); p-- > 1;)
            h[plan.parent[t][p]] = std::max(h[plan.parent[t][p]], h[p] + 1);
          for (size_t p = 1; p < plan.tree[t].size(); ++p) height.push_back(h[p]);
        }
        t_edge.assign(edges.size(), 0.0);
        const int top = edges.empty() ? -1 : *std::max_element(height.begin(), height.end());
        for (int level = 0; level <= top; ++level) {
          std::vector<Flow> wave;
          std::vector<size_t> which;
          for (size_t e = 0; e < edges.size(); ++e)
            if (height[e] == level) {
              wave.push_back(edges[e]);
              which.push_back(e);
            }
          const std::vector<double> t = flow_times(wave, share, route, plan);
          for (size_t i = 0; i < which.size(); ++i) t_edge[which[i]] = t[i];
        }
      } else {
        std::vector<Flow> busy = edges;
        if (overlap)
          for (const auto& [a, b] : edges) busy.push_back({b, a});
        t_edge = flow_times(busy, share / ch, route, plan);
      }
      double slowest = 0.0;
      for (double t : t_edge) slowest = std::max(slowest, t);
      double path = 0.0;  // the slowest leaf-to-root path
      for (size_t t = 0; t < plan.tree.size(); ++t)
        for (size_t p = 1; p < plan.tree[t].size(); ++p) {
          double sum = 0.0;
          for (int q = static_cast<int>(p); q > 0; q = plan.parent[t][q])
            sum += t_edge[first_edge[t] + static_cast<size_t>(q) - 1];
          path = std::max(path, sum);
        }
      if (overlap) return 2 * path + (ch - 1) * slowest;
      return (allreduce ? 2 : 1) * (path + (ch - 1) * slowest);
    }
    case CollectiveAlgo::kHierarchical: {
      if (c.type == CollectiveType::kAllToAll) {
        const double b = c.bytes / P;
        const double nodes = static_cast<double>(plan.groups.size());
        std::vector<Flow> network, nvlink;
        for (size_t a = 0; a < plan.groups.size(); ++a)
          for (size_t q = 0; q < plan.groups.size(); ++q)
            if (a != q)
              for (size_t l = 0; l < plan.groups[a].size(); ++l)
                network.push_back({plan.groups[a][l], plan.groups[q][l]});
        for (const auto& node : plan.groups)
          for (int x : node)
            for (int y : node)
              if (x != y) nvlink.push_back({x, y});
        // A block per peer: c.bytes is what a rank sends to the n - 1 others.
        const double g = static_cast<double>(plan.groups[0].size());
        const double block = b / (nodes * g - 1);
        const double t_net = concurrent_step_time(network, g * block, route, plan);
        const double t_nvl = concurrent_step_time(nvlink, nodes * block, route, plan);
        return pipelined_phases({{t_net, 0}, {t_nvl, 1}}, P);
      }
      const auto& groups = plan.groups;
      const int g = static_cast<int>(groups[0].size());
      const int nodes = static_cast<int>(groups.size());
      const double b = c.bytes / P;
      std::vector<Flow> intra, inter;
      for (const auto& node : groups) add_ring_flows(node, &intra);
      for (const auto& ring : local_rank_rings(groups)) add_ring_flows(ring, &inter);
      double rs = ring_time(g - 1, ch, b / g, intra, route, plan);
      double ar = ring_time(2 * (nodes - 1), ch, b / g / nodes, inter, route, plan);
      return pipelined_phases({{rs, 0}, {ar, 1}, {rs, 0}}, P);
    }
    case CollectiveAlgo::kNvls: {
      const double b = c.bytes / P;
      double up = 1.0, down = 1.0;
      if (c.type == CollectiveType::kAllReduce) up = down = (n + 1.0) / n;
      if (c.type == CollectiveType::kReduceScatter) down = 1.0 / n;
      if (c.type == CollectiveType::kAllGather) up = 1.0 / n;
      double t_up = concurrent_step_time(fan_flows(plan, true), up * b, route, plan);
      double t_down = concurrent_step_time(fan_flows(plan, false), down * b, route, plan);
      return pipelined_phases({{t_up, 0}, {t_down, 1}}, P);
    }
    case CollectiveAlgo::kPat: {
      const std::vector<int>& ring = plan.channels.at(0);
      double sum = 0.0;
      for (const PatStep& step : pat_steps(n, c.type)) {
        std::vector<Flow> flows;
        for (int i = 0; i < n; ++i) flows.push_back({ring[i], ring[(i - step.distance + n) % n]});
        sum += concurrent_step_time(flows, step.blocks * c.bytes / n, route, plan);
      }
      return sum;
    }
    case CollectiveAlgo::kNvlsTree: {
      const double b = c.bytes / P;
      const int g = static_cast<int>(plan.groups[0].size());
      const int nodes = static_cast<int>(plan.groups.size());
      std::vector<Flow> inter;
      for (const auto& ring : local_rank_rings(plan.groups)) add_ring_flows(ring, &inter);
      const double full_up = concurrent_step_time(fan_flows(plan, true), b, route, plan);
      const double full_down = concurrent_step_time(fan_flows(plan, false), b, route, plan);
      const double shard_up = concurrent_step_time(fan_flows(plan, true), b / g, route, plan);
      const double shard_down = concurrent_step_time(fan_flows(plan, false), b / g, route, plan);
      const double ar = ring_time(2 * (nodes - 1), 1, b / g / nodes, inter, route, plan);
      return pipelined_phases(
          {{full_up, 0}, {shard_down, 1}, {ar, 2}, {shard_up, 0}, {full_down, 1}}, P);
    }
    case CollectiveAlgo::kCollNet: {
      const double b = c.bytes / P;
      const int g = static_cast<int>(plan.groups[0].size());
      std::vector<Flow> intra;
      for (const auto& node : plan.groups) add_ring_flows(node, &intra);
      double rs = ring_time(g - 1, 1, b / g, intra, route, plan);
      double t_in = concurrent_step_time(fan_flows(plan, true), b / g, route, plan);
      double t_out = concurrent_step_time(fan_flows(plan, false), b / g, route, plan);
      return pipelined_phases({{rs, 0}, {t_in, 1}, {t_out, 2}, {rs, 0}}, P);
    }
    default:
      break;
  }
  const double k = static_cast<double>(plan.channels.size());
  if (c.type == CollectiveType::kBroadcast || c.type == CollectiveType::kReduce) {
    // Pipelined chains, every hop of every channel busy at once in steady state: the first
    // chunk crosses the hops one after the other, each later chunk adds the slowest hop.
    std::vector<Flow> hops;
    for (const auto& ring : plan.channels)
      for (int h = 0; h + 1 < n; ++h) hops.push_back({ring[h], ring[h + 1]});
    const std::vector<double> t = flow_times(hops, c.bytes / k / ch, route, plan);
    double path = 0.0, slowest = 0.0;
    for (size_t r = 0; r < plan.channels.size(); ++r) {
      double sum = 0.0;
      for (int h = 0; h + 1 < n; ++h) {
        const double th = t[r * (n - 1) + h];
        sum += th;
        slowest = std::max(slowest, th);
      }
      path = std::max(path, sum);
    }
    return path + (ch - 1) * slowest;
  }
  std::vector<Flow> flows;
  for (const auto& ring : plan.channels) add_ring_flows(ring, &flows);
  const int steps = c.type == CollectiveType::kAllReduce ? 2 * (n - 1) : n - 1;
  return ring_time(steps, ch, max_block(c) / k, flows, route, plan);
}

}  // namespace

double analytical_collective_time(const Collective& c, const CollectivePlan& plan,
                                  const RouteLookup& route) {
  if (c.ranks.size() <= 1) return 0.0;
  return plan.base_latency + plan_time(c, plan, route);
}

const std::vector<std::vector<int>>& CollectivePlanner::rings(const std::vector<int>& devices,
                                                              const RouteLookup& route) {
  auto it = rings_.find(devices);
  if (it == rings_.end()) it = rings_.emplace(devices, search_rings(devices, route)).first;
  return it->second;
}

const CollectivePlan& CollectivePlanner::plan(const Collective& c, const CollectiveTopology& topo) {
  Key key{static_cast<int>(c.type),
          c.root,
          c.chunks,
          c.pipeline,
          static_cast<int>(c.algo),
          static_cast<int>(c.protocol),
          c.bytes,
          c.max_rate,
          !c.counts.empty(),
          c.ranks};
  auto cached = plans_.find(key);
  // Per-rank counts change the best choice with every call: not cached.
  if (cached != plans_.end() && c.counts.empty()) return cached->second;

  RingSearch rings_of =
      [this, &topo](const std::vector<int>& devices) -> const std::vector<std::vector<int>>& {
    return rings(devices, topo.route);
  };
  CollectivePlan best;
  if (c.protocol == CollectiveProtocol::kIdeal) {
    best = plan_collective(c, resolve_collective_algo(c, topo.node_of), c.protocol, topo, rings_of);
  } else {
    auto candidates = candidate_plans(c, topo);
    if (candidates.empty()) {
      Collective ring = c;
      ring.algo = CollectiveAlgo::kRing;
      candidates = candidate_plans(ring, topo);
    }
    double best_time = std::numeric_limits<double>::infinity();
    for (const auto& [algo, proto] : candidates) {
      CollectivePlan p = plan_collective(c, algo, proto, topo, rings_of);
      double t = analytical_collective_time(c, p, topo.route);
      if (t < best_time) {
        best_time = t;
        best = std::move(p);
      }
    }
  }
  return plans_[key] = std::move(best);
}

}  // namespace orrery
