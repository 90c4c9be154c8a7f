// The compute of one GPU's share of a transformer layer, the embedding, the output head and the
// optimizer under a parallel plan, priced kernel by kernel as the framework runs them: the GEMMs
// of the attention and MLP blocks at their tensor-parallel shapes, the attention core, norms,
// rotary embeddings and element-wise ops, forward and backward (a GEMM's backward is its
// data-gradient and weight-gradient GEMMs), the loss, gradient clipping and the optimizer.
// With flash attention (plan.flash_attention) the attention core is one fused kernel per pass
// (Dao et al., "FlashAttention: Fast and Memory-Efficient Exact Attention with IO-Awareness",
// NeurIPS 2022): its products run as GEMMs over the causal half of the score blocks, the
// scores never leave the SMs, and the softmax's exponentials run on the special-function units,
// not overlapped with the products (FlashAttention-2's schedule; Shah et al.,
// "FlashAttention-3", 2024, measure that exponentials bound a third of the time on H100).
#pragma once

#include <functional>

#include "platforms/device_spec.h"
#include "strategies/framework.h"
#include "strategies/parallel_plan.h"
#include "workloads/llm_config.h"
#include "workloads/model_graph.h"

namespace orrery {

// Seconds of one op on the target GPU (the scenario's cost model; a test's fixed rate).
using OpPricer = std::function<double(const ModelOp&)>;

struct BlockCost {
  double seconds = 0;  // the GPU's, or the host's launching its kernels where that is longer
  double flops = 0;
  double bytes = 0;
  double kernels = 0;  // kernels launched
};

// Costs add up field by field: a block's parts, n layers of a block, a share of a block.
inline BlockCost operator+(const BlockCost& a, const BlockCost& b) {
  return {a.seconds + b.seconds, a.flops + b.flops, a.bytes + b.bytes, a.kernels + b.kernels};
}
inline BlockCost operator-(const BlockCost& a, const BlockCost& b) {
  return {a.seconds - b.seconds, a.flops - b.flops, a.bytes - b.bytes, a.kernels - b.kernels};
}
inline BlockCost operator*(const BlockCost& c, double k) {
  return {c.seconds * k, c.flops * k, c.bytes * k, c.kernels * k};
}
inline BlockCost& operator+=(BlockCost& a, const BlockCost& b) { return a = a + b; }

struct LlmCosts {
  // One layer, one micro-batch, one GPU.
  BlockCost attention_fwd, mlp_fwd, attention_bwd, mlp_bwd;
  BlockCost attention_core_fwd;            // the part selective recomputation runs again
  BlockCost attention_qkv_fwd;             // its norm and QKV projection (before the core)
  BlockCost embedding_fwd, embedding_bwd;  // first stage
  BlockCost head_fwd, head_bwd;            // last stage: final norm, logits, cross entropy
  // The GEMMs tensor-parallel communication overlaps (plan.tp_comm_overlap), parts of the blocks
  // above: forward each block's first (QKV, fc1) and last (output projection, fc2) linear
  // layer; backward their data-gradient halves, which backward runs first (out) and last (in).
  BlockCost attention_in_gemm, attention_out_gemm, mlp_in_gemm, mlp_out_gemm;
  BlockCost attention_out_dgrad, attention_in_dgrad, mlp_out_dgrad, mlp_in_dgrad;
  // The weight-gradient halves of each block's linear layers' backward, parts of attention_bwd
  // and mlp_bwd: what a zero-bubble schedule's W pass runs apart.
  BlockCost attention_wgrad, mlp_wgrad;
  // What selective recomputation's modules run again (forward): a layer's norms, its MLP's
  // activation function, MLA's up-projections (parts of the blocks above).
  BlockCost norm_fwd, mlp_act_fwd, mla_up_fwd;
  // Adam over the parameters one GPU updates (its ZeRO shard), per pipeline stage.
  std::vector<BlockCost> optimizer;
};

// What pricing needs of the GPU and its host beside its op prices.
struct LlmGpu {
  bool any_layout_fp8 = false;  // strategies/llm_precision.h
  // Host time to launch one kernel (the platform's per-op launch cost, device host_overheads:
  // T1 + T2 + T3 + T4); 0 when the step replays as CUDA graphs. A block of kernels takes at
  // least its kernels' launch time: a GPU that finishes them faster waits for the host.
  double kernel_host_s = 0;
};
LlmGpu llm_gpu(const DeviceSpec& device, const FrameworkProfile& framework);

// The framework's kernels (strategies/framework.h): fused or eager norms, rotary embeddings,
// gated activations, projections, loss and optimizer, and autocast's weight casts. The default
// profile fuses everything, as Megatron-Core does.
LlmCosts price_llm(const LlmConfig& model, const ParallelPlan& plan, const OpPricer& price,
                   const LlmGpu& gpu = {}, const FrameworkProfile& framework = {});

}  // namespace orrery
