// Size guards for execution graphs: the ops and SimGrid activities replaying a graph needs
// (collectives expanded as the replay will), checked with check_size (common/size_guard.h)
// before the replay starts.
#pragma once

#include <string>

#include "common/size_guard.h"
#include "engine/execution_graph.h"

namespace orrery {

// Flows one collective moves with a resolved algorithm (kAuto and kHierarchical over one node
// count as ring). `ranks` ranks spread evenly over `nodes` nodes; `chunks` >= 1.
double collective_flows(CollectiveType type, CollectiveAlgo algo, double ranks, double nodes,
                        double chunks);

// The ops, activities and memory of replaying `g` (collectives resolved as the replay will:
// engine/collective_algos.h). O(ops + deps + collective ranks). Precondition: the indices of
// `g` are in range (graph_check.h checks them first).
SizeEstimate estimate_graph_size(const ExecutionGraph& g);

}  // namespace orrery
