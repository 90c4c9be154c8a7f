// Internal: the strategy builders strategy.cc dispatches to, and what they share.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "strategies/graph_builder.h"
#include "strategies/ps_placement.h"

namespace orrery {

// Data parallel: 1w1g (one GPU), AllReduce-Local/Cluster, and PEARL (partitioned embeddings).
void build_data_parallel(GraphBuilder& b, const PricedReplica& r, const ClusterLayout& layout,
                         const StrategyOptions& opt, const std::vector<int>& gpus, bool pearl);

// The replicas of an all-reduce that compute alike: one group per CPU socket of a server (the
// GPUs' launch host). build_data_parallel builds each group's first replica and mirrors the
// others on it; the size estimate counts the groups (strategy.cc).
std::pair<int, std::string> mirror_group(const ClusterGpu& g);

// 1wng: the replicas on `workers` (GPUs of server 0) keep their parameters on its first CPU.
void build_parameter_server(GraphBuilder& b, const PricedReplica& r, const ClusterLayout& layout,
                            const StrategyOptions& opt, const std::vector<int>& workers);

// PS/Worker as deployed: `workers` (ClusterLayout GPU indices) pull from and push to `shards`
// (ps_placement.h) as opt.ps says.
void build_ps_worker(GraphBuilder& b, const PricedReplica& r, const ClusterLayout& layout,
                     const StrategyOptions& opt, const std::vector<int>& workers,
                     const std::vector<PsShard>& shards);

// BytePS: `workers` reduce-scatter each gradient bucket inside their server, push a slice of
// their shard to each of `servers` (summation servers, placed as PS shards are) and pull the sum
// back, then all-gather inside their server.
void build_byteps(GraphBuilder& b, const PricedReplica& r, const ClusterLayout& layout,
                  const StrategyOptions& opt, const std::vector<int>& workers,
                  const std::vector<PsShard>& servers);

// Memory-bound work on a CPU socket (copies, sums, updates) runs one op at a time at the
// socket's full memory bandwidth, on this stream of the socket's device: what sharing the
// bandwidth gives in aggregate.
inline constexpr Stream kCpuMemoryBus{StreamClass::kCompute, 0};

// Each optimizer update of the replicas `rep` waits for what ends the gradient bucket holding
// its gradients on its GPU: done[bucket][gpu] (buckets as gradient_buckets gives them).
void updates_wait_for_buckets(GraphBuilder& b, const ModelGraph& m,
                              const std::vector<std::vector<int>>& buckets,
                              const std::vector<PlacedReplica>& rep,
                              const std::vector<std::vector<int>>& done);

// "it3/" for multi-iteration runs, "" otherwise.
std::string iteration_prefix(const StrategyOptions& opt, int it);

// Fraction of a GPU a collective holds (sms_used / SMs), 0 when contention is off.
double sm_share(const StrategyOptions& opt, const PricedReplica& r);

// A collective of `bytes` with the scenario's algorithm, protocol, pipelining and mode; no ranks.
Collective make_collective(CollectiveType type, double bytes, const CollectiveOptions& o);
// The same over `ranks`, holding its share of each GPU's SMs.
Collective make_collective(CollectiveType type, const std::vector<int>& ranks, double bytes,
                           const StrategyOptions& opt, const PricedReplica& r);

}  // namespace orrery
