// `orrery cost`: the price of one op, or of every row of a CSV, on a device, without a scenario
// (workloads/op_query.h names the ops and their fields, models/cost_table.h prices a CSV).
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "common/atomic_file.h"
#include "common/errors.h"
#include "common/input_file.h"
#include "common/input_limits.h"
#include "common/quantile.h"
#include "common/suggest.h"
#include "common/units.h"
#include "models/cost_model.h"
#include "models/cost_table.h"
#include "platforms/device_spec.h"
#include "workloads/attention_impl.h"
#include "workloads/op_query.h"

namespace orrery {
namespace {

struct CostArgs {
  std::string op;
  std::vector<std::string> fields;  // KEY=VALUE
  std::string device = "V100-SXM2";
  std::string dtype = "fp32";
  std::string csv;
  std::string output;
  std::string model = "kernel";
  std::string coefficients;
  std::string impl;   // attention kernel
  bool json = false;  // one op: the price as one line of JSON
  bool device_given = false;
  bool dtype_given = false;
};

DType parse_dtype_flag(const std::string& text) {
  DType t;
  if (!parse_dtype(text, &t))
    throw InputError("--dtype: expected " + dtype_names() + ", got \"" + text + "\"");
  return t;
}

// "13.42 GFLOP": the op's work with an SI prefix.
std::string flop_text(double flops) {
  const char* prefixes[] = {"", "K", "M", "G", "T", "P", "E"};
  int i = 0;
  while (flops >= 1000 && i < 6) {
    flops /= 1000;
    ++i;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g %sFLOP", flops, prefixes[i]);
  return buf;
}

std::string percent(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", 100 * v);
  return buf;
}

// Names here are Orrery's own (ops, devices, dtypes, kernel models): no character needs escaping
// but a quote or a backslash, which a device file could hold.
std::string json_quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// `cost --json`: the price for programs (`orrery accuracy` reads it).
void print_json(const CostArgs& a, const DeviceSpec& dev, const ModelOp& op, const OpEstimate& e,
                const CostModel& cost) {
  const RooflineParts p = cost.roofline_parts(op, dev);
  const auto k =
      e.source == EstimateSource::kKernelModel ? cost.kernel_estimate(op, dev) : std::nullopt;
  std::string tile;
  if (k && k->gemm.tile_m > 0)
    tile = std::to_string(k->gemm.tile_m) + "x" + std::to_string(k->gemm.tile_n);
  std::printf(
      "{\"op\": %s, \"device\": %s, \"dtype\": %s, \"seconds\": %.17g, \"flops\": %.17g, "
      "\"bytes\": %.17g, \"source\": %s, \"kernel\": %s, \"tile\": %s, \"tensor_cores\": %s}\n",
      json_quoted(a.op).c_str(), json_quoted(dev.name).c_str(),
      json_quoted(dtype_name(op.dtype)).c_str(), e.seconds, p.flops, p.bytes,
      json_quoted(estimate_source_name(e.source)).c_str(), json_quoted(k ? k->model : "").c_str(),
      json_quoted(tile).c_str(),
      (k ? k->mode.tensor_cores : p.mode.tensor_cores) ? "true" : "false");
}

int one_op(const CostArgs& a, const CostModel& cost) {
  std::map<std::string, std::string> fields;
  std::string shape;
  for (const auto& f : a.fields) {
    auto eq = f.find('=');
    if (eq == std::string::npos || eq == 0)
      throw InputError("cost " + a.op + ": \"" + f + "\": expected KEY=VALUE (" + a.op + " takes " +
                       join_names(query_fields(a.op)) + ")");
    fields[f.substr(0, eq)] = f.substr(eq + 1);
    shape += " " + f;
  }
  if (!a.impl.empty()) {
    if (a.op != "attention" && a.op != "attention_bwd")
      throw InputError("cost " + a.op + ": --impl applies to attention and attention_bwd");
    if (fields.count("impl") && fields["impl"] != a.impl)
      throw InputError("cost " + a.op + ": impl=" + fields["impl"] + " and --impl " + a.impl +
                       " disagree");
    fields["impl"] = a.impl;
    shape += " --impl " + a.impl;
  }
  const std::vector<std::string> known = query_fields(a.op);
  for (const auto& [k, v] : fields)
    if (std::find(known.begin(), known.end(), k) == known.end() && known.front() != "in")
      throw InputError("cost " + a.op + ": unknown field \"" + k + "\"" + did_you_mean(k, known) +
                       " (" + a.op + " takes " + join_names(known) + ")");
  const DeviceSpec dev = device_spec(a.device);
  std::string fallback;
  const ModelOp op = op_on_device(query_op(a.op, fields, parse_dtype_flag(a.dtype), "cost " + a.op),
                                  dev, &fallback);
  const OpEstimate e = cost.estimate(op, dev);
  if (a.json) {
    print_json(a, dev, op, e, cost);
    return 0;
  }
  std::printf("%s%s on %s, %s\n", a.op.c_str(), shape.c_str(), dev.name.c_str(), a.dtype.c_str());
  if (!fallback.empty())
    std::printf("  note       priced in %s: %s\n", dtype_name(op.dtype), fallback.c_str());
  std::printf("  time       %s  (%s%s%s)\n", format_time(e.seconds).c_str(),
              estimate_source_name(e.source), e.detail.empty() ? "" : ": ", e.detail.c_str());
  const RooflineParts p = cost.roofline_parts(op, dev);
  std::printf("  work       %s, %s moved\n", flop_text(p.flops).c_str(),
              format_size(p.bytes).c_str());
  const auto k =
      e.source == EstimateSource::kKernelModel ? cost.kernel_estimate(op, dev) : std::nullopt;
  if (k) {
    std::printf(
        "  precision  %s on %s, peak %s\n", dtype_name(k->mode.dtype),
        k->mode.tensor_cores ? "Tensor Cores" : "CUDA cores",
        format_quantity(dev.peak_flops(k->mode.dtype, k->mode.tensor_cores), Quantity::kFlopRate)
            .c_str());
    if (!k->mode.tensor_cores && sustained_fp32(dev, cost.coefficients()) < dev.fp32)
      std::printf(
          "  power cap  FP32 pipes sustain %s at %.0f W\n",
          format_quantity(sustained_fp32(dev, cost.coefficients()), Quantity::kFlopRate).c_str(),
          dev.tdp_w);
    std::printf("  kernel     %s\n", k->model.c_str());
    if (k->gemm.tile_m > 0) {
      const GemmPlan& g = k->gemm;
      std::printf(
          "  tiles      %dx%d, split-K %d: %.0f thread blocks, %d per SM, %.0f wave%s of %d SMs\n",
          g.tile_m, g.tile_n, g.split_k, g.tiles, g.tiles_per_sm, g.waves, g.waves == 1 ? "" : "s",
          dev.sms);
      std::printf("  compute    %s\n", format_time(g.compute_s).c_str());
      std::printf("  memory     %s\n", format_time(g.memory_s).c_str());
      if (g.split_k > 1) std::printf("  reduce     %s\n", format_time(g.reduce_s).c_str());
    }
    std::printf("  bound      %s\n", k->memory_bound ? "memory" : "compute");
    std::printf("  roofline   %s at %s of peak (cost_model: roofline)\n",
                format_time(p.time.seconds).c_str(), percent(p.efficiency).c_str());
    return 0;
  }
  std::printf("  precision  %s on %s, peak %s\n", dtype_name(p.mode.dtype),
              p.mode.tensor_cores ? "Tensor Cores" : "CUDA cores",
              format_quantity(p.peak_flops, Quantity::kFlopRate).c_str());
  std::printf("  compute    %s at %s of peak\n", format_time(p.time.compute_s).c_str(),
              percent(p.efficiency).c_str());
  std::printf("  memory     %s at %s of %s\n", format_time(p.time.memory_s).c_str(),
              percent(p.efficiency).c_str(), format_bandwidth(dev.mem_bw).c_str());
  std::printf("  bound      %s\n", p.time.memory_bound ? "memory" : "compute");
  return 0;
}

int table(const CostArgs& a, const CostModel& cost) {
  CostTableOptions opt;
  if (a.device_given) opt.device = a.device;
  opt.dtype = parse_dtype_flag(a.dtype);
  if (!a.output.empty() && a.output != "-") {
    require_not_input(a.output, "-o", {a.csv});
    require_replaceable(a.output, "-o", [](const std::string& p) {
      const std::string head = file_head(p, 4096);
      const std::string first = head.substr(0, head.find('\n'));
      return first.size() >= 13 && first.compare(first.size() - 13, 13, ",predicted_ms") == 0;
    });
  }
  const CostTable t = price_cost_table(read_input_file(a.csv, "ops CSV"), a.csv, opt, cost);
  if (a.output.empty() || a.output == "-") {
    std::cout << t.csv;
  } else {
    write_atomically(a.output, [&](const std::string& tmp) {
      std::ofstream out(tmp);
      if (!out) throw std::runtime_error("cannot create " + tmp);
      out << t.csv;
      out.close();
      if (!out) throw std::runtime_error("write failed");
    });
    std::fprintf(stderr, "orrery: %zu rows priced into %s\n", t.rows, a.output.c_str());
  }
  for (const auto& note : t.notes) std::fprintf(stderr, "orrery: %s\n", note.c_str());
  if (a.dtype_given && t.default_dtype_rows < t.rows)
    std::fprintf(stderr, "orrery: --dtype %s priced %zu of %zu rows (the others give their own)\n",
                 a.dtype.c_str(), t.default_dtype_rows, t.rows);
  if (!t.relative_errors.empty()) {
    // Interpolated between order statistics (models/cost_table.h), so that a file of two rows
    // has their mean as its median.
    const std::vector<double>& e = t.relative_errors;
    std::fprintf(stderr,
                 "orrery: against latency_ms of %zu rows: median error %.1f%%, 90th percentile "
                 "%.1f%%\n",
                 e.size(), 100 * quantile(e, 0.5), 100 * quantile(e, 0.9));
  }
  return 0;
}

}  // namespace

void register_cost_commands(CLI::App& app, CommandList& out) {
  static CostArgs args;
  auto* cmd =
      app.add_subcommand("cost",
                         "Price one op, or every row of a CSV, on a device without a scenario: "
                         "orrery cost linear B=1 M=1024 N=2560 K=2560 --device H100");
  cmd->add_option("op", args.op,
                  "Op: bmm, linear, conv, softmax, ln, add, addu, mul, mulu, div, divu, pow, "
                  "powu, relu, gelu, tanh, or an op-graph type");
  cmd->add_option("fields", args.fields,
                  "Shape fields KEY=VALUE (linear: B M N K; conv: B in_channels out_channels "
                  "kernel_size input_size stride padding; softmax, ln, elementwise: B H; "
                  "op-graph types: in=64x1024;1024x512 out=64x512)");
  cmd->add_option("--device", args.device, "Device spec name or alias (orrery devices)")
      ->each([](const std::string&) { args.device_given = true; });
  cmd->add_option("--dtype", args.dtype,
                  "Element type of the op's tensors (" + dtype_names() +
                      "); with --csv, of the rows whose dtype column is absent or empty (a "
                      "row's own dtype wins). An fp8 or fp4 GEMM on a GPU without those Tensor "
                      "Cores is priced in bf16 (fp16 where faster), with a note")
      ->capture_default_str()
      ->each([](const std::string&) { args.dtype_given = true; });
  cmd->add_option("--impl", args.impl,
                  "attention, attention_bwd: the fused kernel (" + attention_impl_names() +
                      "; default auto, the fastest the GPU's libraries have). flash2 on Hopper "
                      "and datacenter Blackwell runs without their asynchronous Tensor Core "
                      "instructions; flash3 runs on Hopper only")
      ->check(CLI::IsMember(attention_impl_choices()));
  cmd->add_option("--csv", args.csv,
                  "Price every row of this CSV (columns op and the op's shape fields, as in the "
                  "measured kernel data; other columns pass through; `device` per row unless "
                  "--device, `dtype` per row over --dtype, `latency_ms` to compare against)");
  cmd->add_option("-o,--output", args.output, "With --csv: write here (default: stdout)");
  cmd->add_flag("--json", args.json,
                "One op: print its price as one line of JSON (op, device, dtype, seconds, flops, "
                "bytes, source, kernel, tile, tensor_cores)");
  cmd->add_option("--model", args.model,
                  "kernel: the kernel models fitted to measured kernels; roofline: "
                  "max(FLOPs/peak, bytes/bandwidth) at 70% (docs/cost-models.md)")
      ->check(CLI::IsMember({"kernel", "roofline"}))
      ->capture_default_str();
  cmd->add_option("--coefficients", args.coefficients,
                  "Kernel-model coefficients file (scripts/fit_kernel_models.py fit --out); "
                  "default: the shipped fit");
  out.push_back({cmd, [] {
                   if (args.csv.empty() == args.op.empty())
                     throw InputError("cost: give an op and its fields, or --csv FILE (not both)");
                   if (!args.impl.empty() && !args.csv.empty())
                     throw InputError("cost: --impl applies to one op; give a CSV an impl column");
                   if (!args.output.empty() && args.csv.empty())
                     throw InputError("cost: -o applies to --csv");
                   if (args.json && !args.csv.empty())
                     throw InputError("cost: --json prints one op; --csv prices a file as CSV");
                   CostModelOptions o;
                   parse_analytic_model(args.model, &o.model);  // CLI11 checked the name
                   if (!args.coefficients.empty())
                     o.kernel = std::make_shared<KernelCoefficients>(
                         load_kernel_coefficients(args.coefficients));
                   const CostModel cost(o);
                   return args.csv.empty() ? one_op(args, cost) : table(args, cost);
                 }});
}

}  // namespace orrery
