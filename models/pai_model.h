// The PAI analytical model (PAI, section II-B): a fast, simulation-free
// estimate of one training step from four workload features,
//   T_d = S_d / B_d                                   input data over PCIe
//   T_c = #FLOPs / peak_FLOPs + S_mem / B_mem         compute-bound + memory-bound ops, eq. (1)
//   T_w = S_w / B_w                                   weight/gradient traffic
//   T_total = T_d + T_c + T_w      (no overlap)  or  max{T_d, T_c, T_w} (ideal overlap, V-B)
// with every capacity derated to 70% (the paper's hardware-efficiency assumption). The medium
// of the weight traffic follows the workload's system architecture (Table II): PS/Worker moves
// weights over Ethernet and PCIe (both times add, as eq. (3) does), AllReduce-Local over
// NVLink, AllReduce-Cluster over Ethernet and NVLink, 1wng over PCIe, PEARL over NVLink
// (section IV-C), and 1w1g moves none.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "platforms/device_spec.h"
#include "workloads/model_graph.h"

namespace orrery {

enum class PaiArchitecture : unsigned char {
  k1w1g = 0,
  k1wng,
  kPsWorker,
  kAllReduceLocal,
  kAllReduceCluster,
  kPearl
};
// "1w1g", "1wng", "PS/Worker", "AllReduce-Local", "AllReduce-Cluster", "PEARL"; parsing is
// case-insensitive and also accepts "ps-worker", "allreduce-local", "allreduce-cluster".
const char* pai_architecture_name(PaiArchitecture a);
bool parse_pai_architecture(const std::string& s, PaiArchitecture* out);

// Workload features (Table V's columns), per cNode and step.
struct PaiWorkload {
  std::string name;
  std::string domain;
  PaiArchitecture architecture = PaiArchitecture::k1w1g;
  int64_t batch = 1;
  double flops = 0.0;                   // #FLOPs of compute-bound ops
  double mem_bytes = 0.0;               // S_mem: memory access of memory-bound ops
  double pcie_bytes = 0.0;              // S_d: input data copied host -> GPU
  double network_bytes = 0.0;           // S_w: weight/gradient traffic
  double dense_weight_bytes = 0.0;      // Table IV (for listings)
  double embedding_weight_bytes = 0.0;  // Table IV
  std::string source;
};

// Capacities (peak, not derated) and the efficiency applied to all of them.
struct PaiHardware {
  double peak_flops = 11e12;      // Table I: GPU 11 TFLOPs
  double mem_bw = 1e12;           // Table I: memory 1 TB/s
  double pcie_bw = 10e9;          // Table I: PCIe 10 GB/s
  double ethernet_bw = 25e9 / 8;  // Table I: Ethernet 25 Gb/s
  double nvlink_bw = 50e9;        // Table I: NVLink 50 GB/s
  double efficiency = 0.7;        // section II-B
};

// Table I's system settings with the GPU's peak FP32 rate and memory bandwidth from `dev`.
PaiHardware pai_hardware(const DeviceSpec& dev);

struct PaiBreakdown {
  double t_d = 0.0;
  double t_c_flops = 0.0;  // #FLOPs / (peak x e)
  double t_c_mem = 0.0;    // S_mem / (B_mem x e)
  double t_c = 0.0;
  double t_w = 0.0;
  double total = 0.0;       // T_d + T_c + T_w
  double overlapped = 0.0;  // max{T_d, T_c, T_w}
};

// Seconds to move `bytes` of weights under architecture `a` (0 for 1w1g).
double pai_weight_time(double bytes, PaiArchitecture a, const PaiHardware& hw);
PaiBreakdown pai_breakdown(const PaiWorkload& w, const PaiHardware& hw);
// Eq. (2): samples per second of a job of `cnodes` computation nodes.
double pai_throughput(const PaiWorkload& w, int cnodes, double step_seconds);

// Table V's six case-study workloads (with Table IV's domains, weights and architectures).
const std::vector<PaiWorkload>& pai_table_v();
// One of them by name (case-insensitive); InputError listing the names otherwise.
const PaiWorkload& pai_workload(const std::string& name);

// Features of a model graph: FLOPs of GEMMs and convolutions, bytes of every other op, the
// gradient bytes as network traffic; S_d is left 0 (input size is the data pipeline's).
// Call fill_op_counts first.
PaiWorkload pai_features(const ModelGraph& g, PaiArchitecture a);

}  // namespace orrery
