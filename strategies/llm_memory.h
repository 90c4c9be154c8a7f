// Memory of one GPU training a language model under a parallel plan: weights, gradients and
// optimizer states per precision and ZeRO stage; activations per layer for the plan's
// recomputation, tensor, sequence and context parallelism (Korthikanti et al., "Reducing
// Activation Recomputation in Large Transformer Models", MLSys 2023, section 4 and Table 2),
// times the micro-batches the pipeline schedule keeps in flight; communication buffers and a
// fixed framework reserve. The peak over the pipeline stages decides whether the plan fits.
#pragma once

#include <string>
#include <vector>

#include "strategies/parallel_plan.h"
#include "workloads/llm_config.h"

namespace orrery {

struct MemoryOptions {
  // CUDA context, cuBLAS / cuDNN workspaces and NCCL's buffers, which no formula gives: an
  // assumption of about 1 GiB (what a PyTorch process holds before its first tensor), to
  // override per scenario.
  double reserved_bytes = 1.0 * (1 << 30);
  // Data-parallel gradient buckets (DDP's 25 MiB, two in flight) and ZeRO-3 / FSDP's gathered
  // layers (the one running and the one prefetched).
  double bucket_bytes = 25.0 * (1 << 20);
  // Per-tensor FP8 GEMMs take any layout (Blackwell: strategies/llm_precision.h), so the
  // quantized weights keep one copy, not two.
  bool any_layout_fp8 = false;
  // Gradients accumulated in FP32 (Megatron-LM with bf16: its distributed optimizer's "bf16
  // param, fp32 grads", 6 + 12/d bytes per parameter), not in the weights' 16 bits.
  bool fp32_grads = false;
  // The caching allocator's fragmentation, as a stated allowance: this share of the memory
  // that comes and goes within a step (activations and buffers) is lost to it. An assumption
  // (PyTorch's allocator; expandable segments lower it), to override per scenario.
  double fragmentation = 0.05;
};

struct MemoryBreakdown {
  int stage = 0;          // pipeline stage
  int layers = 0;         // transformer layers on it
  double parameters = 0;  // held by the GPU before sharding (its TP / EP share)
  double trainable = 0;   // of those, with gradients and optimizer states (LoRA: the adapters)
  double weights = 0;     // bytes
  double gradients = 0;
  double optimizer = 0;
  double activations = 0;  // at the schedule's peak of micro-batches in flight
  int in_flight = 0;       // micro-batches whose activations are held at that peak
  double buffers = 0;
  double fragmentation = 0;  // MemoryOptions::fragmentation x (activations + buffers)
  double reserved = 0;
  double total() const {
    return weights + gradients + optimizer + activations + buffers + fragmentation + reserved;
  }
};

// Bytes of activations one transformer layer keeps for backward for one micro-batch on one GPU
// (16-bit activations): Korthikanti et al.'s accounting generalized to grouped-query attention
// and gated (SwiGLU) MLPs; equal to their sbh(34 + 5as/h) for a GPT layer without parallelism.
// Under a low-precision recipe the four linear layers keep their inputs as the quantized copy
// the weight-gradient GEMM reads instead of in bf16.
double layer_activation_bytes(const LlmConfig& model, const ParallelPlan& plan);

// Bytes per parameter of weights, gradients and optimizer states before ZeRO sharding: mixed
// precision with Adam 2 + 2 + 12 (Rajbhandari et al., "ZeRO: Memory Optimizations Toward
// Training Trillion Parameter Models", SC'20, section 3.1), fp32 with Adam 4 + 4 + 8. A
// low-precision recipe keeps bf16 weights and adds `quantized` bytes per parameter of the
// linear layers: their quantized copies, cached across micro-batches in both layouts
// (strategies/llm_precision.h); `weights` in the breakdown includes them.
struct BytesPerParameter {
  double weights, gradients, optimizer;
  double quantized = 0;
};
BytesPerParameter bytes_per_parameter(Precision p, bool any_layout_fp8 = false);

// One average layer's parameters on one GPU under `plan`: `dense` (attention or Mamba-2 split
// by TP, norms and the router replicated, dense and shared-expert MLPs split by TP) and
// `experts` (its EP share of the routed experts, split by TP), weighed by the layer kinds'
// shares (LlmConfig).
struct LayerShare {
  double dense = 0, experts = 0;
};
LayerShare layer_share(const LlmConfig& model, const ParallelPlan& plan);

// A LoRA adapter's parameters on one GPU for one average layer: rank r x (in + out) for each
// of the attention's QKV and output projections and each MLP's (and local expert's) two
// linear layers, the TP-split side divided by tp. 0 unless plan.lora_rank > 0.
double lora_layer_parameters(const LlmConfig& model, const ParallelPlan& plan);

// Parameters of one layer's linear layers (attention projections and expert MLPs; norms and the
// router aside) that one GPU holds under `plan`: its TP and EP share.
double layer_linear_parameters(const LlmConfig& model, const ParallelPlan& plan);

// Every pipeline stage's memory, the first stage first.
std::vector<MemoryBreakdown> llm_memory(const LlmConfig& model, const ParallelPlan& plan,
                                        const MemoryOptions& options = {});

struct MemoryVerdict {
  bool fits = true;
  double peak = 0;  // bytes, the largest stage
  int peak_stage = 0;
  double capacity = 0;  // the device's memory
  // When it does not fit: single changes to the plan that would (e.g. "recompute: full",
  // "zero: 1", "micro_batch: 1", "tp: 8"), at most three, the cheapest in compute first.
  std::vector<std::string> would_fit;
  // "fits: 61.2 of 80 GiB" or "out of memory: needs 91.4 GiB of 80 (over by 11.4); would fit
  // with recompute: selective".
  std::string message() const;
};
// Bytes in GiB with one decimal, no unit ("17.8"): how the verdicts write sizes.
std::string format_gib(double bytes);

MemoryVerdict check_memory(const LlmConfig& model, const ParallelPlan& plan, double capacity_bytes,
                           const MemoryOptions& options = {});

}  // namespace orrery
