#include "strategies/size_estimate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace orrery {

SizeEstimate estimate_strategy_size(const StrategySizeInputs& in) {
  const double n = std::max(1.0, in.replicas);
  const double built = in.built_replicas > 0 ? std::min(n, in.built_replicas) : n;
  const double placed = built * in.ops_per_replica * (in.host_overheads ? 2 : 1);
  double comm_ops = 0, flows = 0, extra_deps = 0;
  if (in.parameter_server) {
    comm_ops = in.ps_ops_per_tensor * n * in.gradient_ops;
  } else if (n > 1) {
    const double by_size =
        in.bucket_bytes > 0 ? std::ceil(in.gradient_bytes / in.bucket_bytes) : in.gradient_ops;
    const double buckets = std::min(std::max(1.0, in.gradient_ops), std::max(1.0, by_size));
    comm_ops = buckets;
    CollectiveAlgo algo = in.algo;
    if (algo == CollectiveAlgo::kAuto || algo == CollectiveAlgo::kHierarchical)
      algo = in.nodes > 1 && n > in.nodes ? CollectiveAlgo::kHierarchical : CollectiveAlgo::kRing;
    flows = buckets * (in.analytical ? 1.0
                                     : collective_flows(CollectiveType::kAllReduce, algo, n,
                                                        in.nodes, in.chunks));
    extra_deps = built * in.gradient_ops;  // every bucket waits for its gradients on every GPU
  }
  const double it = std::max(1.0, in.iterations);
  SizeEstimate e;
  e.ops = it * (placed + built + comm_ops);  // one input copy per replica built
  e.activities = it * (placed + built + (in.parameter_server ? comm_ops : flows));
  e.memory_bytes = e.ops * kBytesPerOp + (2 * e.ops + it * extra_deps) * kBytesPerDep;
  char replicas[96];
  if (built < n)
    std::snprintf(replicas, sizeof replicas, "%.0f replicas (%.0f built, the others mirror them)",
                  n, built);
  else
    std::snprintf(replicas, sizeof replicas, "%.0f replicas", n);
  char basis[224];
  std::snprintf(basis, sizeof basis, "%s x %.0f ops x %.0f iterations, %.3g flows", replicas,
                in.ops_per_replica * (in.host_overheads ? 2 : 1), it, it * flows);
  e.basis = basis;
  return e;
}

}  // namespace orrery
