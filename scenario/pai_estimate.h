// The PAI analytical model (models/pai_model.h, PAI section II-B) applied
// to a scenario's model workload, so that every run and sweep point can show the simulation
// next to the no-overlap estimate it improves on: the features come from the model graph, the
// capacities from the platform's server and the pricing device, the medium of the weight
// traffic from the strategy (Table II).
#pragma once

#include "models/pai_model.h"
#include "platforms/device_spec.h"
#include "platforms/platform_spec.h"
#include "strategies/strategy.h"
#include "workloads/model_graph.h"

namespace orrery {

// Table II's architecture for a strategy: AllReduce within one server is AllReduce-Local over
// NVLink (over PCIe, as 1wng moves weights, when the server has no NVLink), across servers
// AllReduce-Cluster.
PaiArchitecture pai_architecture_of(StrategyType type, int servers_used, bool has_nvlink);

// Capacities of Table I's kinds taken from a generated platform's server and the device that
// prices the ops: Ethernet is all of a server's NICs together, NVLink one GPU pair's link.
PaiHardware pai_hardware_of(const ServerSpec& server, const DeviceSpec& device);

// T_d + T_c + T_w of one step of `model` (counts filled) under `strategy`, whose GPUs span
// `servers_used` servers; S_d is the input batch the strategy copies (0 when it copies none).
PaiBreakdown pai_estimate(const ModelGraph& model, const DeviceSpec& device,
                          const ServerSpec& server, const StrategyOptions& strategy,
                          int servers_used);

}  // namespace orrery
