#include "scenario/llm_workload.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "common/errors.h"
#include "common/input_file.h"
#include "engine/graph_check.h"
#include "models/attention_support.h"
#include "models/cost_model.h"
#include "scenario/model_workload.h"
#include "strategies/framework.h"
#include "strategies/llm_memory.h"
#include "strategies/llm_plan_reader.h"
#include "strategies/llm_precision.h"
#include "strategies/llm_strategy.h"

namespace fs = std::filesystem;

namespace orrery {

LlmConfig read_llm_model(const YamlMap& w, const std::string& base_dir) {
  if (w.has("file")) {
    std::string file = w.required_str("file");
    if (!fs::path(file).is_absolute()) file = (fs::path(base_dir) / file).string();
    const fs::path path(file);
    // "llama-2-70b.json", or "llama-2-70b/config.json" as checkpoints lay it out.
    std::string name =
        path.stem() == "config" ? path.parent_path().filename().string() : path.stem().string();
    try {
      return read_llm_config(read_input_file(file, "model config"), file, name);
    } catch (const InputError& e) {
      w.fail("file", e.what());
    }
  }
  const std::string name = w.required_str("model");
  if (const LlmConfig* m = find_llm(name)) return *m;
  std::string known;
  for (const auto& m : llm_zoo()) known += (known.empty() ? "" : ", ") + m.name;
  w.fail("model", "unknown language model \"" + name + "\" (built in: " + known +
                      "; or give file: a config.json)");
}

double read_tokens(const YamlMap& w, const char* key) {
  if (!w.has(key)) return 0.0;
  const std::string text = w.str(key, "");
  double scale = 1.0;
  std::string digits = text;
  if (!digits.empty()) {
    switch (digits.back()) {
      case 'K':
        scale = 1e3;
        break;
      case 'M':
        scale = 1e6;
        break;
      case 'B':
        scale = 1e9;
        break;
      case 'T':
        scale = 1e12;
        break;
      default:
        break;
    }
    if (scale != 1.0) digits.pop_back();
  }
  char* end = nullptr;
  const double v = std::strtod(digits.c_str(), &end);
  if (digits.empty() || *end != '\0' || !(v > 0) || !(v * scale < 1e18))
    w.fail(key, "expected a positive token count such as 300e9, 300B or 2T, got \"" + text + "\"");
  return v * scale;
}

namespace {

// Every key of the workload and strategy, read and checked: the model, the plan and how it
// is simulated.
struct LlmSetup {
  LlmConfig model;
  FrameworkProfile framework;
  bool impl_from_framework = false;  // the attention kernel is the profile's, not the strategy's
  ParallelPlan plan;
  MemoryOptions memory;
  CollectiveOptions collectives;
  LlmBuildOptions build;
  double train_tokens = 0;
  bool host_launches = true;
};

LlmSetup read_llm_setup(const YamlMap& root, const YamlMap& w, int gpus,
                        const std::string& base_dir) {
  LlmSetup out;
  out.model = read_llm_model(w, base_dir);
  const YamlMap s = root.map("strategy");
  ParallelPlan& plan = out.plan;
  plan = read_llm_plan(w, s, &out.memory);
  // The framework's choices where the strategy makes none.
  const FrameworkProfile& fw = out.framework = scenario_framework(root, base_dir, true);
  if (!s.has("flash_attention")) plan.flash_attention = fw.flash_attention;
  if (!s.has("attention_impl") && plan.flash_attention) {
    plan.attention_impl = fw.attention;
    out.impl_from_framework = true;
  }
  if (!s.has("bucket") && fw.bucket_bytes >= 0) {
    plan.grad_bucket_bytes = fw.bucket_bytes;
    if (fw.bucket_bytes > 0) out.memory.bucket_bytes = fw.bucket_bytes;
  }
  if (!s.has("zero") && fw.zero >= 0) plan.zero = fw.zero;
  if (!s.has("tp_comm_overlap"))
    plan.tp_comm_overlap = fw.tp_comm_overlap && plan.sequence_parallel;
  if (!s.has("pp_sync")) plan.pp_sync = fw.pp_sync;
  out.memory.fp32_grads = fw.fp32_grads;
  if (!s.has("recompute") && !s.has("recompute_modules") && !fw.recompute.empty()) {
    parse_recompute(fw.recompute, &plan.recompute);
    if (!fw.recompute_modules.empty()) {
      plan.recompute_modules = 0;
      for (const std::string& name : fw.recompute_modules) {
        unsigned bit = 0;
        parse_recompute_module(name, &bit);
        plan.recompute_modules |= bit;
      }
    }
  }
  set_data_parallel(s, gpus, &plan);
  out.train_tokens = read_tokens(w, "train_tokens");
  if (plan.global_batch == 0) plan.global_batch = plan.micro_batch * plan.dp;
  const CollectiveOptions& collectives = out.collectives =
      read_collective_options(s.map("collectives"));
  LlmBuildOptions& build = out.build;
  const std::string replicas = s.str("replicas", "all");
  if (replicas != "all" && replicas != "one")
    s.fail("replicas",
           "expected all or one (replica 0 in full, the others in its data-parallel "
           "collectives only), got \"" +
               replicas + "\"");
  build.all_replicas = replicas == "all";
  const std::string tp_mode =
      s.str("tp_collectives", collectives.analytical ? "analytical" : "flow");
  if (tp_mode != "flow" && tp_mode != "analytical")
    s.fail("tp_collectives", "expected flow or analytical, got \"" + tp_mode + "\"");
  build.tp_analytical = tp_mode == "analytical";
  // TP rank 0 of each group with the others as its mirrors (llm_strategy.h).
  build.one_tp_rank = one_tp_rank_applies(plan, build.tp_analytical, collectives.analytical);
  // The host's kernel launches (frameworks.md); false: as if the step were captured as CUDA
  // graphs whatever the framework.
  out.host_launches = s.boolean("host_overheads", true);
  w.reject_unknown_keys();
  s.reject_unknown_keys();
  check_parallel_plan(plan, out.model, gpus, plan_key_where(w, s));
  return out;
}

// The plan as `device` runs it (plan_on_device; `why` gets the reason of a fallback) and its
// memory verdict on the device: its capacity and its FP8 layouts.
// `stages`, when given, gets each pipeline stage's bytes, the first stage first.
MemoryVerdict memory_on_device(const LlmSetup& setup, const DeviceSpec& device, ParallelPlan* plan,
                               std::string* why, std::vector<double>* stages = nullptr) {
  *plan = plan_on_device(setup.plan, device, why);
  // A library picks another attention backend where the profile's cannot run (PyTorch's
  // FlashAttention-2 on a V100); one the strategy names is checked when it is priced.
  if (setup.impl_from_framework &&
      !attention_impl_unsupported(plan->attention_impl, device, precision_dtype(plan->precision))
           .empty())
    plan->attention_impl = AttentionImpl::kAuto;
  MemoryOptions memory = setup.memory;
  memory.any_layout_fp8 = any_layout_fp8(device);
  if (stages)
    for (const MemoryBreakdown& b : llm_memory(setup.model, *plan, memory))
      stages->push_back(b.total());
  return check_memory(setup.model, *plan, device.mem_bytes, memory);
}

}  // namespace

void check_llm_fits(const YamlMap& root, const YamlMap& w, const DeviceSpec& device, int gpus,
                    const std::string& base_dir) {
  const LlmSetup setup = read_llm_setup(root, w, gpus, base_dir);
  ParallelPlan plan;
  const MemoryVerdict v = memory_on_device(setup, device, &plan, nullptr);
  if (!v.fits) throw InfeasibleError(v.message());
}

LlmWorkload build_llm_workload(const YamlMap& root, const YamlMap& w, const ClusterLayout& layout,
                               const DeviceSpec& device, const std::string& base_dir) {
  const int gpus = static_cast<int>(layout.gpus.size());
  const LlmSetup setup = read_llm_setup(root, w, gpus, base_dir);
  const LlmConfig& model = setup.model;
  std::string fallback;
  ParallelPlan plan;
  std::vector<double> stage_memory;
  const MemoryVerdict v = memory_on_device(setup, device, &plan, &fallback, &stage_memory);
  const double train_tokens = setup.train_tokens;

  const CostModel cost(parse_cost_model(root, "cost_model", base_dir));
  const LlmCosts costs = price_llm(
      model, plan, [&](const ModelOp& op) { return cost.estimate(op, device).seconds; },
      [&] {
        LlmGpu g = llm_gpu(device, setup.framework);
        if (!setup.host_launches) g.kernel_host_s = 0;
        return g;
      }(),
      setup.framework);
  LlmWorkload out;
  out.framework = setup.framework.name;
  LlmStep step = build_llm_step(model, plan, layout.gpus, costs, setup.collectives, setup.build);
  check_graph(step.graph, root.origin() + ": workload");
  out.graph = std::move(step.graph);

  LlmRunInfo& info = out.info;
  info.tokens = step.tokens;
  info.model_flops = step.model_flops;
  info.gpus = gpus;
  info.train_tokens = train_tokens;
  info.parameters = llm_params(model).total;
  const BytesPerParameter per_parameter = bytes_per_parameter(plan.precision);
  info.checkpoint_bytes = info.parameters * (per_parameter.weights + per_parameter.optimizer);
  const LowPrecision low = low_precision(plan.precision);
  const DType peak = low.active() ? low.gemm : precision_dtype(plan.precision);
  info.peak_flops_per_gpu = device.peak_flops(peak, true);
  info.peak_precision = dtype_name(peak);
  info.peak_memory = v.peak;
  info.memory_capacity = v.capacity;
  info.stage_memory = std::move(stage_memory);
  info.plan = plan;
  info.fits = v.fits;
  info.memory = v.message();

  char line[512];
  std::snprintf(line, sizeof line,
                "%s (%.1fB parameters), %d x %d-token sequences per iteration on %d x %s: TP %d x "
                "PP %d x DP %d%s%s, %s, %d micro-batches of %d, ZeRO-%d, recompute %s, %s, %s; "
                "peak memory %s of %s",
                model.name.c_str(), llm_params(model).total / 1e9, plan.global_batch,
                static_cast<int>(plan.sequence(model)), gpus, device.name.c_str(), plan.tp, plan.pp,
                plan.dp, plan.cp > 1 ? (" x CP " + std::to_string(plan.cp)).c_str() : "",
                plan.ep > 1 ? (", EP " + std::to_string(plan.ep)).c_str() : "",
                pipeline_schedule_name(plan.schedule), plan.micro_batches(), plan.micro_batch,
                plan.zero, recompute_name(plan.recompute), precision_name(plan.precision),
                framework_label(setup.framework).c_str(), (format_gib(v.peak) + " GiB").c_str(),
                (format_gib(v.capacity) + " GiB").c_str());
  out.summary = line;
  if (plan.tp_comm_overlap && plan.tp >= 2 && (plan.cp > 1 || plan.ep > 1))
    out.summary +=
        "; tensor-parallel communication overlap is not modelled with context or expert "
        "parallelism: its collectives stay exposed";
  if (!fallback.empty())
    out.summary += std::string("; ") + precision_name(setup.plan.precision) +
                   " not used: " + fallback + ", priced in bf16";
  return out;
}

}  // namespace orrery
