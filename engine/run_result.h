// RunResult: what one replay produced. Plain data, serializable (run_result_io.h) so a replay
// can run in a child process and hand its result back through a pipe.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "engine/execution_graph.h"

namespace orrery {

struct OpTiming {
  double start = 0.0;
  double end = 0.0;
};

struct DeviceStats {
  std::string name;
  // Seconds each stream class was busy running ops (ops of one queue never overlap; two queues
  // of one class can, so this may exceed the makespan for a class with several queues).
  std::array<double, kNumStreamClasses> busy{};
  double idle = 0.0;  // makespan minus compute-stream busy time
  // Communication time not hidden behind compute: comm-stream busy time (transfers and the
  // collectives the device takes part in) during which its compute stream was idle.
  double exposed_comm = 0.0;
  double memory_bound = 0.0;  // the part of compute-stream busy time in memory-bound ops
  int64_t ops = 0;
  // exposed_comm split by comm queue index (comm:0, comm:1, ...): each queue is charged for
  // the time it runs while neither compute nor a lower-numbered queue does, so the parts sum
  // to exposed_comm and a strategy orders its queues from the most blocking one (a language
  // model's tensor-parallel queue first, its data-parallel queue last).
  std::vector<double> exposed_by_queue{};
  // Compute-stream busy time per op phase ("forward", "backward", "recompute", ...), by name.
  std::vector<std::pair<std::string, double>> compute_by_phase{};
};

struct LinkStats {
  std::string name;
  double bandwidth = 0.0;  // bytes/s as configured
  double latency = 0.0;    // seconds
  double bytes = 0.0;      // bytes of all transfers whose route crosses this link
  std::string link_class;  // "pcie", "nvlink", "ethernet"... (empty for XML platforms)
  // Achieved bytes/s over `bandwidth` in consecutive bins of RunResult::link_usage_bin_width
  // from the start of the run (engine/link_usage.h); empty when not sampled.
  std::vector<double> utilization{};
};

// One point-to-point flow a collective issued (engine/flow_record.h). 40 bytes, no padding: a
// run may record millions.
struct FlowRecord {
  double start = 0.0;  // seconds from the start of the run
  double end = 0.0;
  double bytes = 0.0;  // on the wire: the payload over the protocol's efficiency
  int32_t src = -1;    // device indices (ExecutionGraph::devices)
  int32_t dst = -1;
  int32_t op = -1;  // the collective's op (index into ExecutionGraph::ops)
  // The flow's place among the flows `src` sent in this collective (0, 1, ...): the step, for a
  // ring or chain moving each block in one chunk.
  uint32_t seq = 0;
};

// How one collective ran, as the planner chose it (engine/collective_plan.h).
struct CollectiveChoice {
  CollectiveAlgo algo = CollectiveAlgo::kRing;
  CollectiveProtocol protocol = CollectiveProtocol::kIdeal;
  int channels = 1;  // rings, trees, or 1 for the other algorithms
};

struct RunResult {
  double makespan = 0.0;   // simulated seconds from first start to last completion
  int64_t activities = 0;  // SimGrid activities started
  double wall_seconds = 0.0;
  // The PAI analytical model's estimate of the same step (T_d + T_c + T_w, no overlap;
  // models/pai_model.h), set by whoever built the workload; 0 where it does not apply.
  double analytical_seconds = 0.0;
  // Training steps the graph holds one after the other (strategy.iterations), set by whoever
  // built the workload: makespan and the busy times cover all of them, a run's summary
  // (results/h5_store.h summarize_run) is per step.
  int32_t iterations = 1;
  std::vector<DeviceStats> devices;  // parallel to ExecutionGraph::devices
  std::vector<LinkStats> links;      // links that carried bytes, sorted by name
  std::vector<OpTiming> timeline;    // parallel to ExecutionGraph::ops (empty if not recorded)
  // Parallel to ExecutionGraph::collectives; the last start's choice for a collective that
  // never ran keeps the defaults.
  std::vector<CollectiveChoice> collectives;
  // Collective flows in start order, the first ReplayOptions::max_recorded_flows of them (empty
  // unless ReplayOptions::record_flows). flows_issued counts every flow the collectives issued
  // while recording, so flows_issued > flows.size() says some were left out.
  std::vector<FlowRecord> flows;
  int64_t flows_issued = 0;
  // Width in seconds of the bins of LinkStats::utilization; 0 when not sampled.
  double link_usage_bin_width = 0.0;
  // Flows of devices with mirrors (Device::mirrors) whose mirrors' routes were not alike the
  // device's own (other lengths, latencies or bandwidths): each was held to one rate for all
  // its copies, an approximation where the copies' own rates would differ.
  int64_t asymmetric_mirror_flows = 0;
};

}  // namespace orrery
