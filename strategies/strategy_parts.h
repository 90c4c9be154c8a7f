// Internal: the strategy builders strategy.cc dispatches to, and what they share.
#pragma once

#include <string>
#include <vector>

#include "strategies/graph_builder.h"

namespace orrery {

// Data parallel: 1w1g (one GPU), AllReduce-Local/Cluster, and PEARL (partitioned embeddings).
void build_data_parallel(GraphBuilder& b, const PricedReplica& r, const ClusterLayout& layout,
                         const StrategyOptions& opt, const std::vector<int>& gpus, bool pearl);

// Parameters on CPUs: 1wng (the server's own CPU over PCIe) and PS/Worker (remote servers).
void build_parameter_server(GraphBuilder& b, const PricedReplica& r, const ClusterLayout& layout,
                            const StrategyOptions& opt, const std::vector<int>& workers,
                            const std::vector<int>& ps_servers, bool local);

// "it3/" for multi-iteration runs, "" otherwise.
std::string iteration_prefix(const StrategyOptions& opt, int it);

// Fraction of a GPU a collective holds (sms_used / SMs), 0 when contention is off.
double sm_share(const StrategyOptions& opt, const PricedReplica& r);

Collective make_collective(CollectiveType type, const std::vector<int>& ranks, double bytes,
                           const StrategyOptions& opt, const PricedReplica& r);

}  // namespace orrery
