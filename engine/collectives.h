// Collectives expanded into point-to-point transfers appended to an ExecutionGraph, so link
// sharing and contention come out of the simulation rather than a formula.
#pragma once

#include <string>
#include <vector>

#include "engine/execution_graph.h"

namespace orrery {

// Appends a ring all-reduce of `bytes` over `ranks` (device indices, in ring order): 2(n-1)
// steps, each rank sending one chunk of bytes/n to its right neighbour per step (reduce-scatter
// then all-gather). Rank i's first send waits for start_deps[i]. Returns, for each rank, the ops
// after which the reduced buffer is complete there (its last send and its last receive).
// With one rank nothing is appended and start_deps is returned.
std::vector<std::vector<int>> append_ring_allreduce(ExecutionGraph& g,
                                                    const std::vector<int>& ranks, double bytes,
                                                    const std::vector<std::vector<int>>& start_deps,
                                                    const std::string& name, Stream stream,
                                                    const std::string& phase = "comm");

}  // namespace orrery
