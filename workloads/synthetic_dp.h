// A synthetic data-parallel training step, so a scenario can run with no graph file: each GPU
// copies its input batch from host memory, runs `layers` forward ops, then backward ops in
// reverse order; each layer's gradient is ring-all-reduced as soon as its backward op ends,
// overlapping the rest of backward; the optimizer update follows the last all-reduce.
#pragma once

#include <string>
#include <vector>

#include "engine/execution_graph.h"

namespace orrery {

struct DataParallelPattern {
  int layers = 16;
  double forward_time = 1e-3;    // seconds per layer
  double backward_factor = 2.0;  // backward = factor x forward (data + weight gradients)
  double gradient_bytes = 4e6;   // per layer
  double update_time = 2e-4;     // optimizer step, seconds
  double input_bytes = 0.0;      // per GPU per iteration, host -> GPU over PCIe
  // NCCL's protocols and latencies (auto), or the bytes-only ring (ideal).
  CollectiveProtocol protocol = CollectiveProtocol::kAuto;
};

struct GpuPlacement {
  std::string host;         // SimGrid host of the GPU
  std::string launch_host;  // its CPU host (source of the input batch)
};

struct SizeEstimate;
// The ops, flows and memory make_data_parallel and its replay need (engine/size_estimate.h).
SizeEstimate estimate_data_parallel_size(const DataParallelPattern& p, double gpus);

// Device names equal host names; CPU hosts become devices too when input_bytes > 0.
// Throws InputError, before building, when the graph would pass the process's size limits.
ExecutionGraph make_data_parallel(const DataParallelPattern& p,
                                  const std::vector<GpuPlacement>& gpus);

}  // namespace orrery
