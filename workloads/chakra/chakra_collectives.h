// The collectives a Chakra trace names, expanded into point-to-point transfers (kept small and
// local to the importer; a ring AllReduce is two ring passes). `bytes` follows ASTRA-sim's
// comm_size: the whole buffer (AllReduce), the gathered output (AllGather), the input to
// reduce (ReduceScatter), everything a rank sends (AllToAll); each step moves bytes / n.
// Every function returns, per rank, the ops after which the collective is complete there, and
// appends nothing for one rank (returning start_deps).
#pragma once

#include <string>
#include <vector>

#include "engine/execution_graph.h"

namespace orrery::chakra {

using RankDeps = std::vector<std::vector<int>>;

// Ring over `ranks` (device indices, ring order): n-1 steps, rank i sending bytes/n to rank
// i+1 per step, each send after the rank's previous send and previous receive. This is the
// ring AllGather and the ring ReduceScatter (same flows; the reduction's arithmetic is not
// modelled).
RankDeps append_ring_pass(ExecutionGraph& g, const std::vector<int>& ranks, double bytes,
                          const RankDeps& start_deps, const std::string& name, Stream stream,
                          const std::string& phase);

// Pairwise exchange: in step k = 1..n-1 rank i sends bytes/n to rank i+k. All of a rank's sends
// are ready at once; its FIFO stream issues them in step order.
RankDeps append_all_to_all(ExecutionGraph& g, const std::vector<int>& ranks, double bytes,
                           const RankDeps& start_deps, const std::string& name, Stream stream,
                           const std::string& phase);

}  // namespace orrery::chakra
