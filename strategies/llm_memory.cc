#include "strategies/llm_memory.h"

#include <algorithm>
#include <cstdio>

#include "common/errors.h"
#include "strategies/llm_precision.h"
#include "strategies/pipeline_schedule.h"

namespace orrery {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

double peak_of(const std::vector<MemoryBreakdown>& stages, int* at) {
  double peak = 0;
  for (const auto& s : stages)
    if (s.total() > peak) {
      peak = s.total();
      *at = s.stage;
    }
  return peak;
}

}  // namespace

std::string format_gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", bytes / kGiB);
  return buf;
}

BytesPerParameter bytes_per_parameter(Precision p, bool any_layout_fp8) {
  if (p == Precision::kFp32) return {4, 4, 8};
  const LowPrecision low = low_precision(p, any_layout_fp8);
  if (!low.active()) return {2, 2, 12};
  return {2, 2, 12, (low.transposed_copy ? 2 : 1) * low.element_bytes()};
}

LayerShare layer_share(const LlmConfig& m, const ParallelPlan& plan) {
  const LlmParams params = llm_params(m);
  const double t = plan.tp, mlp = m.mlp_share(), moe = m.moe_share();
  LayerShare out;
  out.dense =
      params.attention / t + params.norms +
      mlp * (moe * (params.router + params.expert * static_cast<double>(m.shared_experts) / t) +
             (1 - moe) * params.dense_mlp / t);
  out.experts =
      mlp * moe * params.expert * static_cast<double>(m.experts / plan.ep) / plan.expert_tp();
  return out;
}

double lora_layer_parameters(const LlmConfig& m, const ParallelPlan& plan) {
  if (plan.lora_rank <= 0) return 0;
  const double r = plan.lora_rank, t = plan.tp, h = static_cast<double>(m.hidden);
  const double q = static_cast<double>(m.q_width());
  const double kv = static_cast<double>(m.kv_heads * m.head_dim());
  const double attention = r * (h + (q + 2 * kv) / t) + r * (q / t + h);
  auto mlp = [&](double f) { return r * (h + (m.gated_mlp ? 2 : 1) * f / t) + r * (f / t + h); };
  const double moe = m.moe_share();
  const double experts =
      static_cast<double>(m.experts / plan.ep + m.shared_experts) * mlp(static_cast<double>(m.ffn));
  const double dense = mlp(static_cast<double>(m.dense_ffn > 0 ? m.dense_ffn : m.ffn));
  return m.attention_share() * attention +
         m.mlp_share() * (m.moe() ? moe * experts + (1 - moe) * dense : dense);
}

double layer_linear_parameters(const LlmConfig& m, const ParallelPlan& plan) {
  const LayerShare share = layer_share(m, plan);
  return share.dense + share.experts - llm_params(m).norms;
}

double layer_activation_bytes(const LlmConfig& m, const ParallelPlan& plan) {
  const double s = static_cast<double>(plan.sequence(m)) / plan.cp;  // this GPU's tokens
  const double s_all = static_cast<double>(plan.sequence(m));
  const double b = plan.micro_batch, h = static_cast<double>(m.hidden);
  const double f = static_cast<double>(m.ffn), a = static_cast<double>(m.heads);
  // Q's width, and K's and V's, over h: 1 and kv_heads / heads unless the config sets a head
  // width of its own.
  const double qw = static_cast<double>(m.q_width()) / h;
  const double g = static_cast<double>(m.kv_heads * m.head_dim()) / h;
  const double t = plan.tp;
  const double outside_tp = plan.sequence_parallel ? t : 1.0;
  if (plan.recompute == Recompute::kFull && plan.recompute_layers == 0)
    return 2 * s * b * h / outside_tp;
  // Bytes per element of a linear layer's saved input: 2 in bf16, the recipe's one copy else.
  const LowPrecision low = low_precision(plan.precision);
  const double in = low.active() ? low.element_bytes() : 2.0;
  // Outside the tensor-parallel regions: the two norms' inputs (2sbh each), the inputs of the
  // QKV and first MLP GEMMs (2sbh each in bf16) and, for models trained with dropout, two
  // dropout masks (sbh each).
  const bool selective = plan.recompute == Recompute::kSelective;
  auto recomputed = [&](unsigned module) { return selective && (plan.recompute_modules & module); };
  // Recomputing the norms drops their outputs, the projections' inputs.
  const double replicated =
      ((m.dropout ? 6 : 4) + (recomputed(kRecomputeNorm) ? 0.0 : 2 * in)) * s * b * h;
  // Inside: Q, K and V (2sbh qw, 2sbh g each), the output projection's input (2sbh qw in bf16); the
  // MLP's activation input and output (2sbf each, the output the second GEMM's input), or for
  // SwiGLU the gate and up outputs and their product (6sbf, the product the GEMM's input). A
  // token's MLP runs in top_k experts.
  // MoE layers: the routed and shared experts' (dense layers' MLPs by their share).
  // Recomputing the activation drops its output (the second GEMM's input); the whole MLP, all.
  const double per_width =
      recomputed(kRecomputeMlp)
          ? 0.0
          : ((m.gated_mlp ? 4 : 2) + (recomputed(kRecomputeActivation) ? 0.0 : in)) * s * b;
  double mlp = per_width * f;
  if (m.moe())
    mlp = m.moe_share() * mlp * static_cast<double>(m.top_k + m.shared_experts) +
          (1 - m.moe_share()) * per_width *
              static_cast<double>(m.dense_ffn > 0 ? m.dense_ffn : m.ffn);
  mlp *= m.mlp_share();
  // A Mamba-2 mixer keeps its input projection's output, the convolution's, the scan's output
  // and the gated norm's (Nemotron-H's layers by their share).
  const double di = static_cast<double>(m.mamba_inner()),
               gn = static_cast<double>(m.ssm_groups * m.ssm_state);
  const double mamba =
      2 * s * b * (2 * di + 2 * gn + static_cast<double>(m.mamba_heads) + di + 2 * gn + 2 * di);
  const double share = m.attention_share();
  // MLA's up-projections recomputed: the latents (and the rotary key) kept, not Q, K and V.
  double qkv = 2 * qw + 4 * g;
  if (recomputed(kRecomputeMlaUpProj) && m.mla())
    qkv = 2.0 * static_cast<double>(m.q_lora_rank + m.kv_lora_rank + m.qk_rope_dim) / h;
  const double split = share * (qkv + in * qw) * s * b * h + (1 - share) * mamba + mlp;
  // The attention core: softmax output and its dropout mask and output (5 a s^2 b); with flash
  // attention only the softmax statistics (fp32 per row). Recomputed under selective.
  double core = share * (plan.flash_attention ? 4 * a * s * b : 5 * a * s * s_all * b);
  if (recomputed(kRecomputeCoreAttention)) core = 0;
  return replicated / outside_tp + (split + core) / t;
}

std::vector<MemoryBreakdown> llm_memory(const LlmConfig& m, const ParallelPlan& plan,
                                        const MemoryOptions& opt) {
  const LlmParams params = llm_params(m);
  BytesPerParameter per = bytes_per_parameter(plan.precision, opt.any_layout_fp8);
  if (opt.fp32_grads) per.gradients = 4;
  const double t = plan.tp, h = static_cast<double>(m.hidden);
  const double v = static_cast<double>(plan.padded_vocab(m));
  const double s = static_cast<double>(plan.sequence(m)) / plan.cp;
  const double b = plan.micro_batch;
  const int pp = plan.pp;
  const int micro = plan.micro_batches();
  const double dense_shards = static_cast<double>(plan.dp) * plan.cp;
  // Replicas holding the same experts: dp x cp / ep, or folded, tp x dp x cp / (ep x etp).
  const double expert_shards = plan.folded_experts() ? static_cast<double>(plan.tp) * dense_shards /
                                                           (plan.ep * plan.expert_tp())
                                                     : dense_shards / plan.ep;
  // A chunk of n layers: the first recompute_layers of them keep their input alone (the
  // others all they need), the first offload_layers keep nothing on the GPU.
  const double act_layer = layer_activation_bytes(m, plan);
  ParallelPlan unrecomputed = plan;
  unrecomputed.recompute = Recompute::kNone;
  const double act_full = layer_activation_bytes(m, unrecomputed);
  const double act_input = 2 * s * b * h / (plan.sequence_parallel ? t : 1.0);
  const auto chunk_bytes = [&](int n) {
    const int offloaded = std::min(n, plan.offload_layers);
    if (plan.recompute == Recompute::kFull && plan.recompute_layers > 0) {
      double bytes = 0;
      for (int l = offloaded; l < n; ++l) bytes += l < plan.recompute_layers ? act_input : act_full;
      return bytes;
    }
    return (n - offloaded) * act_layer;
  };
  const std::vector<int> layers = stage_layers(plan, m);
  const std::vector<std::vector<int>> chunks = chunk_layers(plan, m);
  const std::vector<std::vector<PipelinePass>> orders = pipeline_schedule(plan, micro, chunks);
  std::vector<bool> embedding_at(pp, false), head_at(pp, false);
  for (int mb : {0, micro - 1}) {
    const std::vector<ChunkPlace> path = pipeline_path(plan, mb, micro);
    embedding_at[path.front().stage] = true;
    head_at[path.back().stage] = true;
  }

  std::vector<MemoryBreakdown> out;
  const LayerShare share = layer_share(m, plan);  // one average layer on one GPU
  for (int st = 0; st < pp; ++st) {
    MemoryBreakdown mb;
    mb.stage = st;
    mb.layers = layers[st];
    const double l = layers[st];
    // This GPU's share: attention split by TP, norms and the router replicated, its ep share of
    // the experts split by TP; the vocabulary-parallel embedding on the stage of the model's
    // first piece, the head on the stage of its last (a tied head keeps a copy there when the
    // stages differ; ZB-V holds both on the first stage, DualPipe both on the two end ones).
    double dense = l * share.dense;
    double experts = l * share.experts;
    if (embedding_at[st]) {
      dense += v * h / t;
      if (m.learned_positions) dense += static_cast<double>(m.seq_len) * h;
    }
    if (head_at[st]) {
      if (!m.tied_embeddings || !embedding_at[st]) dense += v * h / t;
      dense += params.norms / 2;  // the final norm
    }
    mb.parameters = dense + experts;
    mb.trainable = mb.parameters;
    auto sharded = [&](double bytes_per, bool shard) {
      return bytes_per * (shard ? dense / dense_shards + experts / expert_shards : dense + experts);
    };
    mb.weights = sharded(per.weights, plan.zero >= 3);
    if (plan.lora_rank > 0) {
      // Frozen base weights in 16 bits; the adapters train (ZeRO shards them like dense ones).
      const double adapters = l * lora_layer_parameters(m, plan);
      mb.trainable = adapters;
      const double shards = dense_shards;
      mb.weights += adapters * per.weights / (plan.zero >= 3 ? shards : 1.0);
      mb.gradients = adapters * per.gradients / (plan.zero >= 2 ? shards : 1.0);
      mb.optimizer = adapters * per.optimizer / (plan.zero >= 1 ? shards : 1.0);
    }
    if (per.quantized > 0) {
      const double linear = l * layer_linear_parameters(m, plan);
      mb.weights += per.quantized * (plan.zero >= 3 ? linear / dense_shards : linear);
    }
    if (plan.lora_rank <= 0) {
      mb.gradients = sharded(per.gradients, plan.zero >= 2);
      mb.optimizer = sharded(per.optimizer, plan.zero >= 1);
    }
    if (plan.offload_optimizer) mb.optimizer = 0;  // in host memory

    // Activations held at the stage's peak, walking its schedule (strategies/
    // pipeline_schedule.h): under 1F1B the stage's distance from the end of the pipeline (the
    // first stage holds pp micro-batches), under GPipe all of them, interleaved Megatron's
    // warm-up of (pp - stage - 1) x 2 + (v - 1) x pp chunks plus one; the last piece's logits
    // kept in fp32 for the vocabulary-parallel cross entropy with each of its passes.
    const HeldPeak held =
        held_activation_peak(plan, st, orders[st], chunks, micro, chunk_bytes, 4 * s * b * v / t);
    mb.in_flight = held.passes;
    mb.activations = held.bytes;

    if (plan.zero >= 3)
      mb.buffers += 2 * per.weights * (share.dense + share.experts);
    else if (dense_shards > 1)
      mb.buffers += 2 * opt.bucket_bytes;
    if (m.moe())  // all-to-all dispatch and combine of one layer's routed tokens
      mb.buffers += 2 * 2 * s * b * h * static_cast<double>(m.top_k) * plan.routed_factor() /
                    (plan.folded_experts() ? plan.tp : 1);
    mb.reserved = opt.reserved_bytes;
    mb.fragmentation = opt.fragmentation * (mb.activations + mb.buffers);
    out.push_back(mb);
  }
  return out;
}

std::string MemoryVerdict::message() const {
  if (fits) return "fits: " + format_gib(peak) + " of " + format_gib(capacity) + " GiB";
  std::string s = "out of memory: needs " + format_gib(peak) + " GiB of " + format_gib(capacity) +
                  " (over by " + format_gib(peak - capacity) + ")";
  if (would_fit.empty()) return s + "; no single change of recomputation, ZeRO or micro-batch fits";
  s += "; would fit with ";
  for (size_t i = 0; i < would_fit.size(); ++i) s += (i ? ", or " : "") + would_fit[i];
  return s;
}

MemoryVerdict check_memory(const LlmConfig& m, const ParallelPlan& plan, double capacity,
                           const MemoryOptions& opt) {
  MemoryVerdict v;
  v.capacity = capacity;
  v.peak = peak_of(llm_memory(m, plan, opt), &v.peak_stage);
  v.fits = v.peak <= capacity;
  if (v.fits) return v;
  // Single changes, the cheapest in compute first.
  std::vector<std::pair<std::string, ParallelPlan>> tries;
  auto with = [&](const std::string& label, auto change) {
    ParallelPlan p = plan;
    change(p);
    tries.push_back({label, p});
  };
  if (plan.recompute == Recompute::kNone)
    with("recompute: selective", [](ParallelPlan& p) { p.recompute = Recompute::kSelective; });
  if (plan.recompute != Recompute::kFull &&
      (plan.recompute != Recompute::kSelective ||
       plan.recompute_modules != (kRecomputeCoreAttention | kRecomputeActivation | kRecomputeNorm)))
    with("recompute_modules: [core_attn, moe_act, layernorm]", [](ParallelPlan& p) {
      p.recompute = Recompute::kSelective;
      p.recompute_modules = kRecomputeCoreAttention | kRecomputeActivation | kRecomputeNorm;
    });
  if (plan.tp > 1 && !plan.sequence_parallel)
    with("sequence_parallel: true", [](ParallelPlan& p) { p.sequence_parallel = true; });
  for (int z = plan.zero + 1; z <= 3; ++z)
    with("zero: " + std::to_string(z), [z](ParallelPlan& p) { p.zero = z; });
  if (plan.recompute != Recompute::kFull) {
    // Offloading every layer's activations but what each chunk needs first: half, then all.
    int most = 0;
    for (const auto& stage : chunk_layers(plan, m))
      for (int n : stage) most = std::max(most, n);
    for (int n : {most / 2, most})
      if (n > plan.offload_layers)
        with("offload_activations: " + std::to_string(n),
             [n](ParallelPlan& p) { p.offload_layers = n; });
  }
  for (int mbs = plan.micro_batch / 2; mbs >= 1; mbs /= 2)
    with("micro_batch: " + std::to_string(mbs), [mbs](ParallelPlan& p) { p.micro_batch = mbs; });
  if (plan.recompute != Recompute::kFull)
    with("recompute: full", [](ParallelPlan& p) { p.recompute = Recompute::kFull; });
  for (const auto& [label, p] : tries) {
    if (v.would_fit.size() == 3) break;
    // One suggestion per key: the cheapest that fits.
    const std::string key = label.substr(0, label.find(':'));
    bool listed = false;
    for (const auto& f : v.would_fit) listed = listed || f.substr(0, f.find(':')) == key;
    if (listed) continue;
    try {
      check_parallel_plan(p, m, 0, "plan");
    } catch (const InputError&) {
      continue;
    }
    int at = 0;
    if (peak_of(llm_memory(m, p, opt), &at) <= capacity) v.would_fit.push_back(label);
  }
  return v;
}

}  // namespace orrery
