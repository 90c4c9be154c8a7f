// Host overheads: a GPU kernel cannot start before the CPU thread that drives its GPU has
// launched it (the DLRM performance model, section III-C and Algorithm 1). Two forms:
//  - host_critical_path(): Algorithm 1 itself, on a sequence of ops with their kernel times;
//  - add_launch_ops(): the same timing expressed in an ExecutionGraph, so the replay engine
//    realises it alongside everything else (communication, other GPUs): each kernel gets a
//    launch op on its device's host stream (StreamClass::kHost, run on Device::launch_host),
//    the kernel depends on its launch, and one device's launches are chained on its host
//    thread. The replay then starts each kernel at max(GPU free, launch done).
//
// Per op, Algorithm 1 spends T1 (+ T2 if the op has kernels) on the CPU; each kernel may start
// once the GPU is free (plus the gap) and half of its launch call T4 has passed; the CPU then
// finishes the call (T4/2), adds T5 between two kernels of one op and T3 after the op's last
// kernel. With one kernel per op, the CPU time between two kernel-ready instants is therefore
// T4/2 + T3 + T1 + T2 + T4/2 = T1 + T2 + T3 + T4, which is each launch op's duration; the first
// launch of a device lasts T1 + T2 + T4/2 and a tail op of T4/2 + T3 ends its thread.
#pragma once

#include <vector>

#include "engine/execution_graph.h"
#include "platforms/device_spec.h"
#include "workloads/model_graph.h"

namespace orrery {

struct CriticalPath {
  double cpu_s = 0.0;                // host thread time at the end
  double gpu_s = 0.0;                // end of the last kernel
  double total_s = 0.0;              // max(cpu, gpu): the predicted step time
  std::vector<double> kernel_start;  // every kernel's start, in launch order
};

// Algorithm 1 of the DLRM performance model on ops in launch order; kernels[i] lists op i's kernel
// times (empty: an op without kernels, which costs T1 + T5 on the host).
CriticalPath host_critical_path(const std::vector<std::vector<double>>& kernels,
                                const HostOverheads& ov);

// Adds launch ops for `kernels` (indices of compute ops of `g`, in the order their host threads
// launch them; ops of several devices may be mixed, each device's launches form its own chain)
// and one tail op per device that has launches. Each kernel gets a dependency on its launch.
// The GPU gap is realised exactly: the kernel's duration grows by ov.gap and its device's
// launches end ov.gap earlier, so kernel start = max(GPU free + gap, launch done) as in
// Algorithm 1 line 11 (kernels with an unset duration (-1) get no gap). Returns the index of
// each kernel's launch op, parallel to `kernels`. Throws std::invalid_argument on an index out
// of range or a transfer op.
std::vector<int> add_launch_ops(ExecutionGraph& g, const std::vector<int>& kernels,
                                const HostOverheads& ov);

// Op times on a synchronous device (HostOverheads::synchronous: a CPU that runs the framework
// and the ops on one thread): each op of `g` takes its measured time plus the framework time
// of its phase (ov.forward, ov.backward, ov.optimizer; never below zero), and the first op also
// carries the per-step time ov.step. `seconds` is parallel to g.ops (price_ops().seconds).
// Throws std::invalid_argument when the sizes differ.
std::vector<double> synchronous_op_times(const ModelGraph& g, const std::vector<double>& seconds,
                                         const HostOverheads& ov);

}  // namespace orrery
