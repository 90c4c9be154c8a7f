#include "scenario/pai_estimate.h"

namespace orrery {

PaiArchitecture pai_architecture_of(StrategyType type, int servers_used, bool has_nvlink) {
  switch (type) {
    case StrategyType::k1w1g:
      return PaiArchitecture::k1w1g;
    case StrategyType::k1wng:
      return PaiArchitecture::k1wng;
    case StrategyType::kPsWorker:
    case StrategyType::kBytePs:
      return PaiArchitecture::kPsWorker;
    case StrategyType::kPearl:
      return PaiArchitecture::kPearl;
    case StrategyType::kAllReduce:
      if (servers_used > 1) return PaiArchitecture::kAllReduceCluster;
      return has_nvlink ? PaiArchitecture::kAllReduceLocal : PaiArchitecture::k1wng;
  }
  return PaiArchitecture::k1w1g;
}

PaiHardware pai_hardware_of(const ServerSpec& server, const DeviceSpec& device) {
  PaiHardware hw = pai_hardware(device);
  hw.pcie_bw = server.pcie.bandwidth;
  hw.ethernet_bw = server.nic.bandwidth * server.nic.count;
  hw.nvlink_bw = server.nvlink.bandwidth;
  return hw;
}

PaiBreakdown pai_estimate(const ModelGraph& model, const DeviceSpec& device,
                          const ServerSpec& server, const StrategyOptions& strategy,
                          int servers_used) {
  PaiArchitecture arch =
      pai_architecture_of(strategy.type, servers_used, server.nvlink.topology != "none");
  PaiWorkload w = pai_features(model, arch);
  w.pcie_bytes = strategy.input_bytes < 0 ? model_input_bytes(model) : strategy.input_bytes;
  return pai_breakdown(w, pai_hardware_of(server, device));
}

}  // namespace orrery
