// Analytical (alpha-beta) time of a collective plan, and the tuner that picks plans.
//
// Each step is priced from the platform's routes: a flow's rate is the smallest bandwidth /
// (number of the step's concurrent flows sharing the link) along its route, its time the step's
// latency (max of the route's and the protocol's, collective_plan.h) plus its wire bytes
// (payload / protocol efficiency) over that rate. Ring-shaped algorithms keep every ring link
// busy at every step: S steps of block/rate plus (S + c - 1) latencies with c chunks. Chains
// and trees move chunks over different links at once: (S + c - 1) step times of one chunk
// each. Phases pipelined over P chunks take the sum of one chunk's phase times plus (P - 1) times
// the busiest resource's share (phases on the same links add up). Where flows do not share
// links, ring AllReduce is the NCCL bus-bandwidth formula 2(n-1)/n x bytes/B + 2(n-1) x latency.
#pragma once

#include <map>
#include <tuple>
#include <vector>

#include "engine/collective_plan.h"
#include "engine/execution_graph.h"

namespace orrery {

double analytical_collective_time(const Collective& c, const CollectivePlan& plan,
                                  const RouteLookup& route);

// Plans collectives for one platform and caches what it found (the ring search per set of
// devices, the choice per collective shape and size). The route lookup must describe one
// platform for the planner's whole life.
class CollectivePlanner {
 public:
  // Protocol ideal: resolve_collective_algo's algorithm over the ranks in their order. Otherwise
  // the candidate (algorithm, protocol) of candidate_plans with the least analytical time, as
  // NCCL's tuner picks by its own cost model; a forced algorithm that cannot apply falls back
  // to ring. Deterministic: ties keep the earlier candidate.
  const CollectivePlan& plan(const Collective& c, const CollectiveTopology& topo);

 private:
  const std::vector<std::vector<int>>& rings(const std::vector<int>& devices,
                                             const RouteLookup& route);

  using Key = std::tuple<int, int, int, int, int, int, double, double, bool, std::vector<int>>;
  std::map<std::vector<int>, std::vector<std::vector<int>>> rings_;
  std::map<Key, CollectivePlan> plans_;
};

}  // namespace orrery
