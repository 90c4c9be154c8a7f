#include "strategies/llm_pricing.h"

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
  Pricer(const OpPricer& price, DType dtype, const LowPrecision& low)
      : price_(price), dtype_(dtype), low_(low) {}

  void op(BlockCost* into, const std::string& type, const std::map<std::string, std::string>& f,
          DType dtype) {
    add(into, query_op(type, f, dtype, "llm " + type));
  }
  void op(BlockCost* into, const std::string& type, const std::map<std::string, std::string>& f) {
    op(into, type, f, dtype_);
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
    if (low_.delayed_scaling) op(fwd, "reduce", {{"in", "3x1024"}}, DType::kFP32);
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
  void add(BlockCost* into, const ModelOp& m) {
    into->seconds += price_(m);
    into->flops += m.flops;
    into->bytes += m.bytes;
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
    add(into, c);
  }

  const OpPricer& price_;
  DType dtype_;
  LowPrecision low_;
};

}  // namespace

LlmGpu llm_gpu(const DeviceSpec& device) { return {any_layout_fp8(device)}; }

LlmCosts price_llm(const LlmConfig& m, const ParallelPlan& p, const OpPricer& price,
                   const LlmGpu& gpu) {
  const DType dtype = precision_dtype(p.precision);
  Pricer pr(price, dtype, low_precision(p.precision, gpu.any_layout_fp8));
  LlmCosts c;
  const double t = p.tp;
  const double s = static_cast<double>(p.sequence(m)) / p.cp;  // query tokens on this GPU
  const double s_kv = static_cast<double>(p.sequence(m));      // keys each query attends
  const double tokens = p.micro_batch * s;
  const double h = static_cast<double>(m.hidden), f = static_cast<double>(m.ffn);
  const double d = static_cast<double>(m.head_dim());
  const double heads = static_cast<double>(m.heads) / t;
  const double kv = static_cast<double>(m.kv_heads) * d;
  const double norm_rows = p.sequence_parallel ? tokens / t : tokens;

  // Attention block: norm, QKV projection (column parallel), scores, softmax, context, output
  // projection (row parallel), residual add.
  pr.rows(&c.attention_qkv_fwd, &c.attention_bwd, "ln", "layernorm_bwd", norm_rows, h);
  pr.block_linear(&c.attention_qkv_fwd, &c.attention_bwd, tokens, h, (h + 2 * kv) / t);
  BlockCost core_bwd;
  const double bh = p.micro_batch * heads;
  if (p.flash_attention) {
    // One fused kernel each way (workloads/op_counts.h, attention): the scores stay on chip.
    // Causal over the whole sequence; under context parallelism each GPU's two load-balanced
    // chunks see half the keys on average, priced as s queries over s_kv / 2 keys unmasked.
    const double kv_heads = std::max(1.0, static_cast<double>(m.kv_heads) / t);
    const bool whole = p.cp == 1;
    const std::map<std::string, std::string> shape = {
        {"B", n(p.micro_batch)}, {"S", n(s)}, {"S_kv", n(whole ? s_kv : s_kv / 2)}, {"H", n(heads)},
        {"KV", n(kv_heads)},     {"D", n(d)}, {"causal", whole ? "1" : "0"},
        {"impl", attention_impl_name(p.attention_impl)}};
    pr.op(&c.attention_core_fwd, "attention", shape);
    pr.op(&core_bwd, "attention_bwd", shape);
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
  auto add = [](BlockCost* to, const BlockCost& x) {
    to->seconds += x.seconds;
    to->flops += x.flops;
    to->bytes += x.bytes;
  };
  add(&c.attention_fwd, c.attention_qkv_fwd);
  add(&c.attention_fwd, c.attention_core_fwd);
  add(&c.attention_bwd, core_bwd);
  pr.block_linear(&c.attention_fwd, &c.attention_bwd, tokens, h / t, h);
  pr.rows(&c.attention_fwd, &c.attention_bwd, "add", "", norm_rows, h);

  // MLP block: norm, up (and gate) projection, activation (and gating product), down
  // projection, residual add. Experts: each token through top_k of them.
  pr.rows(&c.mlp_fwd, &c.mlp_bwd, "ln", "layernorm_bwd", norm_rows, h);
  const double routed = tokens * static_cast<double>(m.top_k) * (m.moe() ? p.capacity_factor : 1);
  const double up = (m.gated_mlp ? 2 : 1) * f / t;
  pr.block_linear(&c.mlp_fwd, &c.mlp_bwd, routed, h, up);
  pr.rows(&c.mlp_fwd, &c.mlp_bwd, "gelu", "gelu_bwd", routed, f / t);
  if (m.gated_mlp) pr.rows(&c.mlp_fwd, &c.mlp_bwd, "mul", "", routed, f / t);
  pr.block_linear(&c.mlp_fwd, &c.mlp_bwd, routed, f / t, h);
  if (m.moe()) pr.linear(&c.mlp_fwd, &c.mlp_bwd, tokens, h, static_cast<double>(m.experts));
  pr.rows(&c.mlp_fwd, &c.mlp_bwd, "add", "", norm_rows, h);

  // Embedding: a gather of tokens x h (one pass), its backward a scatter-add.
  pr.rows(&c.embedding_fwd, &c.embedding_bwd, "mulu", "", tokens, h);
  pr.rows(&c.embedding_bwd, &c.embedding_bwd, "add", "", tokens, h);
  // Head: final norm, logits over the vocabulary-parallel head, cross entropy.
  const double v = static_cast<double>(p.padded_vocab(m)) / t;
  pr.rows(&c.head_fwd, &c.head_bwd, "ln", "layernorm_bwd", norm_rows, h);
  pr.linear(&c.head_fwd, &c.head_bwd, tokens, h, v);
  pr.op(&c.head_fwd, "cross_entropy", {{"in", n(tokens) + "x" + n(v)}});
  pr.op(&c.head_bwd, "cross_entropy_bwd", {{"in", n(tokens) + "x" + n(v)}});

  // Adam over each stage's parameters on one GPU (its ZeRO-1+ shard), then under a
  // low-precision recipe the quantized copies of its linear layers' weights for the next step.
  const std::vector<int> layers = stage_layers(p, m);
  for (const auto& stage : llm_memory(m, p)) {
    BlockCost o;
    double params = stage.parameters;
    if (p.zero >= 1) params /= static_cast<double>(p.dp) * p.cp;
    if (params >= 1) pr.op(&o, "adam_update", {{"in", n(params)}});
    pr.quantize_weights(&o, layers[stage.stage] * layer_linear_parameters(m, p));
    c.optimizer.push_back(o);
  }
  return c;
}

}  // namespace orrery
