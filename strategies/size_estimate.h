// What a distribution strategy's graph and its replay will need, from plain counts, checked
// before build_strategy places a single op (engine/size_estimate.h has the machinery).
#pragma once

#include "engine/execution_graph.h"
#include "engine/size_estimate.h"

namespace orrery {

struct StrategySizeInputs {
  double replicas = 1;  // GPUs that each run a whole replica
  // Of them, those built op by op; the others mirror one of these (all-reduce replicas on one
  // CPU socket, strategies/data_parallel.cc) and add only their flows. 0: all of them.
  double built_replicas = 0;
  double nodes = 1;            // servers those GPUs span
  double ops_per_replica = 0;  // the model's ops
  double gradient_ops = 0;     // ops producing a weight gradient (bounds the bucket count)
  double gradient_bytes = 0;   // one replica's gradients
  double bucket_bytes = 25.0 * 1024 * 1024;
  double iterations = 1;
  bool host_overheads = false;    // a launch op per kernel
  bool parameter_server = false;  // pulls and pushes per tensor instead of all-reduce buckets
  double ps_ops_per_tensor = 2;   // parameter_server: ops per gradient tensor and replica
  CollectiveAlgo algo = CollectiveAlgo::kAuto;
  double chunks = 1;
  bool analytical = false;  // one delay per collective instead of flows
};

// An upper bound of the ops, activities and memory; all in doubles, so 10^9 GPUs x 10^4 ops
// gives a number to refuse, not an overflow.
SizeEstimate estimate_strategy_size(const StrategySizeInputs& in);

}  // namespace orrery
