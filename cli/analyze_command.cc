// `orrery analyze`: the PAI analytical model (models/pai_model.h) on the built-in Table V
// workloads, and `orrery devices`: the built-in device specs (platforms/devices/*.yaml).
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "common/errors.h"
#include "common/units.h"
#include "models/pai_model.h"
#include "platforms/device_spec.h"

namespace orrery {
namespace {

struct AnalyzeArgs {
  std::vector<std::string> names;
  bool all = false;
  std::string device = "PAI-GPU";
  std::string flops, mem_bw, pcie, ethernet, nvlink, arch;
  double efficiency = 0.7;
};

struct DevicesArgs {
  std::string name;
};

double quantity(const std::string& flag, const std::string& text,
                bool (*parse)(const std::string&, double*), const char* example) {
  double v = 0;
  if (!parse(text, &v) || !(v > 0))
    throw InputError(flag + ": expected a positive value such as " + example + ", got \"" + text +
                     "\"");
  return v;
}

std::string rate(double flops) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g TFLOP/s", flops / 1e12);
  return buf;
}

double pct(double part, double whole) { return whole > 0 ? 100.0 * part / whole : 0.0; }

int analyze_command(const AnalyzeArgs& a) {
  DeviceSpec dev = device_spec(a.device);
  PaiHardware hw = pai_hardware(dev);
  if (!a.flops.empty()) hw.peak_flops = quantity("--flops", a.flops, parse_flops, "15TFLOP/s");
  if (!a.mem_bw.empty()) hw.mem_bw = quantity("--mem-bw", a.mem_bw, parse_bandwidth, "900GB/s");
  if (!a.pcie.empty()) hw.pcie_bw = quantity("--pcie", a.pcie, parse_bandwidth, "10GB/s");
  if (!a.ethernet.empty())
    hw.ethernet_bw = quantity("--ethernet", a.ethernet, parse_bandwidth, "25Gbps");
  if (!a.nvlink.empty()) hw.nvlink_bw = quantity("--nvlink", a.nvlink, parse_bandwidth, "50GB/s");
  if (!(a.efficiency > 0) || a.efficiency > 1)
    throw InputError("--efficiency: expected a fraction in (0, 1], got " +
                     std::to_string(a.efficiency));
  hw.efficiency = a.efficiency;
  PaiArchitecture arch{};
  if (!a.arch.empty() && !parse_pai_architecture(a.arch, &arch))
    throw InputError(
        "--arch: expected 1w1g, 1wng, ps-worker, allreduce-local, "
        "allreduce-cluster or pearl, got \"" +
        a.arch + "\"");

  std::vector<PaiWorkload> work;
  if (a.all || a.names.empty()) {
    work = pai_table_v();
  } else {
    for (const auto& n : a.names) work.push_back(pai_workload(n));
  }
  if (!a.arch.empty())
    for (auto& w : work) w.architecture = arch;

  std::printf(
      "PAI analytical model (\"Characterizing Deep Learning Training Workloads on Alibaba-PAI\" "
      "(Wang et al.), section II-B)\n");
  std::printf("  T = Td + Tc + Tw, Tc = FLOPs/peak + memory/bandwidth; overlap: max{Td, Tc, Tw}\n");
  bool changed = !a.flops.empty() || !a.mem_bw.empty();
  std::printf(
      "  device %s%s: %s, memory %s; PCIe %s, Ethernet %s, NVLink %s; efficiency %.0f%%\n\n",
      dev.name.c_str(), changed ? " (with --flops/--mem-bw)" : "", rate(hw.peak_flops).c_str(),
      format_bandwidth(hw.mem_bw).c_str(), format_bandwidth(hw.pcie_bw).c_str(),
      format_bandwidth(hw.ethernet_bw).c_str(), format_bandwidth(hw.nvlink_bw).c_str(),
      100 * hw.efficiency);
  std::printf("%-16s %-18s %10s %10s %10s %10s %10s %10s %6s %6s %6s\n", "workload", "architecture",
              "Td", "Tc flops", "Tc memory", "Tw", "total", "overlap", "Td%", "Tc%", "Tw%");
  for (const auto& w : work) {
    PaiBreakdown b = pai_breakdown(w, hw);
    std::printf("%-16s %-18s %10s %10s %10s %10s %10s %10s %5.1f%% %5.1f%% %5.1f%%\n",
                w.name.c_str(), pai_architecture_name(w.architecture), format_time(b.t_d).c_str(),
                format_time(b.t_c_flops).c_str(), format_time(b.t_c_mem).c_str(),
                format_time(b.t_w).c_str(), format_time(b.total).c_str(),
                format_time(b.overlapped).c_str(), pct(b.t_d, b.total), pct(b.t_c, b.total),
                pct(b.t_w, b.total));
  }
  double ratio = pai_weight_time(1.0, PaiArchitecture::kPsWorker, hw) /
                 pai_weight_time(1.0, PaiArchitecture::kAllReduceLocal, hw);
  std::printf(
      "\nWeight-bound speedup from PS/Worker (Ethernet + PCIe) to AllReduce-Local "
      "(NVLink), eq. (3): %.1fx\n",
      ratio);
  std::printf(
      "Features: Table V of \"Characterizing Deep Learning Training Workloads on Alibaba-PAI\" "
      "(Wang et al.) (per cNode and step); 1w1g "
      "workloads move no weights.\n");
  return 0;
}

// "1410 MHz", "400 W": clocks and board powers as datasheets print them.
std::string mhz(double hz) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f MHz", hz / 1e6);
  return buf;
}
std::string watts(double w) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f W", w);
  return buf;
}

// A spec's aliases in two groups: short names ("H100") and the names the driver prints
// ("NVIDIA H100 80GB HBM3", what torch.cuda.get_device_name() returns), told by their spaces.
std::string alias_list(const DeviceSpec& d, bool driver_names) {
  std::string out;
  for (const auto& al : d.aliases)
    if ((al.find(' ') != std::string::npos) == driver_names)
      out += (out.empty() ? "" : driver_names ? "; " : ",") + al;
  return out;
}

int devices_command(const DevicesArgs& a) {
  std::vector<std::string> names =
      a.name.empty() ? device_spec_names() : std::vector<std::string>{a.name};
  if (!a.name.empty()) {
    DeviceSpec d = device_spec(a.name);
    std::printf("%s: %s\n", d.name.c_str(), d.description.c_str());
    const std::string short_names = alias_list(d, false), driver_names = alias_list(d, true);
    if (!short_names.empty()) std::printf("  aliases: %s\n", short_names.c_str());
    if (!driver_names.empty()) std::printf("  driver names: %s\n", driver_names.c_str());
    std::printf("  fp32 %s, fp16 %s, bf16 %s\n", rate(d.fp32).c_str(),
                rate(d.peak_flops(DType::kFP16, false)).c_str(),
                rate(d.peak_flops(DType::kBF16, false)).c_str());
    auto tc = [](double v) { return v > 0 ? rate(v) : std::string("-"); };  // "-": no such path
    std::printf("  tensor cores: %s (tf32 %s, fp16 %s, bf16 %s, int8 %s, fp8 %s, fp4 %s)\n",
                d.tensor_cores ? "yes" : "no", tc(d.tf32_tc).c_str(), tc(d.fp16_tc).c_str(),
                tc(d.bf16_tc).c_str(), tc(d.int8_tc).c_str(), tc(d.fp8_tc).c_str(),
                tc(d.fp4_tc).c_str());
    std::printf("  memory %s at %s, L2 %s at %s%s, %d SMs\n", format_size(d.mem_bytes).c_str(),
                format_bandwidth(d.mem_bw).c_str(), format_size(d.l2_bytes).c_str(),
                format_bandwidth(d.l2_bandwidth()).c_str(), d.l2_bw > 0 ? "" : " (estimated)",
                d.sms);
    const std::string cores = d.fp32_cores_per_sm > 0 ? std::to_string(d.fp32_cores_per_sm) : "-";
    std::printf("  boost clock %s, %s FP32 cores per SM, board power %s\n",
                d.clock > 0 ? mhz(d.clock).c_str() : "-", cores.c_str(),
                d.tdp_w > 0 ? watts(d.tdp_w).c_str() : "-");
    std::printf("  host overheads: T1 %s, T2 %s, T3 %s, T4 %s, T5 %s, GPU gap %s\n",
                format_time(d.host.t1).c_str(), format_time(d.host.t2).c_str(),
                format_time(d.host.t3).c_str(), format_time(d.host.t4).c_str(),
                format_time(d.host.t5).c_str(), format_time(d.host.gap).c_str());
    std::printf("  sources:\n");
    for (const auto& s : d.sources) std::printf("    - %s\n", s.c_str());
    return 0;
  }
  int width = 6;
  for (const auto& n : names) width = std::max(width, static_cast<int>(n.size()));
  std::printf("%-*s %13s %13s %14s %12s %5s %10s %9s %6s %s\n", width, "device", "fp32", "fp16 TC",
              "memory bw", "memory", "SMs", "L2", "clock", "power", "aliases");
  for (const auto& n : names) {
    DeviceSpec d = device_spec(n);
    const std::string clock = d.clock > 0 ? mhz(d.clock) : "-";
    const std::string power = d.tdp_w > 0 ? watts(d.tdp_w) : "-";
    std::printf("%-*s %13s %13s %14s %12s %5d %10s %9s %6s %s\n", width, d.name.c_str(),
                rate(d.fp32).c_str(), d.fp16_tc > 0 ? rate(d.fp16_tc).c_str() : "-",
                format_bandwidth(d.mem_bw).c_str(), format_size(d.mem_bytes).c_str(), d.sms,
                format_size(d.l2_bytes).c_str(), clock.c_str(), power.c_str(),
                alias_list(d, false).c_str());
  }
  std::printf(
      "\nThe names the driver prints (torch.cuda.get_device_name(), nvidia-smi) are aliases too:\n"
      "--device \"NVIDIA H100 80GB HBM3\"; case, spaces and underscores do not matter.\n"
      "orrery devices NAME lists a spec's.\n");
  return 0;
}

}  // namespace

void register_analyze_commands(CLI::App& app, CommandList& out) {
  static AnalyzeArgs args;
  auto* an = app.add_subcommand(
      "analyze",
      "PAI analytical model (Td + Tc + Tw) of the built-in Table V workloads of "
      "\"Characterizing Deep Learning Training Workloads on Alibaba-PAI\" (Wang et al.)");
  an->add_option("workloads", args.names,
                 "Workloads (Multi-Interests, ResNet50, NMT, BERT, Speech, GCN); none: all");
  an->add_flag("--all", args.all, "All six Table V workloads");
  an->add_option("--device", args.device,
                 "Device spec giving peak FP32 rate and memory bandwidth (default PAI-GPU, "
                 "Table I)");
  an->add_option("--flops", args.flops, "Override peak FLOP/s, e.g. 15TFLOP/s");
  an->add_option("--mem-bw", args.mem_bw, "Override GPU memory bandwidth, e.g. 900GB/s");
  an->add_option("--pcie", args.pcie, "PCIe bandwidth (default 10GB/s)");
  an->add_option("--ethernet", args.ethernet, "Ethernet bandwidth (default 25Gbps)");
  an->add_option("--nvlink", args.nvlink, "NVLink bandwidth (default 50GB/s)");
  an->add_option("--efficiency", args.efficiency, "Hardware efficiency (default 0.7)");
  an->add_option("--arch", args.arch,
                 "Project every workload onto this architecture (1w1g, 1wng, ps-worker, "
                 "allreduce-local, allreduce-cluster, pearl)");
  out.push_back({an, [] { return analyze_command(args); }});

  static DevicesArgs dargs;
  auto* dv = app.add_subcommand("devices", "List the built-in GPU specs, or show one in full");
  dv->add_option("name", dargs.name, "A device name or alias");
  out.push_back({dv, [] { return devices_command(dargs); }});
}

}  // namespace orrery
