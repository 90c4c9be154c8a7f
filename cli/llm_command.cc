// `orrery llm list` and `orrery llm memory`: the built-in language models, and what one GPU
// holds when a model trains under a parallel plan (strategies/llm_memory.h).
#include <cstdio>
#include <string>

#include "cli/commands.h"
#include "common/errors.h"
#include "common/input_file.h"
#include "platforms/device_spec.h"
#include "strategies/llm_memory.h"
#include "strategies/llm_precision.h"
#include "strategies/parallel_plan.h"
#include "workloads/llm_config.h"

namespace orrery {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

struct MemoryArgs {
  std::string model;
  ParallelPlan plan;
  std::string schedule = "1f1b";
  std::string recompute = "none";
  std::string precision = "bf16";
  bool no_flash = false;
  std::string device = "H100-SXM5";
  double reserved_gib = 1.0;
  double fragmentation = 0.05;
  bool fp32_grads = false;
  std::vector<std::string> recompute_modules;
  // -1: not given (the model's sequence; micro-batch x dp); given, at least 1.
  int64_t seq = -1;
  int64_t global_batch = -1;
};

// A built-in name, or a config.json file.
LlmConfig load_model(const std::string& arg) {
  if (const LlmConfig* m = find_llm(arg)) return *m;
  if (arg.size() > 5 && arg.compare(arg.size() - 5, 5, ".json") == 0) {
    std::string stem = arg.substr(arg.find_last_of('/') + 1);
    return read_llm_config(read_input_file(arg, "model config"), arg, stem);
  }
  std::string known;
  for (const auto& m : llm_zoo()) known += (known.empty() ? "" : ", ") + m.name;
  throw InputError("unknown model \"" + arg + "\" (built in: " + known +
                   "; or a Hugging Face config.json)");
}

std::string billions(double n) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fB", n / 1e9);
  return buf;
}

std::string describe(const LlmConfig& m) {
  const LlmParams p = llm_params(m);
  std::string s = m.name + ": " + billions(p.total) + " parameters";
  if (m.moe()) s += " (" + billions(p.active) + " per token)";
  s += ", " + std::to_string(m.layers) + " layers, hidden " + std::to_string(m.hidden) + ", " +
       std::to_string(m.heads) + " heads";
  if (m.kv_heads != m.heads) s += " (" + std::to_string(m.kv_heads) + " KV)";
  if (m.mla()) s += ", latent attention";
  if (m.mamba_layers > 0)
    s += " in " + std::to_string(m.layers - m.mamba_layers) + " of " + std::to_string(m.layers) +
         " mixers (the rest Mamba-2), " + std::to_string(m.mlp_layers) + " MLPs";
  const char* act = m.activation == "swiglu"  ? " (SwiGLU)"
                    : m.activation == "geglu" ? " (GeGLU)"
                    : m.activation == "relu2" ? " (squared ReLU)"
                                              : "";
  s += ", FFN " + std::to_string(m.ffn) + act;
  if (m.moe()) {
    s += " x " + std::to_string(m.experts) + " experts, top-" + std::to_string(m.top_k);
    if (m.shared_experts > 0) s += " + " + std::to_string(m.shared_experts) + " shared";
    if (m.dense_layers > 0)
      s += " (first " + std::to_string(m.dense_layers) + " layers dense, FFN " +
           std::to_string(m.dense_ffn) + ")";
  }
  if (m.mtp_layers > 0) s += ", " + std::to_string(m.mtp_layers) + " MTP module";
  s += ", vocabulary " + std::to_string(m.vocab) + ", " + std::to_string(m.seq_len) + " tokens";
  return s;
}

int list_models() {
  for (const auto& m : llm_zoo()) std::printf("%s\n", describe(m).c_str());
  return 0;
}

int memory(MemoryArgs a) {
  const LlmConfig m = load_model(a.model);
  if (!parse_pipeline_schedule(a.schedule, &a.plan.schedule))
    throw InputError("--schedule " + a.schedule + ": expected " + pipeline_schedule_choices());
  if (!parse_recompute(a.recompute, &a.plan.recompute))
    throw InputError("--recompute " + a.recompute + ": expected " + recompute_choices());
  if (!parse_precision(a.precision, &a.plan.precision))
    throw InputError("--precision " + a.precision + ": expected " + precision_choices());
  a.plan.flash_attention = !a.no_flash;
  if (!a.recompute_modules.empty()) {
    if (a.plan.recompute != Recompute::kSelective)
      throw InputError("--recompute-modules: needs --recompute selective");
    a.plan.recompute_modules = 0;
    for (const std::string& name : a.recompute_modules) {
      unsigned bit = 0;
      if (!parse_recompute_module(name, &bit))
        throw InputError("--recompute-modules " + name + ": expected " +
                         recompute_module_choices());
      a.plan.recompute_modules |= bit;
    }
  }
  if (!(a.fragmentation >= 0 && a.fragmentation <= 1))
    throw InputError("--fragmentation " + std::to_string(a.fragmentation) +
                     ": expected a share from 0 to 1");
  // 0 would read as "the default" in the plan (the model's sequence, micro-batch x dp).
  for (const auto& [option, value] :
       {std::pair<const char*, int64_t>{"--micro-batch", a.plan.micro_batch},
        {"--global-batch", a.global_batch == -1 ? 1 : a.global_batch},
        {"--seq", a.seq == -1 ? 1 : a.seq}})
    if (value < 1)
      throw InputError(std::string(option) + " " + std::to_string(value) + ": must be at least 1");
  if (a.seq > 0) a.plan.seq_len = a.seq;
  if (a.global_batch > 0) {
    if (a.global_batch > 1 << 30)
      throw InputError("--global-batch " + std::to_string(a.global_batch) + ": too large");
    a.plan.global_batch = static_cast<int>(a.global_batch);
  }
  // Finite too: "inf" parses as a double, and the verdict would need inf GiB.
  if (!(a.reserved_gib >= 0 && a.reserved_gib <= 1e6))
    throw InputError("--reserved " + std::to_string(a.reserved_gib) +
                     ": expected GiB between 0 and 1e6");
  check_parallel_plan(a.plan, m, 0, "plan");
  const DeviceSpec dev = device_spec(a.device);
  if (!(dev.mem_bytes > 0))
    throw InputError("device " + dev.name + " has no memory size in its spec");
  std::string fallback;
  a.plan = plan_on_device(a.plan, dev, &fallback);
  if (!fallback.empty())
    std::printf("Note       %s not used: %s; sized in bf16\n", a.precision.c_str(),
                fallback.c_str());
  MemoryOptions opt;
  opt.reserved_bytes = a.reserved_gib * kGiB;
  opt.fragmentation = a.fragmentation;
  opt.fp32_grads = a.fp32_grads;
  opt.any_layout_fp8 = any_layout_fp8(dev);
  const ParallelPlan& p = a.plan;
  std::printf("Model      %s\n", describe(m).c_str());
  std::printf(
      "Plan       TP %d x PP %d x DP %d x CP %d = %d GPUs%s%s; micro-batch %d x %d of %lld "
      "tokens; %s%s; ZeRO-%d; recompute %s; %s%s\n",
      p.tp, p.pp, p.dp, p.cp, p.gpus(), p.ep > 1 ? (", EP " + std::to_string(p.ep)).c_str() : "",
      p.sequence_parallel ? ", sequence parallel" : "", p.micro_batch, p.micro_batches(),
      static_cast<long long>(p.sequence(m)), pipeline_schedule_name(p.schedule),
      p.schedule == PipelineSchedule::kInterleaved
          ? (" over " + std::to_string(p.virtual_stages) + " chunks").c_str()
          : "",
      p.zero, recompute_name(p.recompute), precision_name(p.precision),
      p.flash_attention ? ", flash attention" : "");
  std::printf("Device     %s, %.1f GiB\n\n", dev.name.c_str(), dev.mem_bytes / kGiB);
  std::printf("%5s %6s %11s %9s %9s %9s %12s %9s %9s %9s %9s %9s\n", "stage", "layers",
              "params/GPU", "weights", "grads", "optimizer", "activations", "in flight", "buffers",
              "fragment.", "reserved", "total");
  for (const auto& s : llm_memory(m, p, opt))
    std::printf("%5d %6d %11s %9.2f %9.2f %9.2f %12.2f %9d %9.2f %9.2f %9.2f %9.2f\n", s.stage,
                s.layers, billions(s.parameters).c_str(), s.weights / kGiB, s.gradients / kGiB,
                s.optimizer / kGiB, s.activations / kGiB, s.in_flight, s.buffers / kGiB,
                s.fragmentation / kGiB, s.reserved / kGiB, s.total() / kGiB);
  std::printf("(GiB per GPU of each stage)\n\n");
  const MemoryVerdict v = check_memory(m, p, dev.mem_bytes, opt);
  std::printf("Verdict    stage %d: %s\n", v.peak_stage, v.message().c_str());
  return 0;
}

}  // namespace

void register_llm_commands(CLI::App& app, CommandList& out) {
  CLI::App* llm = app.add_subcommand(
      "llm", "Large language models: the built-in models, and per-GPU memory of a parallel plan");
  llm->require_subcommand(1);
  CLI::App* list = llm->add_subcommand("list", "The built-in models and their sizes");
  out.push_back({list, list_models});

  auto a = std::make_shared<MemoryArgs>();
  CLI::App* mem = llm->add_subcommand(
      "memory",
      "What one GPU holds training MODEL under a plan: weights, gradients, optimizer states, "
      "activations (Korthikanti et al., Reducing Activation Recomputation in Large Transformer "
      "Models), buffers, per pipeline stage, and whether it fits the device");
  mem->add_option("model", a->model, "A built-in model (orrery llm list) or a config.json")
      ->required();
  mem->add_option("--tp", a->plan.tp, "Tensor-parallel degree (default 1)");
  mem->add_option("--pp", a->plan.pp, "Pipeline stages (default 1)");
  mem->add_option("--dp", a->plan.dp, "Data-parallel replicas (default 1)");
  mem->add_option("--cp", a->plan.cp, "Context-parallel degree (default 1)");
  mem->add_option("--ep", a->plan.ep, "Expert-parallel degree, MoE models (default 1)");
  mem->add_option("--etp", a->plan.etp,
                  "Expert tensor parallelism: 1 folds whole experts over TP x DP (default: tp)");
  mem->add_option("--capacity-factor", a->plan.capacity_factor,
                  "MoE expert capacity over the even share of routed tokens (default: "
                  "token-dropless routing)")
      ->each([a](const std::string&) { a->plan.dropless = false; });
  mem->add_option(
      "--moe-imbalance", a->plan.moe_imbalance,
      "Dropless MoE: the busiest expert-parallel rank's tokens over the mean (default 1)");
  mem->add_flag("--sp", a->plan.sequence_parallel, "Megatron sequence parallelism (needs tp > 1)");
  mem->add_option("--micro-batch", a->plan.micro_batch, "Sequences per micro-batch (default 1)");
  mem->add_option("--global-batch", a->global_batch,
                  "Sequences per iteration (default: micro-batch x dp)");
  mem->add_option("--seq", a->seq, "Tokens per sequence (default: the model's)");
  mem->add_option("--schedule", a->schedule,
                  "Pipeline schedule: " + pipeline_schedule_choices() + " (default 1f1b)");
  mem->add_option("--virtual-stages", a->plan.virtual_stages,
                  "Model chunks per GPU for the interleaved schedule");
  mem->add_flag("--account-for-embedding-and-loss", a->plan.account_for_embedding_and_loss,
                "Count the embedding and the loss as pipeline layers (Megatron-LM's split)");
  mem->add_option("--zero", a->plan.zero, "ZeRO stage 0-3 (3 = FSDP full shard; default 0)");
  mem->add_option("--recompute", a->recompute, "none (default), selective or full");
  mem->add_option("--recompute-modules", a->recompute_modules,
                  "What selective recomputation recomputes: " + recompute_module_choices() +
                      " (default core_attn)");
  mem->add_option("--recompute-layers", a->plan.recompute_layers,
                  "Full recomputation of the first N layers of each chunk only");
  mem->add_option("--offload-activations", a->plan.offload_layers,
                  "Layers per chunk whose activations wait in host memory (default 0)");
  mem->add_flag("--offload-optimizer", a->plan.offload_optimizer,
                "FP32 master weights and Adam states in host memory (ZeRO-Offload)");
  mem->add_option("--lora-rank", a->plan.lora_rank,
                  "LoRA fine-tuning: frozen weights, adapters of this rank (default 0: all train)");
  mem->add_flag("--fp32-grads", a->fp32_grads,
                "Gradients accumulated in FP32 (Megatron-LM's main_grad buffers)");
  mem->add_option(
      "--fragmentation", a->fragmentation,
      "Share of activations and buffers lost to allocator fragmentation (default 0.05)");
  mem->add_option("--precision", a->precision,
                  "bf16 (default), fp16, fp32, or bf16 with fp8, fp8-cs, mxfp8 or nvfp4 GEMMs");
  mem->add_flag("--no-flash", a->no_flash, "Materialize the attention scores (no flash attention)");
  mem->add_option("--device", a->device, "GPU (orrery devices; default H100-SXM5)");
  mem->add_option(
      "--reserved", a->reserved_gib,
      "GiB each GPU holds outside the model: CUDA context, workspaces, NCCL (default 1)");
  out.push_back({mem, [a] { return memory(*a); }});
}

}  // namespace orrery
