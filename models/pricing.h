// Pricing a model graph: the duration of every op of one replica on one device, with where
// each number came from. Strategies (single GPU, data parallel, PS, PEARL...) price a replica
// once and copy the durations onto the ops they place on devices.
#pragma once

#include <array>
#include <vector>

#include "models/cost_model.h"
#include "platforms/device_spec.h"
#include "workloads/model_graph.h"

namespace orrery {

struct OpPrices {
  std::vector<double> seconds;                   // parallel to ModelGraph::ops
  std::vector<EstimateSource> sources;           // parallel to ModelGraph::ops
  std::array<int, kNumEstimateSources> count{};  // ops priced by each source
  double total_s = 0.0;                          // sum of seconds (the serial compute time)
};

OpPrices price_ops(const ModelGraph& g, const DeviceSpec& dev, const CostModel& cost);

}  // namespace orrery
