#include "models/kernel_coefficients.h"

#include <cstdio>

#include "common/embedded_data.h"
#include "common/errors.h"
#include "common/input_file.h"
#include "common/yaml_reader.h"

namespace orrery {
namespace {

struct Field {
  const char* section;
  const char* key;
  double KernelCoefficients::*value;
  double min, max;
};

// Every coefficient, by the section and key the file uses; the ranges keep a hand-edited
// file physical (an efficiency above 1 or a negative cycle count is a typo, not a fit).
const Field kFields[] = {
    {"gemm", "eta0", &KernelCoefficients::gemm_eta0, 0.01, 1},
    {"gemm", "edge", &KernelCoefficients::gemm_edge, 0, 1000},
    {"gemm", "regs", &KernelCoefficients::gemm_regs, 1024, 1e6},
    {"gemm", "tile_cycles", &KernelCoefficients::gemm_tile_cycles, 0, 1e6},
    {"gemm", "mem_eff", &KernelCoefficients::gemm_mem_eff, 0.01, 1},
    {"gemm", "l2_reread", &KernelCoefficients::gemm_l2_reread, 0, 100},
    {"tensor", "eta16", &KernelCoefficients::tc_eta16, 0.01, 1},
    {"tensor", "eta8", &KernelCoefficients::tc_eta8, 0.01, 1},
    {"tensor", "eta4", &KernelCoefficients::tc_eta4, 0.01, 1},
    {"tensor", "edge", &KernelCoefficients::tc_edge, 0, 1000},
    {"tensor", "regs", &KernelCoefficients::tc_regs, 1024, 1e6},
    {"tensor", "tile_cycles", &KernelCoefficients::tc_tile_cycles, 0, 1e6},
    {"tensor", "mem_eff", &KernelCoefficients::tc_mem_eff, 0.01, 1},
    {"tensor", "unaligned_eff", &KernelCoefficients::tc_unaligned_eff, 0.01, 1},
    {"tensor", "pj_per_flop_16nm", &KernelCoefficients::tc_pj_per_flop_16nm, 0, 1e4},
    {"tensor", "bits_exponent", &KernelCoefficients::tc_bits_exponent, 0, 4},
    {"tensor", "power_window_s", &KernelCoefficients::tc_power_window_s, 0, 10},
    {"attention", "eta", &KernelCoefficients::attn_eta, 0.01, 1},
    {"attention", "d_edge", &KernelCoefficients::attn_d_edge, 0, 1e4},
    {"attention", "exp_share", &KernelCoefficients::attn_exp_share, 0, 8},
    {"attention", "block_cycles", &KernelCoefficients::attn_block_cycles, 0, 1e7},
    {"attention", "bwd_eta", &KernelCoefficients::attn_bwd_eta, 0.01, 1},
    {"attention", "mem_eff", &KernelCoefficients::attn_mem_eff, 0.01, 1},
    {"launch", "seconds", &KernelCoefficients::launch_s, 0, 1e-3},
    {"power", "pj_per_flop_16nm", &KernelCoefficients::pj_per_flop_16nm, 0, 1e4},
    {"conv", "eff", &KernelCoefficients::conv_eff, 0.01, 1},
    {"conv", "winograd_ratio", &KernelCoefficients::winograd_ratio, 1, 16},
    {"conv", "winograd_passes", &KernelCoefficients::winograd_passes, 0, 100},
    {"conv", "fixed_seconds", &KernelCoefficients::conv_fixed_s, 0, 1e-2},
    {"stream", "hbm_eff", &KernelCoefficients::hbm_eff, 0.01, 1},
    {"stream", "gddr_eff", &KernelCoefficients::gddr_eff, 0.01, 1},
    {"stream", "flop_eff", &KernelCoefficients::stream_flop_eff, 0.01, 1},
    {"rows", "softmax_extra_pass", &KernelCoefficients::softmax_extra_pass, 0, 100},
    {"rows", "ln_extra_pass", &KernelCoefficients::ln_extra_pass, 0, 100},
    {"rows", "rows_per_sm", &KernelCoefficients::rows_per_sm, 0.01, 1e4},
    {"rows", "rows_in_flight_per_sm", &KernelCoefficients::rows_in_flight_per_sm, 0.1, 1e4},
    {"evaluation", "overlap_k", &KernelCoefficients::overlap_k, 0.5, 100},
    {"evaluation", "overlap_k_rows", &KernelCoefficients::overlap_k_rows, 0.5, 100},
    {"evaluation", "overlap_k_gemm", &KernelCoefficients::overlap_k_gemm, 0.5, 100},
    {"evaluation", "overlap_k_conv", &KernelCoefficients::overlap_k_conv, 0.5, 100},
};

const char* const kSections[] = {"gemm", "tensor", "attention", "launch",    "power",
                                 "conv", "stream", "rows",      "evaluation"};

}  // namespace

KernelCoefficients parse_kernel_coefficients(const std::string& yaml_text,
                                             const std::string& origin) {
  YAML::Node root = load_yaml_text(yaml_text, origin);
  if (!root || !root.IsMap()) throw InputError(origin + ": expected a mapping of coefficients");
  YamlMap top(root, origin);
  KernelCoefficients c;
  if (top.has("sources")) c.sources = top.str_list("sources");
  for (const char* section : kSections) {
    if (!top.has(section)) top.fail(section, "is missing (every section of the file is required)");
    YamlMap m = top.map(section);
    std::vector<std::string> keys;
    for (const Field& f : kFields) {
      if (std::string(f.section) != section) continue;
      if (!m.has(f.key)) m.fail(f.key, "is missing");
      double v = m.number(f.key, 0);
      if (!(v >= f.min && v <= f.max)) {
        char range[96];
        std::snprintf(range, sizeof range, "must be between %g and %g", f.min, f.max);
        m.fail(f.key, range);
      }
      c.*f.value = v;
    }
    m.reject_unknown_keys();
  }
  top.reject_unknown_keys();
  return c;
}

KernelCoefficients load_kernel_coefficients(const std::string& path) {
  return parse_kernel_coefficients(read_input_file(path, "kernel coefficients"), path);
}

std::string kernel_coefficients_yaml(const KernelCoefficients& c) {
  std::string out = "sources:\n";
  for (const auto& s : c.sources) {
    std::string q;
    for (char ch : s) q += (ch == '"' ? std::string("\\\"") : std::string(1, ch));
    out += "  - \"" + q + "\"\n";
  }
  for (const char* section : kSections) {
    out += std::string(section) + ":\n";
    for (const Field& f : kFields) {
      if (std::string(f.section) != section) continue;
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.17g", c.*f.value);
      out += std::string("  ") + f.key + ": " + buf + "\n";
    }
  }
  return out;
}

const KernelCoefficients& shipped_kernel_coefficients() {
  static const KernelCoefficients c = [] {
    const auto& files = embedded_files("kernel_models");
    auto it = files.find("coefficients");
    if (it == files.end()) return KernelCoefficients();
    return parse_kernel_coefficients(it->second, "models/kernel/coefficients.yaml");
  }();
  return c;
}

}  // namespace orrery
