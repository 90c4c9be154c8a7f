// Collective algorithms as state machines that issue point-to-point flows as their steps become
// ready. Memory is O(ranks x chunks) per running collective, whatever the number of steps, so a
// 1,024-GPU all-reduce never materializes its 2 x 1,023 x 1,024 flows up front.
#pragma once

#include <cstdint>
#include <functional>
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

// The link that limits a flow from one device to another (lowest bandwidth on its route), as an
// id comparable across routes; -1 when unknown.
using BottleneckLink = std::function<int(int src_device, int dst_device)>;

// Creates the state machine for a collective with a resolved algorithm. `node_of` as above.
//
// Hierarchical AllReduce runs one ring across nodes per local rank. When every such ring is
// limited by the same link (a server with one uplink or NIC), the rings are merged into one ring
// of the local ranks 0 carrying all their data: g flows sharing a link of capacity C at C/g each
// end exactly when one flow of g times the bytes at C does, and the flow count drops g-fold.
// Platforms where each local rank has its own bottleneck (a NIC per GPU) keep separate rings.
std::unique_ptr<CollectiveRun> make_collective_run(const Collective& c, CollectiveAlgo algo,
                                                   const std::vector<int>& node_of,
                                                   FlowIssuer& issuer,
                                                   const BottleneckLink& bottleneck = {});

}  // namespace orrery
