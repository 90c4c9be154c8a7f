// Collective algorithms as state machines that issue point-to-point flows as their steps become
// ready. Memory is O(ranks x chunks) per running collective, whatever the number of steps, so a
// 1,024-GPU all-reduce never materializes its 2 x 1,023 x 1,024 flows up front.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/execution_graph.h"

namespace orrery {

// Where a running collective sends its flows; the engine implements it with SimGrid comms and
// calls CollectiveRun::on_flow_done(tag) when a flow completes.
class FlowIssuer {
 public:
  virtual ~FlowIssuer() = default;
  virtual void issue(int src_device, int dst_device, double bytes, int64_t tag) = 0;
};

class CollectiveRun {
 public:
  virtual ~CollectiveRun() = default;
  virtual void start() = 0;                    // issues the first flows
  virtual void on_flow_done(int64_t tag) = 0;  // issues what became ready
  virtual bool done() const = 0;
  virtual int64_t flows_total() const = 0;  // flows the whole collective moves
};

// The algorithm `auto` resolves to, NCCL-like: AllToAll -> direct; AllReduce over several nodes
// with several ranks per node (all nodes alike) -> hierarchical; AllReduce under 64 KiB -> tree;
// everything else -> ring. An explicit choice that does not apply (tree for AllGather,
// hierarchical over one node) also falls back to ring.
// `node_of` maps each rank position to a node id.
CollectiveAlgo resolve_collective_algo(const Collective& c, const std::vector<int>& node_of);

// Creates the state machine for a collective with a resolved algorithm. `node_of` as above.
std::unique_ptr<CollectiveRun> make_collective_run(const Collective& c, CollectiveAlgo algo,
                                                   const std::vector<int>& node_of,
                                                   FlowIssuer& issuer);

}  // namespace orrery
