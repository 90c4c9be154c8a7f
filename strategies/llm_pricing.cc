#include "strategies/llm_pricing.h"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <map>
#include <string>

#include "strategies/llm_memory.h"
#include "strategies/llm_precision.h"
#include "workloads/op_query.h"

namespace orrery {
namespace {

std::string n(double v) { return std::to_string(static_cast<int64_t>(v)); }

class Pricer {
 public:
  // `fused_quantize`: the kernel before each GEMM writes its FP8 / FP4 input (Transformer
  // Engine's norm and activation kernels), so quantizing adds bytes but no kernel launch.
  Pricer(const OpPricer& price, DType dtype, const LowPrecision& low, bool fused_quantize)
      : price_(price), dtype_(dtype), low_(low), fused_quantize_(fused_quantize) {}

  // One element-wise kernel of an eager decomposition over `elems` elements, reading and
  // writing `bytes_per_elem` bytes for each.
  void pass(BlockCost* into, double elems, double bytes_per_elem) {
    if (elems < 1) return;
    ModelOp k;
    k.type = "mul";
    k.dtype = DType::kFP32;
    k.inputs = {Shape{static_cast<int64_t>(elems)}};
    k.output = k.inputs[0];
    k.flops = elems;
    k.bytes = elems * bytes_per_elem;
    add(into, k);
  }
  void passes(BlockCost* into, double elems, std::initializer_list<double> bytes_per_elem) {
    for (double b : bytes_per_elem) pass(into, elems, b);
  }

  void op(BlockCost* into, const std::string& type, const std::map<std::string, std::string>& f,
          DType dtype) {
    add(into, query_op(type, f, dtype, "llm " + type));
  }
  void op(BlockCost* into, const std::string& type, const std::map<std::string, std::string>& f) {
    op(into, type, f, dtype_);
  }
  // `share` of an op: the average over layers of which only that share run it.
  void op(BlockCost* into, const std::string& type, const std::map<std::string, std::string>& f,
          double share) {
    BlockCost one;
    op(&one, type, f);
    *into += one * share;
  }
  // [M, K] x [K, N]; backward: dX = dY W^T ([M, N] x [N, K]) and dW = X^T dY ([K, M] x [M, N]).
  void linear(BlockCost* fwd, BlockCost* bwd, double m, double k, double nn) {
    gemms(fwd, bwd, m, k, nn, dtype_);
  }
  // A linear layer of a transformer block: its three GEMMs in the recipe's type when there is
  // one, after quantizing the input (forward) and the output's gradient (backward), each used
  // by two GEMMs along different dimensions; delayed scaling then updates the layer's scales.
  // Its weights are quantized once per step (quantize_weights).
  void block_linear(BlockCost* fwd, BlockCost* bwd, double m, double k, double nn) {
    if (!low_.active()) return linear(fwd, bwd, m, k, nn);
    gemms(fwd, bwd, m, k, nn, low_.gemm);
    quantize(fwd, m * k, low_.hadamard);
    quantize(bwd, m * nn, low_.hadamard);
    if (low_.delayed_scaling)
      add(fwd, query_op("reduce", {{"in", "3x1024"}}, DType::kFP32, "llm reduce"),
          !fused_quantize_);
  }
  void quantize_weights(BlockCost* into, double params) {
    if (low_.active() && params >= 1) quantize(into, params, 0);
  }
  // An element-wise op over [rows, cols] and its backward op-graph type.
  void rows(BlockCost* fwd, BlockCost* bwd, const std::string& data_type,
            const std::string& bwd_type, double r, double c) {
    op(fwd, data_type, {{"B", n(r)}, {"H", n(c)}});
    const std::string shape = n(r) + "x" + n(c);
    if (!bwd_type.empty()) op(bwd, bwd_type, {{"in", shape + ";" + shape}});
  }

 private:
  void add(BlockCost* into, const ModelOp& m, bool launched = true) {
    into->seconds += price_(m);
    into->flops += m.flops;
    into->bytes += m.bytes;
    if (launched) into->kernels += 1;
  }
  void gemms(BlockCost* fwd, BlockCost* bwd, double m, double k, double nn, DType t) {
    op(fwd, "linear", {{"B", "1"}, {"M", n(m)}, {"K", n(k)}, {"N", n(nn)}}, t);
    op(bwd, "linear", {{"B", "1"}, {"M", n(m)}, {"K", n(nn)}, {"N", n(k)}}, t);
    op(bwd, "linear", {{"B", "1"}, {"M", n(k)}, {"K", n(m)}, {"N", n(nn)}}, t);
  }
  // One pass over `elems` bf16 values writing the recipe's copies (with their block scales),
  // after one more read of them for their amax under current scaling;
  // a Hadamard transform of `hadamard` points costs 2 x hadamard FLOPs per element of the
  // copy it feeds (the columnwise one, used by the weight-gradient GEMM).
  void quantize(BlockCost* into, double elems, int hadamard) {
    ModelOp c;
    c.type = "cast";
    c.dtype = low_.gemm;
    c.inputs = {Shape{static_cast<int64_t>(elems)}};
    c.output = c.inputs[0];
    c.attrs["src_bytes"] = 2;
    const double copies = low_.transposed_copy ? 2 : 1;
    c.flops = elems * copies + elems * 2.0 * hadamard;
    c.bytes = elems * ((low_.current_scaling ? 4 : 2) + copies * low_.element_bytes());
    add(into, c, !fused_quantize_);
  }

  const OpPricer& price_;
  DType dtype_;
  LowPrecision low_;
  bool fused_quantize_;
};

}  // namespace

LlmGpu llm_gpu(const DeviceSpec& device, const FrameworkProfile& framework) {
  LlmGpu g;
  g.any_layout_fp8 = any_layout_fp8(device);
  // A synchronous device (a CPU) runs its ops on the framework's thread: no launches to wait for.
  if (!framework.cuda_graphs && !device.host.synchronous) g.kernel_host_s = device.host.per_op();
  return g;
}

namespace {

// The kernels of the framework's eager decompositions (strategies/framework.h), as bytes per
// element read and written by each kernel; `a` is the activations' element size.

// Hugging Face's LlamaRMSNorm: to float32, pow, mean, multiply by the reciprocal root, back to
// the input type, multiply by the weight; add epsilon and rsqrt over the row statistics.
void eager_rms_norm(Pricer& pr, BlockCost* fwd, BlockCost* bwd, double rows, double h, double a) {
  const double e = rows * h;
  pr.passes(fwd, e, {a + 4, 8, 4, 8, 4 + a, 2 * a});
  pr.passes(fwd, rows, {8, 8});
  // Autograd's backward of each: the weight's product (two), the cast, both sides of the
  // product with the reciprocal root, the mean's expansion, the square, the sum of the two
  // gradients of the FP32 input and the cast back.
  pr.passes(bwd, e, {3 * a, 2 * a, a + 4, 8, 8, 4, 12, 12, 4 + a});
  pr.passes(bwd, rows, {8, 8});
}

// apply_rotary_pos_emb with rotate_half on one tensor: x cos, the negated half, the
// concatenation, its product with sin, the sum; backward the products' gradients, the halves'
// and the sum.
void eager_rope(Pricer& pr, BlockCost* fwd, BlockCost* bwd, double e, double a) {
  pr.passes(fwd, e, {2 * a, a, 2 * a, 2 * a, 3 * a});
  pr.passes(bwd, e, {2 * a, 2 * a, a, 2 * a, 3 * a});
}

}  // namespace

LlmCosts price_llm(const LlmConfig& m, const ParallelPlan& p, const OpPricer& price,
                   const LlmGpu& gpu, const FrameworkProfile& fw) {
  const DType dtype = precision_dtype(p.precision);
  const double a = static_cast<double>(dtype_bytes(dtype));
  Pricer pr(price, dtype, low_precision(p.precision, gpu.any_layout_fp8), fw.fused.quantize);
  const FusedKernels& fused = fw.fused;
  LlmCosts c;
  const double t = p.tp;
  const double s = static_cast<double>(p.sequence(m)) / p.cp;  // query tokens on this GPU
  const double s_kv = static_cast<double>(p.sequence(m));      // keys each query attends
  const double tokens = p.micro_batch * s;
  const double h = static_cast<double>(m.hidden), f = static_cast<double>(m.ffn);
  const double d = static_cast<double>(m.head_dim());
  const double heads = static_cast<double>(m.heads) / t;
  const double kv = static_cast<double>(m.kv_heads) * d;
  const double q = static_cast<double>(m.q_width());  // h unless the config sets a head width
  const double norm_rows = p.sequence_parallel ? tokens / t : tokens;
  const bool rms = !m.biases;  // LLaMA-style RMSNorm; GPT's LayerNorm is one kernel in PyTorch
  auto norm = [&](BlockCost* fwd, BlockCost* bwd) {
    if (rms && !fused.norm) return eager_rms_norm(pr, fwd, bwd, norm_rows, h, a);
    pr.rows(fwd, bwd, "ln", "layernorm_bwd", norm_rows, h);
  };
  // Autocast keeps FP32 weights: each linear layer's weight is cast to the compute type when a
  // forward pass uses it, and its gradient cast back to FP32 in backward.
  auto weight_cast = [&](BlockCost* fwd, BlockCost* bwd, double params) {
    if (!fw.fp32_weights || a >= 4) return;
    pr.pass(fwd, params, 4 + a);
    pr.pass(bwd, params, a + 4);
  };
  // A linear layer of the block, and the autocast copy of its weights. `fpart` and `dpart`, when
  // given, also get its forward and its backward's data-gradient half (the backward's two GEMMs
  // do the same work).
  // The block whose weight gradients the linear layers priced now belong to.
  BlockCost* wgrad = &c.attention_wgrad;
  auto linear = [&](BlockCost* fwd, BlockCost* bwd, double rows, double in, double out,
                    BlockCost* fpart = nullptr, BlockCost* dpart = nullptr) {
    const BlockCost f0 = *fwd, b0 = *bwd;
    pr.block_linear(fwd, bwd, rows, in, out);
    weight_cast(fwd, bwd, in * out);
    if (fpart) *fpart += *fwd - f0;
    if (dpart) *dpart += (*bwd - b0) * 0.5;
    if (p.lora_rank > 0) {
      // Frozen weights: no weight-gradient GEMM; the adapter's x A and (x A) B train beside.
      *bwd = b0 + (*bwd - b0) * 0.5;
      const BlockCost b1 = *bwd;
      const double r = p.lora_rank;
      pr.linear(fwd, bwd, rows, in, r);
      pr.linear(fwd, bwd, rows, r, out);
      if (wgrad) *wgrad += (*bwd - b1) * 0.5;
      return;
    }
    if (wgrad) *wgrad += (*bwd - b0) * 0.5;
  };

  // Attention block: norm, QKV projection (column parallel), rotary embedding, scores, softmax,
  // context, output projection (row parallel), residual add.
  norm(&c.attention_qkv_fwd, &c.attention_bwd);
  BlockCost* const qkv_f = &c.attention_in_gemm;
  BlockCost* const qkv_d = &c.attention_in_dgrad;
  if (m.mla()) {
    // Multi-head latent attention (Megatron-Core's MLA): the down projections to the query and
    // the key/value latents replicated on the TP ranks, each latent normed, the up projections
    // split by heads.
    const double ql = static_cast<double>(m.q_lora_rank), kvl = static_cast<double>(m.kv_lora_rank);
    const double rope = static_cast<double>(m.qk_rope_dim), vd = static_cast<double>(m.value_dim());
    if (ql > 0) {
      linear(&c.attention_qkv_fwd, &c.attention_bwd, tokens, h, ql, qkv_f, qkv_d);
      pr.rows(&c.attention_qkv_fwd, &c.attention_bwd, "ln", "layernorm_bwd", tokens, ql);
      const BlockCost before = c.attention_qkv_fwd;
      linear(&c.attention_qkv_fwd, &c.attention_bwd, tokens, ql, q / t, qkv_f, qkv_d);
      c.mla_up_fwd += c.attention_qkv_fwd - before;
    } else {
      linear(&c.attention_qkv_fwd, &c.attention_bwd, tokens, h, q / t, qkv_f, qkv_d);
    }
    linear(&c.attention_qkv_fwd, &c.attention_bwd, tokens, h, kvl + rope, qkv_f, qkv_d);
    pr.rows(&c.attention_qkv_fwd, &c.attention_bwd, "ln", "layernorm_bwd", tokens, kvl);
    const BlockCost before = c.attention_qkv_fwd;
    linear(&c.attention_qkv_fwd, &c.attention_bwd, tokens, kvl,
           static_cast<double>(m.heads) * (d - rope + vd) / t, qkv_f, qkv_d);
    c.mla_up_fwd += c.attention_qkv_fwd - before;
  } else if (fused.projections) {
    linear(&c.attention_qkv_fwd, &c.attention_bwd, tokens, h, (q + 2 * kv) / t, qkv_f, qkv_d);
  } else {
    linear(&c.attention_qkv_fwd, &c.attention_bwd, tokens, h, q / t, qkv_f, qkv_d);
    linear(&c.attention_qkv_fwd, &c.attention_bwd, tokens, h, kv / t, qkv_f, qkv_d);
    linear(&c.attention_qkv_fwd, &c.attention_bwd, tokens, h, kv / t, qkv_f, qkv_d);
  }
  // Qwen3's RMSNorm over each head of q and k, one row per head.
  if (m.qk_norm)
    pr.rows(&c.attention_qkv_fwd, &c.attention_bwd, "ln", "layernorm_bwd",
            tokens * (static_cast<double>(m.heads) + static_cast<double>(m.kv_heads)) / t, d);
  if (!m.learned_positions) {
    const double q_elems = tokens * q / t, k_elems = tokens * kv / t;
    if (fused.rope) {
      pr.pass(&c.attention_qkv_fwd, q_elems + k_elems, 2 * a);
      pr.pass(&c.attention_bwd, q_elems + k_elems, 2 * a);
    } else {
      eager_rope(pr, &c.attention_qkv_fwd, &c.attention_bwd, q_elems, a);
      eager_rope(pr, &c.attention_qkv_fwd, &c.attention_bwd, k_elems, a);
    }
  }
  BlockCost core_bwd;
  const double bh = p.micro_batch * heads;
  if (p.flash_attention) {
    // One fused kernel each way (workloads/op_counts.h, attention): the scores stay on chip.
    // Causal over the whole sequence; under context parallelism each GPU's two load-balanced
    // chunks see half the keys on average, priced as s queries over s_kv / 2 keys unmasked.
    const double kv_heads = std::max(1.0, static_cast<double>(m.kv_heads) / t);
    // MLA's queries and keys are wider than its values: the kernel's work is their mean's.
    const double d_core = (d + static_cast<double>(m.value_dim())) / 2;
    const bool whole = p.cp == 1;
    const std::map<std::string, std::string> shape = {
        {"B", n(p.micro_batch)},
        {"S", n(s)},
        {"S_kv", n(whole ? s_kv : s_kv / 2)},
        {"H", n(heads)},
        {"KV", n(kv_heads)},
        {"D", n(d_core)},
        {"causal", whole ? "1" : "0"},
        {"impl", attention_impl_name(p.attention_impl)}};
    // Sliding-window layers (Gemma 2's every other layer) keep only the last `window` keys: the
    // block is the layers' average, local_layers of every local_layers + 1 windowed.
    const double window = static_cast<double>(m.sliding_window);
    if (m.local_layers > 0 && window > 0 && window < s_kv) {
      const double local = static_cast<double>(m.local_layers) / (m.local_layers + 1.0);
      std::map<std::string, std::string> windowed = shape;
      windowed["window"] = n(window);
      pr.op(&c.attention_core_fwd, "attention", windowed, local);
      pr.op(&core_bwd, "attention_bwd", windowed, local);
      pr.op(&c.attention_core_fwd, "attention", shape, 1 - local);
      pr.op(&core_bwd, "attention_bwd", shape, 1 - local);
    } else {
      pr.op(&c.attention_core_fwd, "attention", shape);
      pr.op(&core_bwd, "attention_bwd", shape);
    }
  } else {
    pr.op(&c.attention_core_fwd, "bmm", {{"B", n(bh)}, {"M", n(s)}, {"N", n(s_kv)}, {"K", n(d)}});
    pr.rows(&c.attention_core_fwd, &core_bwd, "softmax", "softmax_bwd", bh * s, s_kv);
    pr.op(&c.attention_core_fwd, "bmm", {{"B", n(bh)}, {"M", n(s)}, {"N", n(d)}, {"K", n(s_kv)}});
    // Backward of the two batched products: two products each.
    for (int i = 0; i < 2; ++i) {
      pr.op(&core_bwd, "bmm", {{"B", n(bh)}, {"M", n(s)}, {"N", n(s_kv)}, {"K", n(d)}});
      pr.op(&core_bwd, "bmm", {{"B", n(bh)}, {"M", n(s)}, {"N", n(d)}, {"K", n(s_kv)}});
    }
  }
  c.attention_fwd += c.attention_qkv_fwd + c.attention_core_fwd;
  c.attention_bwd += core_bwd;
  const double attn_out = static_cast<double>(m.heads * m.value_dim());
  linear(&c.attention_fwd, &c.attention_bwd, tokens, attn_out / t, h, &c.attention_out_gemm,
         &c.attention_out_dgrad);
  if (m.sandwich_norm) norm(&c.attention_fwd, &c.attention_bwd);  // after attention (Gemma 2)
  pr.rows(&c.attention_fwd, &c.attention_bwd, "add", "", norm_rows, h);

  // Hybrid models (Nemotron-H): the average layer's mixer is attention_share attention and
  // the rest a Mamba-2 mixer.
  if (m.mamba_layers > 0) {
    const double share = m.attention_share();
    for (BlockCost* b : {&c.attention_fwd, &c.attention_bwd, &c.attention_core_fwd,
                         &c.attention_qkv_fwd, &c.attention_in_gemm, &c.attention_out_gemm,
                         &c.attention_in_dgrad, &c.attention_out_dgrad, &c.attention_wgrad})
      *b = *b * share;
    BlockCost fwd, bwd, in_gemm, out_gemm, in_dgrad, out_dgrad, w;
    wgrad = &w;
    // Mamba-2 (Dao and Gu): norm, the input projection to z, x, B, C and dt (split by heads
    // over TP), the causal convolution, the chunked scan as batched products per chunk (the
    // intra-chunk C B^T and its product with X, the chunk states B^T X, their read-out C h),
    // the gated norm and the output projection.
    const double di = static_cast<double>(m.mamba_inner()) / t;
    const double gn = static_cast<double>(m.ssm_groups * m.ssm_state) / t;
    const double heads_m = static_cast<double>(m.mamba_heads) / t;
    const double groups = std::max(1.0, static_cast<double>(m.ssm_groups) / t);
    const double qc = static_cast<double>(m.ssm_chunk), st = static_cast<double>(m.ssm_state);
    const double pd = static_cast<double>(m.mamba_head_dim);
    norm(&fwd, &bwd);
    linear(&fwd, &bwd, tokens, h, 2 * di + 2 * gn + heads_m, &in_gemm, &in_dgrad);
    pr.pass(&fwd, tokens * (di + 2 * gn), 2 * a + 2.0 * static_cast<double>(m.conv_kernel));
    pr.pass(&bwd, tokens * (di + 2 * gn), 3 * a + 2.0 * static_cast<double>(m.conv_kernel));
    const double chunks = std::max(1.0, tokens / qc);
    for (int pass = 0; pass < 3; ++pass) {  // forward once, backward twice
      BlockCost* into = pass == 0 ? &fwd : &bwd;
      pr.op(into, "bmm", {{"B", n(chunks * groups)}, {"M", n(qc)}, {"N", n(qc)}, {"K", n(st)}});
      pr.op(into, "bmm", {{"B", n(chunks * heads_m)}, {"M", n(qc)}, {"N", n(pd)}, {"K", n(qc)}});
      pr.op(into, "bmm", {{"B", n(chunks * heads_m)}, {"M", n(st)}, {"N", n(pd)}, {"K", n(qc)}});
      pr.op(into, "bmm", {{"B", n(chunks * heads_m)}, {"M", n(qc)}, {"N", n(pd)}, {"K", n(st)}});
    }
    pr.rows(&fwd, &bwd, "ln", "layernorm_bwd", tokens, di);
    linear(&fwd, &bwd, tokens, di, h, &out_gemm, &out_dgrad);
    pr.rows(&fwd, &bwd, "add", "", norm_rows, h);
    const double rest = 1 - share;
    c.attention_fwd += fwd * rest;
    c.attention_bwd += bwd * rest;
    c.attention_in_gemm += in_gemm * rest;
    c.attention_out_gemm += out_gemm * rest;
    c.attention_in_dgrad += in_dgrad * rest;
    c.attention_out_dgrad += out_dgrad * rest;
    c.attention_wgrad += w * rest;
  }

  // MLP block: norm, up (and gate) projection, activation (and gating product), down
  // projection, residual add. Experts: each token through top_k of them (and the shared
  // ones); a MoE model's dense layers and a hybrid's layers without an MLP by their shares.
  struct Mlp {
    BlockCost fwd, bwd, in_gemm, out_gemm, in_dgrad, out_dgrad, w, act;
    std::array<BlockCost*, 8> parts() {
      return {&fwd, &bwd, &in_gemm, &out_gemm, &in_dgrad, &out_dgrad, &w, &act};
    }
    // Into the layer's MLP block, weighed by the share of the layers that have it.
    void add(LlmCosts* c, double share) {
      const std::array<BlockCost*, 8> into = {&c->mlp_fwd,      &c->mlp_bwd,      &c->mlp_in_gemm,
                                              &c->mlp_out_gemm, &c->mlp_in_dgrad, &c->mlp_out_dgrad,
                                              &c->mlp_wgrad,    &c->mlp_act_fwd};
      const std::array<BlockCost*, 8> from = parts();
      for (size_t i = 0; i < from.size(); ++i) *into[i] += *from[i] * share;
    }
  };
  // An MLP over `rows` tokens, its width split over `split` GPUs (the layer's TP, or the
  // experts' own).
  auto mlp = [&](double rows, double full_width, double split) {
    Mlp b;
    wgrad = &b.w;
    const double width = full_width * t / split;  // so that width / t is the GPU's share
    if (m.gated_mlp && !fused.projections) {
      linear(&b.fwd, &b.bwd, rows, h, width / t, &b.in_gemm, &b.in_dgrad);
      linear(&b.fwd, &b.bwd, rows, h, width / t, &b.in_gemm, &b.in_dgrad);
    } else {
      linear(&b.fwd, &b.bwd, rows, h, (m.gated_mlp ? 2 : 1) * width / t, &b.in_gemm, &b.in_dgrad);
    }
    const BlockCost before = b.fwd;
    if (m.gated_mlp) {
      // SwiGLU / GeGLU: the activation of the gate times the up projection; backward both
      // products' gradients.
      const double e = rows * width / t;
      if (fused.gated_activation) {
        pr.pass(&b.fwd, e, 3 * a);
        pr.pass(&b.bwd, e, 5 * a);
      } else {
        pr.passes(&b.fwd, e, {2 * a, 3 * a});
        pr.passes(&b.bwd, e, {3 * a, 3 * a, 3 * a});
      }
    } else {
      pr.rows(&b.fwd, &b.bwd, "gelu", "gelu_bwd", rows, width / t);
    }
    b.act = b.fwd - before;
    linear(&b.fwd, &b.bwd, rows, width / t, h, &b.out_gemm, &b.out_dgrad);
    return b;
  };
  const double mlp_share = m.mlp_share();
  {
    Mlp ends;  // the norms, the router and the residual add around the MLP
    norm(&ends.fwd, &ends.bwd);
    if (m.sandwich_norm) norm(&ends.fwd, &ends.bwd);
    pr.rows(&ends.fwd, &ends.bwd, "add", "", norm_rows, h);
    ends.add(&c, mlp_share);
  }
  if (m.moe()) {
    const double moe = m.moe_share();
    // The busiest expert-parallel rank's routed copies of its tokens, over its experts / ep
    // experts: a grouped GEMM of each expert's rows (one kernel), so fine-grained experts run
    // as many small GEMMs, not one large one.
    // Folded over TP (etp 1), a GPU dispatches its 1/tp of the tokens and its experts are whole.
    const double etp = p.expert_tp();
    const double routed = tokens * etp / t * static_cast<double>(m.top_k) * p.routed_factor();
    const double local = static_cast<double>(m.experts / p.ep);
    Mlp grouped = mlp(routed / local, f, etp);
    for (BlockCost* b : grouped.parts()) {
      const double kernels = b->kernels;
      *b = *b * local;
      b->kernels = kernels;
    }
    grouped.add(&c, mlp_share * moe);
    if (m.shared_experts > 0)
      mlp(tokens * static_cast<double>(m.shared_experts), f, t).add(&c, mlp_share * moe);
    Mlp router;
    wgrad = &router.w;
    pr.linear(&router.fwd, &router.bwd, tokens, h, static_cast<double>(m.experts));
    router.add(&c, mlp_share * moe);
    if (m.dense_layers > 0)
      mlp(tokens, static_cast<double>(m.dense_ffn), t).add(&c, mlp_share * (1 - moe));
  } else {
    mlp(tokens, f, t).add(&c, mlp_share);
  }

  // Embedding: a gather of tokens x h (one pass), its backward a scatter-add.
  pr.rows(&c.embedding_fwd, &c.embedding_bwd, "mulu", "", tokens, h);
  pr.rows(&c.embedding_bwd, &c.embedding_bwd, "add", "", tokens, h);
  // Head: final norm, logits over the vocabulary-parallel head, cross entropy.
  const double v = static_cast<double>(p.padded_vocab(m)) / t;
  norm(&c.head_fwd, &c.head_bwd);
  pr.linear(&c.head_fwd, &c.head_bwd, tokens, h, v);
  weight_cast(&c.head_fwd, &c.head_bwd, h * v);
  const std::map<std::string, std::string> logits = {{"in", n(tokens) + "x" + n(v)}};
  if (fused.cross_entropy || a >= 4) {
    pr.op(&c.head_fwd, "cross_entropy", logits);
    pr.op(&c.head_bwd, "cross_entropy_bwd", logits);
  } else {
    // The logits upcast to FP32 before the loss, and the gradient cast back.
    pr.pass(&c.head_fwd, tokens * v, a + 4);
    pr.op(&c.head_fwd, "cross_entropy", logits, DType::kFP32);
    pr.op(&c.head_bwd, "cross_entropy_bwd", logits, DType::kFP32);
    pr.pass(&c.head_bwd, tokens * v, 4 + a);
  }

  // A layer's norms, for selective recomputation of them: before each mixer and MLP (and after
  // each with sandwich norms).
  {
    BlockCost nf, nb;
    norm(&nf, &nb);
    c.norm_fwd = nf * ((m.sandwich_norm ? 2 : 1) * (1 + m.mlp_share()));
  }

  // DeepSeek-V3's multi-token prediction: one more MoE layer and the head again on the last
  // stage, priced as the average layer and the head.
  if (m.mtp_layers > 0) {
    const double k = static_cast<double>(m.mtp_layers);
    c.head_fwd += (c.attention_fwd + c.mlp_fwd + c.head_fwd) * k;
    c.head_bwd += (c.attention_bwd + c.mlp_bwd + c.head_bwd) * k;
  }

  // Adam over each stage's parameters on one GPU (its ZeRO-1+ shard), then under a
  // low-precision recipe the quantized copies of its linear layers' weights for the next step.
  const std::vector<int> layers = stage_layers(p, m);
  for (const auto& stage : llm_memory(m, p)) {
    BlockCost o;
    double params = stage.trainable;
    if (p.zero >= 1) params /= static_cast<double>(p.dp) * p.cp;
    if (params >= 1) {
      // Gradient clipping's global norm reads every FP32 gradient once; PyTorch's
      // clip_grad_norm_ then scales them all, Megatron only when the norm is over the limit.
      pr.pass(&o, params, 4);
      if (fused.optimizer) {
        pr.op(&o, "adam_update", {{"in", n(params)}});
      } else {
        pr.pass(&o, params, 8);
        // foreach AdamW: lerp the first moment, scale and addcmul the second, its sqrt,
        // bias-correction division and epsilon, then addcdiv into the weights.
        pr.passes(&o, params, {12, 8, 12, 8, 8, 8, 16});
      }
    }
    pr.quantize_weights(&o, layers[stage.stage] * layer_linear_parameters(m, p));
    c.optimizer.push_back(o);
  }
  // The host launches every kernel: a block whose kernels the GPU runs faster than the host
  // launches them takes the host's time.
  for (BlockCost* b :
       {&c.attention_fwd, &c.mlp_fwd, &c.attention_bwd, &c.mlp_bwd, &c.attention_core_fwd,
        &c.attention_qkv_fwd, &c.embedding_fwd, &c.embedding_bwd, &c.head_fwd, &c.head_bwd})
    b->seconds = std::max(b->seconds, b->kernels * gpu.kernel_host_s);
  for (BlockCost& b : c.optimizer) b.seconds = std::max(b.seconds, b.kernels * gpu.kernel_host_s);
  return c;
}

}  // namespace orrery
