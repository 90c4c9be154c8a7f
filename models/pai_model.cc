#include "models/pai_model.h"

#include <algorithm>
#include <cctype>

#include "common/errors.h"
#include "common/suggest.h"
#include "models/op_class.h"

namespace orrery {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

constexpr PaiArchitecture kAll[] = {PaiArchitecture::k1w1g,
                                    PaiArchitecture::k1wng,
                                    PaiArchitecture::kPsWorker,
                                    PaiArchitecture::kAllReduceLocal,
                                    PaiArchitecture::kAllReduceCluster,
                                    PaiArchitecture::kPearl};

}  // namespace

const char* pai_architecture_name(PaiArchitecture a) {
  switch (a) {
    case PaiArchitecture::k1w1g:
      return "1w1g";
    case PaiArchitecture::k1wng:
      return "1wng";
    case PaiArchitecture::kPsWorker:
      return "PS/Worker";
    case PaiArchitecture::kAllReduceLocal:
      return "AllReduce-Local";
    case PaiArchitecture::kAllReduceCluster:
      return "AllReduce-Cluster";
    case PaiArchitecture::kPearl:
      return "PEARL";
  }
  return "?";
}

bool parse_pai_architecture(const std::string& s, PaiArchitecture* out) {
  std::string l = lower(s);
  if (l == "ps-worker" || l == "ps") l = "ps/worker";
  for (PaiArchitecture a : kAll)
    if (l == lower(pai_architecture_name(a))) {
      *out = a;
      return true;
    }
  return false;
}

PaiHardware pai_hardware(const DeviceSpec& dev) {
  PaiHardware hw;
  hw.peak_flops = dev.fp32;
  hw.mem_bw = dev.mem_bw;
  return hw;
}

double pai_weight_time(double bytes, PaiArchitecture a, const PaiHardware& hw) {
  auto over = [&](double bw) { return bytes / (bw * hw.efficiency); };
  switch (a) {
    case PaiArchitecture::k1w1g:
      return 0.0;
    case PaiArchitecture::k1wng:
      return over(hw.pcie_bw);
    case PaiArchitecture::kPsWorker:
      return over(hw.ethernet_bw) + over(hw.pcie_bw);
    case PaiArchitecture::kAllReduceLocal:
    case PaiArchitecture::kPearl:
      return over(hw.nvlink_bw);
    case PaiArchitecture::kAllReduceCluster:
      return over(hw.ethernet_bw) + over(hw.nvlink_bw);
  }
  return 0.0;
}

PaiBreakdown pai_breakdown(const PaiWorkload& w, const PaiHardware& hw) {
  PaiBreakdown b;
  b.t_d = w.pcie_bytes / (hw.pcie_bw * hw.efficiency);
  b.t_c_flops = w.flops / (hw.peak_flops * hw.efficiency);
  b.t_c_mem = w.mem_bytes / (hw.mem_bw * hw.efficiency);
  b.t_c = b.t_c_flops + b.t_c_mem;
  b.t_w = pai_weight_time(w.network_bytes, w.architecture, hw);
  b.total = b.t_d + b.t_c + b.t_w;
  b.overlapped = std::max({b.t_d, b.t_c, b.t_w});
  return b;
}

double pai_throughput(const PaiWorkload& w, int cnodes, double step_seconds) {
  return step_seconds > 0 ? cnodes / step_seconds * static_cast<double>(w.batch) : 0.0;
}

const std::vector<PaiWorkload>& pai_table_v() {
  // PAI Table V (batch size, FLOP count, memory access, memory copy over
  // PCIe, network traffic) with Table IV (domain, dense and embedding weights, architecture).
  // G, T, GB, MB and KB are read as powers of 1000.
  static const std::vector<PaiWorkload> table = [] {
    const char* src =
        "\"Characterizing Deep Learning Training Workloads on Alibaba-PAI\" (Wang et al.) Tables "
        "IV and V";
    using A = PaiArchitecture;
    return std::vector<PaiWorkload>{
        {"Multi-Interests", "Recommender", A::kPsWorker, 2048, 105.8e9, 100.4e9, 261e6, 122e6,
         1.19e6, 239.45e9, src},
        {"ResNet50", "CV", A::kAllReduceLocal, 64, 1.56e12, 31.9e9, 38e6, 357e6, 204e6, 0, src},
        {"NMT", "Translation", A::kAllReduceLocal, 6144, 2.5e12, 101.6e9, 22e3, 1.33e9, 706e6,
         819e6, src},
        {"BERT", "QA", A::kAllReduceLocal, 12, 2.1e12, 107.3e9, 46e3, 1.5e9, 1e9, 284e6, src},
        {"Speech", "Speech recognition", A::k1w1g, 32, 7.9e12, 20.4e9, 804e6, 728e6, 416e6, 0, src},
        {"GCN", "Recommender", A::kPearl, 512, 330.7e9, 25.79e9, 1.2e6, 3e9, 207e6, 54e9, src},
    };
  }();
  return table;
}

const PaiWorkload& pai_workload(const std::string& name) {
  for (const auto& w : pai_table_v())
    if (lower(w.name) == lower(name)) return w;
  std::vector<std::string> names;
  for (const auto& w : pai_table_v()) names.push_back(w.name);
  throw InputError("unknown PAI workload \"" + name + "\"" + did_you_mean(name, names) +
                   " (known: " + join_names(names) + ")");
}

PaiWorkload pai_features(const ModelGraph& g, PaiArchitecture a) {
  PaiWorkload w;
  w.name = g.name;
  w.architecture = a;
  w.batch = g.batch;
  for (const auto& op : g.ops) {
    if (is_compute_bound_class(op_class(op.type)))
      w.flops += op.flops;
    else
      w.mem_bytes += op.bytes;
  }
  w.network_bytes = g.total_grad_bytes();
  w.dense_weight_bytes = 0;
  w.source = "model graph \"" + g.name + "\"";
  return w;
}

}  // namespace orrery
