#include "engine/size_estimate.h"

#include <algorithm>
#include <string>
#include <vector>

#include "engine/collective_algos.h"

namespace orrery {
namespace {

// Flows per rank of a ring of `steps` steps (long rings group steps, collective_algos.h).
double ring_flows(double steps) {
  if (steps < 1e15) return static_cast<double>(ring_flows_per_rank(static_cast<int64_t>(steps)));
  return 64;
}

}  // namespace

double collective_flows(CollectiveType type, CollectiveAlgo algo, double n, double nodes,
                        double chunks) {
  if (n <= 1) return 0;
  const double c = std::max(1.0, chunks);
  const bool rooted = type == CollectiveType::kBroadcast || type == CollectiveType::kReduce;
  if (type == CollectiveType::kAllToAll) return n * (n - 1);
  if (algo == CollectiveAlgo::kTree && (rooted || type == CollectiveType::kAllReduce))
    return (type == CollectiveType::kAllReduce ? 2 : 1) * (n - 1) * c;
  if (rooted) return (n - 1) * c;  // a pipelined chain
  if (type == CollectiveType::kAllReduce && algo == CollectiveAlgo::kHierarchical && nodes > 1 &&
      n > nodes) {
    // Reduce-scatter and all-gather rings inside each node, one ring per local rank across them.
    const double l = n / nodes;
    return c * (2 * nodes * l * ring_flows(l - 1) + l * nodes * ring_flows(2 * (nodes - 1)));
  }
  const double steps = type == CollectiveType::kAllReduce ? 2 * (n - 1) : n - 1;
  return ring_flows(steps) * n * c;
}

SizeEstimate estimate_graph_size(const ExecutionGraph& g) {
  SizeEstimate e;
  const double ops = static_cast<double>(g.ops.size());
  double deps = 0;
  for (const Op& op : g.ops) deps += static_cast<double>(op.deps.size());
  e.ops = ops;
  e.memory_bytes = ops * kBytesPerOp + deps * kBytesPerDep;

  // Node ids as the replay forms them (engine/replay.cc): the device's node, else its host.
  std::vector<int> node(g.devices.size());
  {
    std::vector<std::string> names;
    for (size_t d = 0; d < g.devices.size(); ++d) {
      const Device& dev = g.devices[d];
      const std::string& n =
          !dev.node.empty() ? dev.node : (!dev.host.empty() ? dev.host : dev.name);
      names.push_back(n);
    }
    std::vector<std::string> sorted = names;
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    for (size_t d = 0; d < names.size(); ++d)
      node[d] = static_cast<int>(std::lower_bound(sorted.begin(), sorted.end(), names[d]) -
                                 sorted.begin());
  }
  std::vector<int> per_node(g.devices.size(), 0);
  double flows = 0;
  double collective_ops = 0;
  for (const Op& op : g.ops) {
    if (op.kind != OpKind::kCollective) continue;
    ++collective_ops;
    const Collective& c = g.collectives[op.collective];
    if (c.analytical) {
      flows += 1;  // one delay
      continue;
    }
    // Nodes spanned and whether they hold equal shares (hierarchical needs it).
    double nodes = 0;
    for (int r : c.ranks)
      if (per_node[node[r]]++ == 0) ++nodes;
    bool uniform = true;
    const int first = c.ranks.empty() ? 0 : per_node[node[c.ranks[0]]];
    for (int r : c.ranks) uniform = uniform && per_node[node[r]] == first;
    for (int r : c.ranks) per_node[node[r]] = 0;
    const double n = static_cast<double>(c.ranks.size());
    CollectiveAlgo algo = c.algo;
    if (c.type == CollectiveType::kAllReduce &&
        (algo == CollectiveAlgo::kAuto || algo == CollectiveAlgo::kHierarchical))
      algo =
          uniform && nodes > 1 && n > nodes ? CollectiveAlgo::kHierarchical : CollectiveAlgo::kRing;
    double f = collective_flows(c.type, algo, n, nodes, c.chunks);
    if (c.protocol != CollectiveProtocol::kIdeal) {
      // NCCL plans: each flow waits on a step delay first, and rings run one per channel (at
      // most the ring search's 16, or a server's GPUs across servers; collective_plan.h).
      const double per_node = nodes > 0 ? n / nodes : n;
      f *= 2.0 * std::clamp(per_node, 1.0, 16.0);
    }
    flows += std::max(1.0, f);
  }
  e.activities = ops - collective_ops + flows;
  e.basis = approximate_count(ops) + " ops, " + approximate_count(flows) + " collective flows";
  return e;
}

}  // namespace orrery
