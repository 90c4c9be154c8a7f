// A scenario's model workload: a zoo model (or an exported ModelGraph file) priced on the
// scenario's device by the cost model, optionally rewritten for mixed precision, and laid out
// over the platform by a distribution strategy.
//
//   workload: {type: model, model: resnet50, batch: 64, ...model keys}
//             {type: model_file, file: graph.model.json}
//   device:     V100-SXM2 | {model: V100-SXM2, fp32: 20TFLOP/s, ...}  (read by the scenario: it
//               replaces the platform's GPU, scenario/scenario.h)
//   cost_model: {...}                                                (models/cost_model.h)
//   precision:  fp32 | amp | cost-aware | {...}                       (models/mixed_precision.h)
//   strategy:   {type: allreduce, gpus: 8, bucket: 25MiB, ...}        (docs/strategies.md)
#pragma once

#include <string>

#include "common/yaml_reader.h"
#include "engine/execution_graph.h"
#include "platforms/device_spec.h"
#include "platforms/platform_spec.h"
#include "strategies/cluster_layout.h"
#include "strategies/strategy.h"

namespace orrery {

struct ModelWorkload {
  ExecutionGraph graph;
  std::string summary;  // one line: model, strategy, device, pricing sources
  // The PAI analytical estimate of one step (scenario/pai_estimate.h); 0 without a server spec.
  double analytical_seconds = 0.0;
  int iterations = 1;     // strategy.iterations: training steps the graph holds
  std::string model;      // the model's name (a zoo model's, or the model file's)
  std::string framework;  // the software-stack profile's name
};

// `root` is the scenario, `workload` its workload mapping (type already read); `device` the
// scenario's one GPU (Scenario::device), on which every op is priced; `server` the generated
// platform's server for the PAI analytical estimate (null: none is computed). Relative files
// resolve in `base_dir`.
// A strategy's `collectives` mapping: algo, protocol, chunks, pipeline, mode.
CollectiveOptions read_collective_options(const YamlMap& collectives);

ModelWorkload build_model_workload(const YamlMap& root, const YamlMap& workload,
                                   const ClusterLayout& layout, const DeviceSpec& device,
                                   const ServerSpec* server, const std::string& base_dir);

}  // namespace orrery
