// The one-GPU execution graph of a model graph: every op of the replica runs on the device's
// compute stream in dependency order (the model's deps), optionally behind host launch ops
// (models/host_overhead.h). This is the 1w1g case of PAI and the setting
// of the DLRM performance model's Algorithm 1; multi-GPU strategies build their own graphs from
// the same pieces (price_ops, add_launch_ops).
#pragma once

#include <string>
#include <vector>

#include "engine/execution_graph.h"
#include "platforms/device_spec.h"
#include "workloads/model_graph.h"

namespace orrery {

struct DeviceHosts {
  std::string name;         // device name in the graph
  std::string host;         // SimGrid host of the GPU (default: name)
  std::string launch_host;  // SimGrid host of its CPU thread (default: host)
};

struct SingleDeviceOptions {
  bool host_overheads = true;
  HostOverheads overheads;  // normally the device spec's
};

// `durations` is parallel to g.ops (price_ops().seconds). Op names, phases ("forward",
// "backward", "optimizer"), flops and bytes are copied; the launch order of host launch ops is
// the model's op order. Throws InputError when durations and ops differ in number or a dep
// index is out of range.
ExecutionGraph single_device_graph(const ModelGraph& g, const std::vector<double>& durations,
                                   const DeviceHosts& hosts, const SingleDeviceOptions& options);

}  // namespace orrery
