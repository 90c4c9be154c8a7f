// Structural validation of an ExecutionGraph, run once before replay so the engine can trust
// every index and cost it reads. All checks are O(ops + deps) and iterative (safe for 1M+ ops).
#pragma once

#include <string>
#include <vector>

#include "engine/execution_graph.h"

namespace orrery {

// Throws InputError on the first problem found. The message starts with `origin` (the file the
// graph came from, or "workload" for generated graphs) and names the offending item, e.g.
//   g.json: ops[3] "send": transfer src and dst are both device 1 "gpu1"
//   g.json: dependency cycle: a -> b -> c -> a        ("x -> y": y depends on x)
// Rules:
//  - device names and op names are non-empty and unique;
//  - op.device, transfer src/dst and every dep index are in range; a transfer's src != dst;
//  - stream index >= 0;
//  - duration, flops, bytes, transfer_bytes, collective bytes and counts lie in their accepted
//    ranges (common/input_limits.h: a day, 1e21 flop, 1 PB), except that duration may be
//    exactly -1 ("unset": priced from flops/bytes by a cost model); chunks 1 to 65536;
//  - at most a million devices, and the replay's estimated ops, flows and memory within the
//    process's size limits (engine/size_estimate.h; --no-size-limit lifts them);
//  - a compute op has duration >= 0 or flops > 0 or bytes > 0 (duration 0 is a legal no-op);
//  - no op depends on itself, and the dependencies form no cycle;
//  - Device::mirrors as execution_graph.h states.
void check_graph(const ExecutionGraph& g, const std::string& origin);

// One dependency cycle as op indices in dependency order (each op depends on the one before it;
// the last op is a dependency of the first), starting at its lowest index; empty if acyclic.
// Precondition: every dep index is in range.
std::vector<int> find_dependency_cycle(const ExecutionGraph& g);

// Op indices such that every op comes after all of its deps.
// Precondition: check_graph passed; throws std::logic_error on a cycle.
std::vector<int> topological_order(const ExecutionGraph& g);

}  // namespace orrery
