// Collective algorithms as state machines that issue point-to-point flows as their steps become
// ready. Memory is O(ranks x chunks) per running collective, whatever the number of steps, so a
// 1,024-GPU all-reduce never materializes its 2 x 1,023 x 1,024 flows up front.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "engine/collective_plan.h"
#include "engine/execution_graph.h"

namespace orrery {

// Where a running collective sends its flows; the engine implements it with SimGrid comms and
// calls CollectiveRun::on_flow_done(tag) when a flow completes. `bytes` is payload: the engine
// adds the protocol's overhead and the step's latency from the plan. A flow may stand for
// `steps` consecutive steps between the same two devices (long rings): it pays every step's
// latency, one after the other, before its bytes move. A flow of the first of alike rings run
// as one (`alike`, make_collective_run) stands for the flows at its place in all of them.
class FlowIssuer {
 public:
  virtual ~FlowIssuer() = default;
  virtual void issue(int src_device, int dst_device, double bytes, int64_t tag, int steps,
                     bool alike) = 0;
  void issue(int src_device, int dst_device, double bytes, int64_t tag, int steps = 1) {
    issue(src_device, dst_device, bytes, tag, steps, false);
  }
};

class CollectiveRun {
 public:
  virtual ~CollectiveRun() = default;
  virtual void start() = 0;                    // issues the first flows
  virtual void on_flow_done(int64_t tag) = 0;  // issues what became ready
  virtual bool done() const = 0;
  virtual int64_t flows_total() const = 0;  // flows the whole collective moves
};

// Flows one rank of a ring sends for `steps` ring steps: consecutive steps share a flow once a
// ring has more than 64 of them, so a flat ring of n ranks costs O(n) flows, not O(n^2).
int64_t ring_flows_per_rank(int64_t steps);

// The algorithm `auto` resolves to in the bytes-only model (protocol ideal), NCCL-like: AllToAll
// and SendRecv -> direct; AllReduce over several nodes with several ranks per node (all nodes
// alike) -> hierarchical; AllReduce under 64 KiB -> tree; everything else -> ring. An explicit
// choice that does not apply (tree for AllGather, hierarchical over one node) falls back to
// ring. `node_of` maps each rank position to a node id. NCCL protocols choose through the tuner
// (collective_cost.h) instead.
CollectiveAlgo resolve_collective_algo(const Collective& c, const std::vector<int>& node_of);

// The copies of `plan`'s traffic that move the same bytes in step and may run as one (engine/
// alike_traffic.h), place by place: flows[t][i] = (src, dst) is copy t of flows[0][i], the
// first copy's flows each at a place of its own. Also the flows the rest of the collective moves
// besides them, as (src, dst) pairs. The copies are a ring's channels (no others: not for
// Broadcast, Reduce or uneven blocks), a hierarchical all-reduce's and an NVLS_TREE's rings
// across servers (not merged ones), one per local rank (the rings or fans inside the servers are
// the others), and a tree all-reduce's channels across servers when every chain carries as many
// trees (each copy: a chain's tree and its mirror, reduce up and broadcast down). Empty where
// none apply.
struct AlikeRings {
  std::vector<std::vector<std::pair<int, int>>> flows;
  std::vector<std::pair<int, int>> others;
};
AlikeRings alike_rings(const Collective& c, const CollectivePlan& plan);

// Creates the state machine that runs `plan` (collective_plan.h) for `c`:
//  - ring: one ring per channel, each with its share of the bytes, all at once; a ring of more
//    than 64 steps moves consecutive steps as one flow (collective_algos.cc);
//  - tree: each tree with its share; reduce up, broadcast down, pipelined in c.chunks;
//  - hierarchical: reduce-scatter inside each server, all-reduce across servers per local rank,
//    all-gather inside, with plan.pipeline chunks flowing through the three phases. When every
//    inter-server ring is limited by one link (plan.merge_inter), the rings merge into one ring
//    of the servers' first ranks carrying all their data: g flows sharing a link of capacity C
//    at C/g each end exactly when one flow of g times the bytes at C does;
//  - NVLS: every rank sends its data to its NVSwitch and gets the reduced result back;
//  - NVLS_TREE: NVLS reduce-scatter in each server, a ring all-reduce of each shard between the
//    servers per local rank, NVLS all-gather, pipelined;
//  - PAT: log2(n) steps one after the other, each to the rank 2^k before (pat_steps);
//  - CollNet: reduce-scatter inside servers, the shards through the network's SHARP switch,
//    all-gather inside, pipelined;
//  - direct: AllToAll (every rank to every rank) and SendRecv (every rank to the next).
// With `alike`, the rings alike_rings names run as their first, whose flows the issuer gets
// flagged alike.
std::unique_ptr<CollectiveRun> make_collective_run(const Collective& c, const CollectivePlan& plan,
                                                   FlowIssuer& issuer, bool alike = false);

}  // namespace orrery
