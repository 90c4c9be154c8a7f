// Analytical (alpha-beta) time of a collective, for runs too large to expand into flows.
// Each algorithm step is priced from the platform's routes: a flow's rate is the smallest
// bandwidth / (number of the step's concurrent flows sharing the link) along its route, its time
// the route latency plus chunk bytes over that rate. Ring-shaped algorithms (AllReduce,
// AllGather, ReduceScatter, the phases of hierarchical) keep every ring link busy at every
// step: S steps of block/rate plus (S + c - 1) latencies with c chunks. Chains and trees move
// chunks over different links at once: (S + c - 1) step times of one chunk each. Where flows
// do not share links, ring AllReduce is the NCCL bus-bandwidth formula
// 2(n-1)/n x bytes/B + 2(n-1) x latency (c = 1).
#pragma once

#include <functional>
#include <vector>

#include "engine/execution_graph.h"

namespace orrery {

struct RouteInfo {
  double latency = 0.0;
  std::vector<std::pair<int, double>> links;  // (link id, bandwidth in bytes/s)
};
using RouteLookup = std::function<const RouteInfo&(int src_device, int dst_device)>;

// `algo` must be resolved (engine/collective_algos.h); node_of as there.
double analytical_collective_time(const Collective& c, CollectiveAlgo algo,
                                  const std::vector<int>& node_of, const RouteLookup& route);

}  // namespace orrery
