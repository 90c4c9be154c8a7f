#include "engine/collective_plan.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

namespace orrery {
namespace {

constexpr double kUs = 1e-6;

// NCCL's tuning constants (NCCL 2.30, src/graph/tuning.cc), microseconds, by protocol
// {LL, LL128, Simple}. Base: once per collective; hop: per step, by what the step crosses.
constexpr double kRingBase[3] = {6.6, 14.0, 8.4};
constexpr double kTreeBase[3] = {6.8, 14.0, 8.4};
constexpr double kRingHop[kNumHopClasses][3] = {{0.6, 1.9, 3.4}, {1.0, 2.5, 5.7}, {2.7, 4.0, 14.0}};
constexpr double kTreeHop[kNumHopClasses][3] = {
    {0.6, 1.25, 4.0}, {1.0, 1.9, 4.0}, {5.0, 8.5, 14.0}};
// Simple only: CollNetDirect and NVLS.
constexpr double kCollNetHop[kNumHopClasses] = {3.7, 3.7, 31.0};
constexpr double kNvlsHop[kNumHopClasses] = {25.0, 0.0, 18.0};
constexpr double kNvlsTreeHop[kNumHopClasses] = {25.0, 0.0, 20.9};
// PAT, Simple only: 8 us once and 2.8 us per rank ("still a linear part", NCCL's tuner), a
// step's latency by what it crosses, over the network 14 / 3.5 us (its log part); the tuner
// credits it with 0.75 of the ring's bandwidth.
constexpr double kPatBase = 8.0;
constexpr double kPatPerRank = 2.8;
constexpr double kPatHop[kNumHopClasses] = {4.0, 4.0, 14.0 / 3.5};
constexpr double kPatEfficiency = 0.75;

// Payload share of the wire: LL sends 8-byte stores of 4 data bytes and a 4-byte flag; LL128
// 128-byte lines of 120 data bytes and an 8-byte flag; Simple moves bulk data and synchronizes
// with fences (NCCL maintainers, github.com/NVIDIA/nccl issue 281).
constexpr double kProtocolEfficiency[3] = {0.5, 120.0 / 128.0, 1.0};
// NVLS reduces in the NVSwitch through multimem loads and stores, on 16 channels (CTAs) on
// Hopper, 24 on one Blackwell server and 32 across servers (NCCL 2.30, src/transport/nvls.cc).
int nvls_channels(double compute_capability, bool multi_node) {
  if (compute_capability >= 10) return multi_node ? 32 : 24;
  return 16;
}
// The chunk one NVLS channel moves per step (src/enqueue.cc, calcCollChunking): 128 KiB, halved
// while the collective would give each of the channels x heads concurrent operations fewer than
// 64, 8 and 2 chunks, down to 16 KiB.
double nvls_chunk_bytes(double bytes, double concurrent) {
  double chunk = 128.0 * 1024;
  if (bytes < 64 * concurrent * chunk) chunk = 64.0 * 1024;
  if (bytes < 8 * concurrent * chunk) chunk = 32.0 * 1024;
  if (bytes < 2 * concurrent * chunk) chunk = 16.0 * 1024;
  return chunk;
}
// Inside a ring across servers every step waits at least for the network proxy's post: NCCL's
// net overhead, 1 us on Intel hosts, 3 us for Simple (getNetOverhead, src/graph/tuning.cc).
constexpr double kNetOverhead[3] = {1.0, 1.0, 3.0};

// NVLS_TREE's: 128 KiB (64 KiB from 4 servers), halved to 64 KiB below 4 chunks per
// concurrent operation and to 32 KiB below one.
double nvls_tree_chunk_bytes(double bytes, double concurrent, int servers) {
  double chunk = servers >= 4 ? 64.0 * 1024 : 128.0 * 1024;
  if (bytes < 4 * concurrent * chunk && chunk > 64.0 * 1024) chunk = 64.0 * 1024;
  if (bytes < concurrent * chunk && chunk > 32.0 * 1024) chunk = 32.0 * 1024;
  return chunk;
}

// Multi-phase algorithms pipeline chunks of NCCL's Simple buffer per channel (4 MiB) through
// their phases; at most this many, so a flow replay of an 8 GiB collective stays small.
constexpr double kPipelineChunkBytes = 4.0 * 1024 * 1024;
constexpr int kMaxPipeline = 16;
// Payload of one step of NCCL's buffer (8 steps per buffer): LL 512 KiB of 8-byte lines of which
// half is data, LL128 and Simple about 512 KiB. Trees pipeline at this grain, up to a cap.
constexpr double kTreeStepBytes[3] = {32.0 * 1024, 512.0 * 1024, 512.0 * 1024};
constexpr int kMaxTreeChunks = 64;

int proto_index(CollectiveProtocol p) {
  switch (p) {
    case CollectiveProtocol::kLL:
      return 0;
    case CollectiveProtocol::kLL128:
      return 1;
    default:
      return 2;
  }
}

// Lowest-bandwidth link of a route, for the inter-ring merge of hierarchical all-reduce.
int bottleneck_link(const RouteInfo& r) {
  int worst = -1;
  double bw = std::numeric_limits<double>::infinity();
  for (const auto& [link, b] : r.links)
    if (b < bw) {
      bw = b;
      worst = link;
    }
  return worst;
}

// True when the inter-node ring of every local rank is limited by one and the same link.
bool inter_rings_share_bottleneck(const std::vector<std::vector<int>>& groups,
                                  const RouteLookup& route) {
  if (!route || groups.size() < 2) return false;
  const size_t g = groups[0].size();
  for (size_t n = 0; n < groups.size(); ++n) {
    const auto& from = groups[n];
    const auto& to = groups[(n + 1) % groups.size()];
    int shared = bottleneck_link(route(from[0], to[0]));
    if (shared < 0) return false;
    for (size_t l = 1; l < g; ++l)
      if (bottleneck_link(route(from[l], to[l])) != shared) return false;
  }
  return true;
}

// Depth-first search for one ring through all devices whose every hop has `speed` left on each
// of its links; hops with fewer links first (a direct NVLink before a relay), then the most
// residual capacity. Subtracts the ring's speed from the links it uses when it succeeds.
class RingFinder {
 public:
  RingFinder(const std::vector<int>& devices, const RouteLookup& route)
      : dev_(devices), n_(static_cast<int>(devices.size())), route_(route) {
    for (int a = 0; a < n_; ++a)
      for (int b = 0; b < n_; ++b)
        if (a != b)
          for (const auto& [link, bw] : route_(dev_[a], dev_[b]).links) capacity_[link] = bw;
  }

  void reset() { residual_ = capacity_; }

  // Distinct per-ring speeds worth trying: each route bottleneck split 1..max_rings ways.
  std::vector<double> speeds(int max_rings) const {
    std::set<double> bottlenecks;
    for (int a = 0; a < n_; ++a)
      for (int b = 0; b < n_; ++b) {
        if (a == b) continue;
        double bw = std::numeric_limits<double>::infinity();
        for (const auto& [link, c] : route_(dev_[a], dev_[b]).links) bw = std::min(bw, c);
        if (std::isfinite(bw)) bottlenecks.insert(bw);
      }
    std::set<double, std::greater<double>> out;
    for (double bw : bottlenecks)
      for (int k = 1; k <= max_rings; ++k) out.insert(bw / k);
    return {out.begin(), out.end()};
  }

  bool find(double speed, std::vector<int>* ring) {
    speed_ = speed;
    budget_ = 20000;
    std::vector<int> path{0};
    std::vector<char> used(n_, 0);
    used[0] = 1;
    if (!extend(path, used)) return false;
    ring->clear();
    for (int p : path) ring->push_back(dev_[p]);
    return true;
  }

 private:
  bool fits(int a, int b) const {
    for (const auto& [link, bw] : route_(dev_[a], dev_[b]).links)
      if (residual_.at(link) < speed_ * (1 - 1e-9)) return false;
    return true;
  }
  void take(int a, int b, double sign) {
    for (const auto& [link, bw] : route_(dev_[a], dev_[b]).links) residual_[link] -= sign * speed_;
  }

  bool extend(std::vector<int>& path, std::vector<char>& used) {
    if (--budget_ < 0) return false;
    const int u = path.back();
    if (static_cast<int>(path.size()) == n_) {
      if (!fits(u, path[0])) return false;
      take(u, path[0], 1);
      return true;
    }
    std::vector<int> next;
    for (int v = 0; v < n_; ++v)
      if (!used[v] && fits(u, v)) next.push_back(v);
    auto hops = [&](int v) { return route_(dev_[u], dev_[v]).links.size(); };
    auto room = [&](int v) {
      double r = std::numeric_limits<double>::infinity();
      for (const auto& [link, bw] : route_(dev_[u], dev_[v]).links)
        r = std::min(r, residual_[link]);
      return r;
    };
    std::stable_sort(next.begin(), next.end(), [&](int a, int b) {
      if (hops(a) != hops(b)) return hops(a) < hops(b);
      return room(a) > room(b);
    });
    for (int v : next) {
      take(u, v, 1);
      used[v] = 1;
      path.push_back(v);
      if (extend(path, used)) return true;
      path.pop_back();
      used[v] = 0;
      take(u, v, -1);
    }
    return false;
  }

  std::vector<int> dev_;
  int n_;
  const RouteLookup& route_;
  std::map<int, double> capacity_, residual_;
  double speed_ = 0.0;
  int budget_ = 0;
};

bool is_rooted(CollectiveType t) {
  return t == CollectiveType::kBroadcast || t == CollectiveType::kReduce;
}

// Heap-shaped binary tree over positions 0..n-1 (children of p: 2p+1, 2p+2).
std::vector<int> heap_parents(int n) {
  std::vector<int> parent(n, -1);
  for (int p = 1; p < n; ++p) parent[p] = (p - 1) / 2;
  return parent;
}

// NCCL's tree: a chain inside each server, the servers' heads in a binary tree. `heads` lists the
// groups in tree order.
void add_tree(const std::vector<std::vector<int>>& groups, const std::vector<int>& order,
              CollectivePlan* plan) {
  const int nodes = static_cast<int>(order.size());
  std::vector<int> devices, parent = heap_parents(nodes);
  for (int q : order) devices.push_back(groups[q][0]);
  for (int q = 0; q < nodes; ++q) {
    const auto& chain = groups[order[q]];
    for (size_t k = 1; k < chain.size(); ++k) {
      parent.push_back(k == 1 ? q : static_cast<int>(devices.size()) - 1);
      devices.push_back(chain[k]);
    }
  }
  plan->tree.push_back(std::move(devices));
  plan->parent.push_back(std::move(parent));
}

// The most a ring over LL moves per rank, bytes/s: NCCL's tuner ceiling (llMaxBws,
// src/graph/tuning.cc): inside one server by GPU generation, across servers by their number
// (the figures of Intel hosts).
double ll_max_bus_bandwidth(double compute_capability, int nodes) {
  constexpr double kGB = 1e9;
  if (nodes == 2) return 39.0 * kGB;
  if (nodes > 2) return 20.4 * kGB;
  if (compute_capability >= 10) return 282.0 * kGB;
  if (compute_capability >= 9 || compute_capability <= 0) return 141.0 * kGB;  // unknown: Hopper
  if (compute_capability >= 8) return 87.7 * kGB;
  return 39.0 * kGB;
}

// What each rank of the rings sends per second together: over every channel, the slowest route
// of its steps.
double ring_rate(const std::vector<std::vector<int>>& channels, const RouteLookup& route) {
  double sum = 0.0;
  for (const auto& ring : channels) {
    double slowest = std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < ring.size(); ++i)
      for (const auto& [link, bw] : route(ring[i], ring[(i + 1) % ring.size()]).links)
        slowest = std::min(slowest, bw);
    if (std::isfinite(slowest)) sum += slowest;
  }
  return sum;
}

// Each channel's chain through every server (chains[ch][q] for server q), as NCCL's graph
// search lays channels out across servers: channel ch enters every server at a different GPU
// (rotation ch of the server's ring ch, modulo the rings found), so the channels' steps between
// servers spread over the NICs; at least one channel per GPU of a server. Servers alike.
std::vector<std::vector<std::vector<int>>> server_chains(
    const std::vector<std::vector<int>>& raw_groups, const RingSearch& rings_of) {
  const auto& first = raw_groups[0];
  const int g = static_cast<int>(first.size());
  std::vector<std::vector<int>> local;  // rings of server 0 as local indices
  for (const auto& ring : rings_of(first)) {
    std::vector<int> idx;
    for (int d : ring)
      idx.push_back(static_cast<int>(std::find(first.begin(), first.end(), d) - first.begin()));
    local.push_back(std::move(idx));
  }
  const int k = std::max(static_cast<int>(local.size()), g);
  std::vector<std::vector<std::vector<int>>> chains(k);
  for (int ch = 0; ch < k; ++ch) {
    const auto& cycle = local[ch % local.size()];
    for (const auto& server : raw_groups) {
      std::vector<int> chain;
      for (int t = 0; t < g; ++t) chain.push_back(server[cycle[(ch + t) % g]]);
      chains[ch].push_back(std::move(chain));
    }
  }
  return chains;
}

// NCCL's graphs, ring and tree, have at most MAXCHANNELS / 2 channels (src/init.cc,
// src/include/device.h).
constexpr int kMaxGraphChannels = 32;

// At most kMaxGraphChannels of `channels`, evenly spread: as many as the largest divisor of
// their number that fits, every (number / divisor)-th. Channels that are turns of one another
// stay so (a GB200 NVL72 rack's 72 become 24, turns by 3 GPUs), so alike rings still apply.
template <class T>
std::vector<T> within_graph_limit(std::vector<T> channels) {
  const size_t n = channels.size();
  if (n <= kMaxGraphChannels) return channels;
  size_t k = kMaxGraphChannels;
  while (n % k != 0) --k;
  std::vector<T> kept;
  for (size_t i = 0; i < n; i += n / k) kept.push_back(std::move(channels[i]));
  return kept;
}

// The chains of the tree graph's channels: NCCL's search finds one channel per NIC the servers'
// GPUs reach the network through (eight on a DGX H100, one on a server with a single NIC), so
// of the servers' chains (server_chains) those whose head reaches the network through a NIC no
// earlier one does, within NCCL's limit (within_graph_limit). A GPU's NIC is the narrowest
// link on the sending half of its route to its peer on the next server (the first such); a
// route without links counts as a NIC of its own.
std::vector<std::vector<std::vector<int>>> chains_over_nics(
    std::vector<std::vector<std::vector<int>>> chains, const RouteLookup& route) {
  if (!route || chains.empty() || chains[0].size() < 2) return chains;
  std::vector<std::vector<std::vector<int>>> kept;
  std::set<int> nics;
  for (size_t ch = 0; ch < chains.size(); ++ch) {
    auto& chain_of = chains[ch];
    const RouteInfo& r = route(chain_of[0][0], chain_of[1][0]);
    int nic = -1 - static_cast<int>(ch);  // no links: a NIC of its own
    double narrowest = std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < (r.links.size() + 1) / 2; ++i)
      if (r.links[i].second < narrowest) {
        narrowest = r.links[i].second;
        nic = r.links[i].first;
      }
    if (nics.insert(nic).second) kept.push_back(std::move(chain_of));
  }
  return within_graph_limit(std::move(kept));
}

// The channels NCCL runs a tree collective on (src/enqueue.cc, topoGetAlgoInfo): every channel
// of the tree graph twice, once per tree of the double binary tree (src/graph/connect.cc), fewer
// while each channel's threads would get less than their threshold of bytes (512 threads x 8 B
// for LL, 640 x 8 B for LL128, 512 x 64 B for Simple; a tree's LL threshold does not grow with
// the ranks as a ring's does).
int tree_channels(double bytes, int graph_channels, int pi) {
  const double per_channel = pi == 0 ? 512.0 * 8 : pi == 1 ? 640.0 * 8 : 512.0 * 64;
  return static_cast<int>(std::clamp(std::floor(bytes / per_channel), 1.0, 2.0 * graph_channels));
}

// The bytes a tree channel moves per step (src/enqueue.cc, computeColl): a step of the
// protocol's buffer; LL128 halves it, down to 128 KiB and then 32 KiB, until each channel has
// enough steps to fill the tree's depth.
double tree_chunk_bytes(double bytes, int channels, int nodes, int ranks, int pi) {
  double chunk = kTreeStepBytes[pi];
  if (pi == 1 && nodes > 0) {
    const double ppn = static_cast<double>(ranks) / nodes;
    const double steps = 1 + std::floor(std::log2(static_cast<double>(nodes))) + 0.1 * ppn;
    auto per_channel = [&] { return std::floor(bytes / (channels * chunk)); };
    while (per_channel() < steps * 64 / ppn && chunk > 131072) chunk /= 2;
    while (per_channel() < steps * 16 / ppn && chunk > 32768) chunk /= 2;
  }
  return chunk;
}

int pipeline_chunks(double bytes) {
  double p = std::ceil(bytes / kPipelineChunkBytes);
  return static_cast<int>(std::clamp(p, 1.0, static_cast<double>(kMaxPipeline)));
}

}  // namespace

std::vector<PatStep> pat_steps(int n, CollectiveType type) {
  std::vector<PatStep> steps;
  for (int d = 1; d < n; d *= 2) steps.push_back({d, std::min(d, n - d)});
  if (type == CollectiveType::kReduceScatter) std::reverse(steps.begin(), steps.end());
  return steps;
}

std::vector<std::vector<int>> local_rank_rings(const std::vector<std::vector<int>>& groups) {
  std::vector<std::vector<int>> rings(groups.empty() ? 0 : groups[0].size());
  for (size_t l = 0; l < rings.size(); ++l)
    for (const auto& node : groups) rings[l].push_back(node[l]);
  return rings;
}

std::vector<std::vector<int>> uniform_node_groups(const std::vector<int>& ranks,
                                                  const std::vector<int>& node_of) {
  std::vector<std::vector<int>> groups;
  std::map<int, size_t> where;
  for (size_t p = 0; p < ranks.size(); ++p) {
    auto it = where.find(node_of[p]);
    if (it == where.end()) {
      it = where.emplace(node_of[p], groups.size()).first;
      groups.emplace_back();
    }
    groups[it->second].push_back(ranks[p]);
  }
  for (const auto& g : groups)
    if (g.size() != groups[0].size()) return {};
  return groups;
}

std::vector<std::vector<int>> search_rings(const std::vector<int>& devices,
                                           const RouteLookup& route, int max_rings) {
  const int n = static_cast<int>(devices.size());
  if (n <= 2 || n > 16 || !route) return {devices};
  RingFinder finder(devices, route);
  std::vector<std::vector<int>> best;
  double best_total = 0.0;
  for (double speed : finder.speeds(max_rings)) {
    finder.reset();
    std::vector<std::vector<int>> rings;
    std::vector<int> ring;
    while (static_cast<int>(rings.size()) < max_rings && finder.find(speed, &ring))
      rings.push_back(ring);
    double total = speed * rings.size();
    if (total > best_total * (1 + 1e-9)) {
      best_total = total;
      best = std::move(rings);
    }
  }
  if (best.empty()) best.push_back(devices);
  return best;
}

std::vector<std::pair<CollectiveAlgo, CollectiveProtocol>> candidate_plans(
    const Collective& c, const CollectiveTopology& topo) {
  const CollectiveType t = c.type;
  const bool allreduce = t == CollectiveType::kAllReduce;
  const bool direct_type = t == CollectiveType::kAllToAll || t == CollectiveType::kSendRecv;
  auto groups = uniform_node_groups(c.ranks, topo.node_of);
  const bool one_node = groups.size() == 1;

  auto nvls_ok = [&] {
    if (!(allreduce || t == CollectiveType::kAllGather || t == CollectiveType::kReduceScatter))
      return false;
    if (!one_node || c.ranks.size() < 2 || topo.nvls.size() != c.ranks.size()) return false;
    for (int e : topo.nvls)
      if (e < 0 || e != topo.nvls[0]) return false;
    return true;
  };
  auto collnet_ok = [&] { return allreduce && groups.size() > 1 && topo.collnet >= 0; };
  // NCCL enables PAT only with one rank per node.
  auto pat_ok = [&] {
    return (t == CollectiveType::kAllGather || t == CollectiveType::kReduceScatter) &&
           c.ranks.size() > 1 && groups.size() == c.ranks.size();
  };
  // Every server its own NVLink SHARP endpoint, the same for all of its ranks.
  auto nvls_tree_ok = [&] {
    if (!allreduce || groups.size() < 2 || groups[0].size() < 2) return false;
    if (topo.nvls.size() != c.ranks.size()) return false;
    std::map<int, int> endpoint_of_node;
    for (size_t p = 0; p < c.ranks.size(); ++p) {
      if (topo.nvls[p] < 0) return false;
      auto [it, fresh] = endpoint_of_node.emplace(topo.node_of[p], topo.nvls[p]);
      if (!fresh && it->second != topo.nvls[p]) return false;
    }
    return true;
  };
  auto hierarchical_ok = [&] { return allreduce && groups.size() > 1 && groups[0].size() > 1; };

  std::vector<CollectiveAlgo> algos;
  // All-to-all in two legs, as DeepEP runs it across servers: asked for, never NCCL's choice.
  const bool two_legs = t == CollectiveType::kAllToAll && c.algo == CollectiveAlgo::kHierarchical &&
                        c.counts.empty() && groups.size() > 1 && groups[0].size() > 1;
  if (two_legs) {
    algos = {CollectiveAlgo::kHierarchical};
  } else if (direct_type) {
    algos = {CollectiveAlgo::kDirect};
  } else if (c.algo == CollectiveAlgo::kAuto) {
    algos.push_back(CollectiveAlgo::kRing);
    if (allreduce) algos.push_back(CollectiveAlgo::kTree);
    if (nvls_ok()) algos.push_back(CollectiveAlgo::kNvls);
    if (collnet_ok()) algos.push_back(CollectiveAlgo::kCollNet);
    if (nvls_tree_ok()) algos.push_back(CollectiveAlgo::kNvlsTree);
    if (pat_ok()) algos.push_back(CollectiveAlgo::kPat);
  } else {
    bool ok = false;
    switch (c.algo) {
      case CollectiveAlgo::kRing:
        ok = true;
        break;
      case CollectiveAlgo::kTree:
        ok = allreduce || is_rooted(t);
        break;
      case CollectiveAlgo::kHierarchical:
        ok = hierarchical_ok();
        break;
      case CollectiveAlgo::kNvls:
        ok = nvls_ok();
        break;
      case CollectiveAlgo::kCollNet:
        ok = collnet_ok();
        break;
      case CollectiveAlgo::kNvlsTree:
        ok = nvls_tree_ok();
        break;
      case CollectiveAlgo::kPat:
        ok = pat_ok();
        break;
      default:
        break;
    }
    if (!ok) return {};
    algos = {c.algo};
  }

  // LL128 needs 128-byte stores to arrive in order along the whole path: NCCL enables it by
  // default only over NVLink inside servers.
  bool nvlink_inside = true;
  for (const auto& g : groups)
    for (int a : g)
      for (int b : g)
        if (a != b && topo.route && topo.route(a, b).hop != HopClass::kNvlink)
          nvlink_inside = false;
  std::vector<CollectiveProtocol> protocols;
  if (c.protocol == CollectiveProtocol::kAuto) {
    protocols.push_back(CollectiveProtocol::kLL);
    if (nvlink_inside) protocols.push_back(CollectiveProtocol::kLL128);
    protocols.push_back(CollectiveProtocol::kSimple);
  } else {
    protocols.push_back(c.protocol);
  }

  std::vector<std::pair<CollectiveAlgo, CollectiveProtocol>> out;
  for (auto a : algos)
    for (auto p : protocols) {
      bool simple_only = a == CollectiveAlgo::kNvls || a == CollectiveAlgo::kCollNet ||
                         a == CollectiveAlgo::kNvlsTree || a == CollectiveAlgo::kPat || two_legs;
      if (simple_only && p != CollectiveProtocol::kSimple) continue;
      out.push_back({a, p});
    }
  return out;
}

namespace {

// Share of an NVLS channel's time that moves payload. Every chunk step of a channel moves the
// chunk at the channel's share of the GPU's NVLink rate and waits for the switch's multicast to
// reach the peers, one NVLink step up and one down (at least NCCL's LL NVLink hop). NCCL's
// tuner folds this into one constant per generation (nvlsEfficiency: 0.85 Hopper, 0.74
// Blackwell); at its default 128 KiB chunks the mechanism gives 0.88 and 0.77 on the DGX H100
// and B200 presets, and at medium sizes, where NCCL shrinks the chunks to 16 KiB, about half.
double nvls_step_efficiency(const Collective& c, const CollectiveTopology& topo,
                            const std::vector<std::vector<int>>& groups) {
  if (!topo.route || groups.empty() || groups[0].empty()) return 1.0;
  const RouteInfo& up = topo.route(groups[0][0], topo.nvls.at(0));
  double rate = std::numeric_limits<double>::infinity();
  for (const auto& [link, bw] : up.links) rate = std::min(rate, bw);
  if (!std::isfinite(rate) || rate <= 0) return 1.0;
  const int channels = nvls_channels(topo.compute_capability, groups.size() > 1);
  const double heads = static_cast<double>(groups[0].size());
  const double chunk = groups.size() > 1 ? nvls_tree_chunk_bytes(c.bytes, channels * heads,
                                                                 static_cast<int>(groups.size()))
                                         : nvls_chunk_bytes(c.bytes, channels * heads);
  const double move = chunk / (rate / channels);
  const double wait = std::max(2 * up.latency, kRingHop[0][0] * kUs);
  return move / (move + wait);
}

CollectivePlan plan_with_tuner_latencies(const Collective& c, CollectiveAlgo algo,
                                         CollectiveProtocol protocol,
                                         const CollectiveTopology& topo,
                                         const RingSearch& rings_of) {
  CollectivePlan plan;
  plan.algo = algo;
  plan.protocol = protocol;
  plan.chunks = c.chunks;
  const int n = static_cast<int>(c.ranks.size());
  const bool ideal = protocol == CollectiveProtocol::kIdeal;

  if (!ideal) {
    const int pi = proto_index(protocol);
    plan.efficiency = kProtocolEfficiency[pi];
    for (int h = 0; h < kNumHopClasses; ++h) {
      double us = 0.0;
      switch (algo) {
        case CollectiveAlgo::kTree:
          us = kTreeHop[h][pi];
          break;
        case CollectiveAlgo::kNvls:
          us = kNvlsHop[h];
          break;
        case CollectiveAlgo::kNvlsTree:
          us = kNvlsTreeHop[h];
          break;
        case CollectiveAlgo::kPat:
          us = kPatHop[h];
          break;
        case CollectiveAlgo::kCollNet:
          us = kCollNetHop[h];
          break;
        default:
          us = kRingHop[h][pi];
          break;
      }
      plan.hop_latency[h] = us * kUs;
    }
    const auto nodes = uniform_node_groups(c.ranks, topo.node_of);
    if (algo == CollectiveAlgo::kRing && nodes.size() > 1) {
      for (int h : {static_cast<int>(HopClass::kNvlink), static_cast<int>(HopClass::kPcie)})
        plan.hop_latency[h] = std::max(plan.hop_latency[h], kNetOverhead[pi] * kUs);
      // One GPU per server leaves every step's network latency exposed: NCCL charges a ring
      // the tree's network latency then.
      if (nodes[0].size() == 1)
        plan.hop_latency[static_cast<int>(HopClass::kNetwork)] =
            kTreeHop[static_cast<int>(HopClass::kNetwork)][pi] * kUs;
    }
    if (algo == CollectiveAlgo::kTree)
      plan.base_latency = kTreeBase[pi] * kUs;
    else if (algo == CollectiveAlgo::kPat)
      plan.base_latency = (kPatBase + kPatPerRank * n) * kUs;
    else if (algo == CollectiveAlgo::kRing || algo == CollectiveAlgo::kHierarchical ||
             algo == CollectiveAlgo::kDirect)
      plan.base_latency = kRingBase[pi] * kUs;
    plan.pipeline = c.pipeline > 0 ? c.pipeline : pipeline_chunks(c.bytes);
    // Trees and the chains of Broadcast and Reduce forward a chunk as soon as it arrived:
    // NCCL pipelines them in its buffer's steps.
    const bool chain = algo == CollectiveAlgo::kRing &&
                       (c.type == CollectiveType::kBroadcast || c.type == CollectiveType::kReduce);
    if (algo == CollectiveAlgo::kTree || chain)
      plan.chunks = std::max(
          c.chunks, static_cast<int>(std::clamp(std::ceil(c.bytes / kTreeStepBytes[pi]), 1.0,
                                                static_cast<double>(kMaxTreeChunks))));
  }

  // Rank order starting at the root, for rooted collectives.
  std::vector<int> from_root(n);
  for (int p = 0; p < n; ++p) from_root[p] = c.ranks[(c.root + p) % n];

  auto raw_groups = uniform_node_groups(c.ranks, topo.node_of);
  // Each server's devices in the order of its first ring, so chains and intra-server rings run
  // over the links the search found.
  std::vector<std::vector<int>> groups = raw_groups;
  if (!ideal)
    for (auto& g : groups) g = rings_of(g).front();

  switch (algo) {
    case CollectiveAlgo::kDirect:
      plan.channels = {c.ranks};
      return plan;
    case CollectiveAlgo::kPat:
      plan.channels = {c.ranks};
      if (!ideal) plan.efficiency = kPatEfficiency;
      return plan;
    case CollectiveAlgo::kTree:
      if (ideal || raw_groups.empty()) {
        plan.tree = {is_rooted(c.type) ? from_root : c.ranks};
        plan.parent = {heap_parents(n)};
        return plan;
      }
      {
        std::vector<int> order(groups.size());
        for (size_t q = 0; q < order.size(); ++q) order[q] = static_cast<int>(q);
        if (is_rooted(c.type)) {
          // The root's server heads the tree and the root its chain.
          const int root = c.ranks[c.root];
          for (size_t q = 0; q < groups.size(); ++q) {
            auto it = std::find(groups[q].begin(), groups[q].end(), root);
            if (it == groups[q].end()) continue;
            std::rotate(groups[q].begin(), it, groups[q].end());
            std::swap(order[0], order[q]);
          }
          add_tree(groups, order, &plan);
          return plan;
        }
        if (groups.size() == 1) {  // one server: its chain
          add_tree(groups, order, &plan);
          return plan;
        }
        // Across servers NCCL runs trees on its tree graph's channels, one per NIC
        // (chains_over_nics), each channel's chain heading every server at its own GPU and
        // NIC. Channels c < k run the tree, channels k + c the mirrored one over channel c's
        // chains (the double binary tree: the first tree's leaves are the second's inner
        // nodes, so every server sends and receives at full rate); each moves bytes / nc.
        const auto chains = chains_over_nics(server_chains(raw_groups, rings_of), topo.route);
        const int k = static_cast<int>(chains.size());
        const int nc = tree_channels(c.bytes, k, proto_index(protocol));
        std::vector<int> mirrored(order.rbegin(), order.rend());
        for (int ch = 0; ch < nc; ++ch)
          add_tree(chains[ch % k], ch >= k && groups.size() > 2 ? mirrored : order, &plan);
        plan.tree_chains = k;
        const double chunk = tree_chunk_bytes(c.bytes, nc, static_cast<int>(groups.size()), n,
                                              proto_index(protocol));
        plan.chunks =
            std::max(c.chunks, static_cast<int>(std::clamp(std::ceil(c.bytes / nc / chunk), 1.0,
                                                           static_cast<double>(kMaxTreeChunks))));
      }
      return plan;
    case CollectiveAlgo::kHierarchical:
      if (c.type == CollectiveType::kAllToAll) {
        // GPUs of one local index exchange across servers first, so groups keep rank order.
        plan.groups = raw_groups;
        for (auto& h : plan.hop_latency) h /= plan.pipeline;
        return plan;
      }
      plan.groups = ideal ? raw_groups : groups;
      plan.merge_inter = inter_rings_share_bottleneck(raw_groups, topo.route);
      // Bytes-only plans pipeline only when asked (ASTRA-sim's dataset splits, astra_system.h).
      if (ideal) plan.pipeline = c.pipeline > 0 ? c.pipeline : 1;
      // Chunks stream through the phases: a step's latency is paid once over the pipeline, not
      // once per chunk (NCCL's model charges a ring step's latency whatever the size).
      for (auto& h : plan.hop_latency) h /= plan.pipeline;
      return plan;
    case CollectiveAlgo::kNvls: {
      plan.groups = groups;
      plan.endpoints = {topo.nvls.at(0)};
      if (!ideal) plan.efficiency = nvls_step_efficiency(c, topo, groups);
      // NCCL's tuner charges NVLS its NVLink latency once per collective (plus the network's
      // across servers), not per step.
      plan.base_latency = kNvlsHop[static_cast<int>(HopClass::kNvlink)] * kUs;
      if (groups.size() > 1)
        plan.base_latency += kNvlsHop[static_cast<int>(HopClass::kNetwork)] * kUs;
      plan.hop_latency = {};
      return plan;
    }
    case CollectiveAlgo::kNvlsTree: {
      plan.groups = groups;
      for (const auto& g : groups) {
        const size_t p = std::find(c.ranks.begin(), c.ranks.end(), g[0]) - c.ranks.begin();
        plan.endpoints.push_back(topo.nvls.at(p));
      }
      if (!ideal) plan.efficiency = nvls_step_efficiency(c, topo, groups);
      // NCCL's tuner charges NVLS_TREE its NVLink latency once and its network latency twice
      // per tree level (up and down, log2 of the servers).
      plan.base_latency = (kNvlsTreeHop[static_cast<int>(HopClass::kNvlink)] +
                           2 * std::floor(std::log2(static_cast<double>(groups.size()))) *
                               kNvlsTreeHop[static_cast<int>(HopClass::kNetwork)]) *
                          kUs;
      plan.hop_latency = {};
      return plan;
    }
    case CollectiveAlgo::kCollNet: {
      plan.groups = groups;
      plan.endpoints = {topo.collnet};
      // NCCL's CollNet Direct latency, once per collective: a step inside the server each way
      // and 0.4 us of serialization per local peer, plus the network's.
      const double g = static_cast<double>(groups.empty() ? 1 : groups[0].size());
      const HopClass intra = groups.empty() || groups[0].size() < 2
                                 ? HopClass::kNvlink
                                 : topo.route(groups[0][0], groups[0][1]).hop;
      plan.base_latency =
          (2 * (std::min(1.0, g - 1) * kCollNetHop[static_cast<int>(intra)] + (g - 1) * 0.4) +
           kCollNetHop[static_cast<int>(HopClass::kNetwork)]) *
          kUs;
      plan.hop_latency = {};
      return plan;
    }
    default:
      break;
  }

  // Ring (and the chains of Broadcast / Reduce).
  if (ideal || raw_groups.empty()) {
    plan.channels = {c.ranks};
  } else if (raw_groups.size() == 1) {
    plan.channels = rings_of(raw_groups[0]);
  } else {
    // Across servers every channel threads the servers in order, through each server's chain
    // of that channel (server_chains), within NCCL's limit.
    for (const auto& chain_of : within_graph_limit(server_chains(raw_groups, rings_of))) {
      std::vector<int> ring;
      for (const auto& chain : chain_of) ring.insert(ring.end(), chain.begin(), chain.end());
      plan.channels.push_back(std::move(ring));
    }
  }
  if (!ideal && plan.channels.size() > 1) {
    // NCCL's tuner drops channels while each would get fewer bytes than its threads' threshold
    // (topoGetAlgoInfo): 512 threads of 8 bytes x ranks for LL, 640 of 8 for LL128, 512 of 64
    // for Simple (src/enqueue.cc, src/include/comm.h).
    const int pi = proto_index(protocol);
    const double per_channel = pi == 0 ? 512.0 * 8 * n : pi == 1 ? 640.0 * 8 : 512.0 * 64;
    const auto keep = static_cast<size_t>(std::clamp(std::floor(c.bytes / per_channel), 1.0,
                                                     static_cast<double>(plan.channels.size())));
    plan.channels.resize(keep);
  }
  if (is_rooted(c.type)) {
    const int root = c.ranks[c.root];
    for (auto& ring : plan.channels)
      std::rotate(ring.begin(), std::find(ring.begin(), ring.end(), root), ring.end());
  }
  return plan;
}

}  // namespace

CollectivePlan plan_collective(const Collective& c, CollectiveAlgo algo,
                               CollectiveProtocol protocol, const CollectiveTopology& topo,
                               const RingSearch& rings_of) {
  CollectivePlan plan = plan_with_tuner_latencies(c, algo, protocol, topo, rings_of);
  plan.max_rate = c.max_rate;
  if (algo == CollectiveAlgo::kRing && protocol == CollectiveProtocol::kLL && topo.route) {
    // LL's flag polling caps a ring's bus bandwidth whatever the links give (NCCL's llMaxBws).
    const int nodes =
        static_cast<int>(std::max<size_t>(1, uniform_node_groups(c.ranks, topo.node_of).size()));
    const double rate = ring_rate(plan.channels, topo.route);
    const double cap = ll_max_bus_bandwidth(topo.compute_capability, nodes);
    if (rate > 0 && plan.efficiency * rate > cap) plan.efficiency = cap / rate;
  }
  // A measured launch cost replaces the tuner's ring LL base; every base moves with it.
  if (topo.launch > 0 && protocol != CollectiveProtocol::kIdeal)
    plan.base_latency = std::max(0.0, plan.base_latency + topo.launch - kRingBase[0] * kUs);
  return plan;
}

}  // namespace orrery
