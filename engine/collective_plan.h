// How a collective runs, as NCCL runs it: the algorithm, the protocol, the channels (rings found
// over the links the topology has) and the latency of every step. The plan is plain data; the
// flow engine (collective_algos.h) and the alpha-beta model (collective_cost.h) both execute it,
// so the two modes differ only in how link sharing is resolved.
//
// The constants are those of NCCL's tuning model (NVIDIA NCCL 2.30, src/graph/tuning.cc) and the
// protocol formats its maintainers describe (docs/collectives.md lists every number with its
// source).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "engine/execution_graph.h"

namespace orrery {

// What a step crosses, for its latency: NVLink only (direct or through an NVSwitch), PCIe or
// the CPU interconnect inside a server, or a NIC and the network between servers.
enum class HopClass : uint8_t { kNvlink = 0, kPcie = 1, kNetwork = 2 };
inline constexpr int kNumHopClasses = 3;

// The route between two devices as the cost model needs it.
struct RouteInfo {
  double latency = 0.0;                       // seconds, the links' own
  std::vector<std::pair<int, double>> links;  // (link id, bandwidth in bytes/s) in route order
  HopClass hop = HopClass::kPcie;
};
// Must return a reference that stays valid for the life of the lookup (replay caches routes).
using RouteLookup = std::function<const RouteInfo&(int src_device, int dst_device)>;

// What planning needs to know about the platform for one collective.
struct CollectiveTopology {
  std::vector<int> node_of;  // per rank position: the server it sits in
  RouteLookup route;
  // Per rank position: the device index of its server's NVLink SHARP endpoint, -1 for none.
  // Indices past the graph's devices name platform hosts the replay adds (the switch itself).
  std::vector<int> nvls;
  int collnet = -1;  // device index of the network's SHARP endpoint, -1 for none
  // The servers' measured launch cost (ServerSpec::nccl_launch), seconds; 0: NCCL's tuner.
  double launch = 0;
  // The GPUs' compute capability (DeviceSpec::compute_capability); 0: unknown, Hopper's figures.
  double compute_capability = 0;
};

struct CollectivePlan {
  CollectiveAlgo algo = CollectiveAlgo::kRing;
  CollectiveProtocol protocol = CollectiveProtocol::kIdeal;
  // Ring algorithms (and chains for Broadcast / Reduce): one ring of devices per channel, each
  // moving an equal share of the bytes. Direct: the ranks.
  std::vector<std::vector<int>> channels;
  // Tree: one tree per channel, each carrying an equal share of the bytes. tree[t] lists devices
  // by position, parent[t][p] is the parent position of p (-1 for the root). Across servers,
  // tree t runs on chain t mod tree_chains (NCCL's tree graph channels, each heading the servers
  // at its own GPU and NIC); trees past the first tree_chains are the mirrored trees of the
  // double binary tree. 0: one server, or rooted.
  std::vector<std::vector<int>> tree;
  std::vector<std::vector<int>> parent;
  int tree_chains = 0;
  // Hierarchical, CollNet, NVLS: the ranks' devices grouped by server, each group in its
  // intra-server ring order.
  std::vector<std::vector<int>> groups;
  std::vector<int> endpoints;  // NVLS: one per group; CollNet: one
  bool merge_inter = false;    // hierarchical: one inter-server ring (collective_algos.h)
  int pipeline = 1;            // chunks pipelined across the phases of multi-phase algorithms
  int chunks = 1;              // chunks pipelined inside rings, chains and trees
  double base_latency = 0.0;   // seconds, once per collective (launch and setup)
  double efficiency = 1.0;     // share of the wire bytes that is payload
  double max_rate = 0.0;       // Collective::max_rate: bytes/s per flow at most, 0: no bound
  // Software latency of one step by what it crosses, seconds; the route's own link latency counts
  // towards it (a step takes max(route latency, this)).
  std::array<double, kNumHopClasses> hop_latency{};

  // Extra delay before a flow over `route` starts, on top of SimGrid's link latency.
  double step_delay(const RouteInfo& route) const {
    double d = hop_latency[static_cast<int>(route.hop)] - route.latency;
    return d > 0 ? d : 0.0;
  }
};

// The (algorithm, protocol) pairs NCCL would consider for `c` on `topo`, after the scenario's
// own choices (c.algo, c.protocol when not auto): Ring for everything; Tree for AllReduce;
// NVLS on one NVSwitch server with NVLink SHARP, NVLS_TREE across such servers; CollNet across
// servers with SHARP switches; PAT for AllGather and ReduceScatter with one rank per server;
// Direct for AllToAll and SendRecv. LL128 only where every step inside a server is NVLink, as
// NCCL enables it by default. NVLS, NVLS_TREE, CollNet and PAT run Simple only. Empty when the
// forced choice cannot apply (the caller falls back to Ring). A ring over LL moves at most NCCL's
// LL ceiling per rank (llMaxBws: by GPU generation inside a server, by server count across).
std::vector<std::pair<CollectiveAlgo, CollectiveProtocol>> candidate_plans(
    const Collective& c, const CollectiveTopology& topo);

// Channels found over the links of one server's devices, as NCCL's search does: for a per-channel
// speed from the route bandwidths, as many edge-disjoint rings as the residual capacity of the
// links allows; the speed with the highest total wins (the fewest rings on a tie). A DGX-1
// cube mesh gets rings over its NVLinks, an NVSwitch or PCIe server one ring that the others
// would only share. At most `max_rings`; over 16 devices the rank order is the one ring.
std::vector<std::vector<int>> search_rings(const std::vector<int>& devices,
                                           const RouteLookup& route, int max_rings = 16);

// Builds the plan of `algo` (resolved, not auto) with `protocol` (LL, LL128 or Simple; or ideal
// for the bytes-only model, which keeps rank order and no latency). `rings_of` returns the
// search_rings result for a server's devices (the caller caches it).
using RingSearch = std::function<const std::vector<std::vector<int>>&(const std::vector<int>&)>;
CollectivePlan plan_collective(const Collective& c, CollectiveAlgo algo,
                               CollectiveProtocol protocol, const CollectiveTopology& topo,
                               const RingSearch& rings_of);

// PAT's steps over n ranks: in step k every rank sends `blocks` of the n blocks to the rank
// `distance` positions before it. All-gather doubles the distance and the blocks each step
// (Bruck's order: 1, 2, 4... blocks, the last step what remains); reduce-scatter runs the same
// steps in reverse. Every rank sends n - 1 blocks in all, over ceil(log2 n) steps.
struct PatStep {
  int distance = 1;
  int blocks = 1;
};
std::vector<PatStep> pat_steps(int n, CollectiveType type);

// The rings between servers of a plan's groups (equal in size): ring l holds the l-th device of
// every group, in group order (hierarchical all-reduce and NVLS_TREE run one per local rank).
std::vector<std::vector<int>> local_rank_rings(const std::vector<std::vector<int>>& groups);

// Devices grouped by node in order of first appearance; empty when nodes differ in size.
std::vector<std::vector<int>> uniform_node_groups(const std::vector<int>& ranks,
                                                  const std::vector<int>& node_of);

}  // namespace orrery
