// The low-precision recipes of language-model training: which element type the GEMMs of the
// linear layers run in, how their operands are scaled, and what the quantization costs in
// kernels and memory. Everything else (attention core, softmax, norms, the router, the output
// head, the optimizer with its fp32 master weights) stays in bf16 / fp32, as Transformer
// Engine runs it.
//
//   fp8    E4M3 forward, E5M2 gradients, one scale per tensor from an amax history (delayed
//          scaling). Hopper's and Ada's FP8 GEMMs take only the "TN" layout, so each quantized
//          tensor is also written transposed (Transformer Engine's cast-transpose); Blackwell's
//          take any layout and Transformer Engine keeps one copy (any_layout_fp8).
//   fp8-cs FP8 with per-tensor current scaling (Megatron-Bridge's default): each tensor's amax
//          is taken from the tensor itself just before it is cast, one more read of it, and no
//          history is kept.
//   mxfp8  OCP microscaling FP8 (Blackwell): one E8M0 scale per 32 elements along the GEMM's
//          reduction dimension, so a tensor used along both dimensions (an activation in the
//          forward GEMM and the weight-gradient GEMM) is quantized twice, rowwise and
//          columnwise; no amax history.
//   nvfp4  NVFP4 (Blackwell): E2M1 elements, one E4M3 scale per 16 elements and one fp32 scale
//          per tensor; the weight-gradient GEMM's inputs go through a 16-point random Hadamard
//          transform before quantization ("Pretraining Large Language Models with NVFP4",
//          NVIDIA, 2025).
#pragma once

#include <string>

#include "common/dtype.h"
#include "platforms/device_spec.h"
#include "strategies/parallel_plan.h"

namespace orrery {

struct LowPrecision {
  DType gemm = DType::kBF16;     // the linear layers' GEMM operands (bf16 / fp16 / fp32: none)
  int scale_block = 0;           // elements sharing one scale (0: one scale per tensor)
  double scale_bytes = 0;        // storage of one block scale
  bool transposed_copy = false;  // each quantized tensor written in both layouts
  bool delayed_scaling = false;  // amax history per tensor, its scales updated after each GEMM
  bool current_scaling = false;  // amax read from the tensor before its cast
  int hadamard = 0;  // points of the random Hadamard transform of wgrad inputs (0: none)

  bool active() const { return gemm == DType::kFP8 || gemm == DType::kFP4; }
  // Bytes one quantized element takes in one layout, its share of the block scales included.
  double element_bytes() const;
};

// `any_layout_fp8`: the GPU's per-tensor FP8 GEMMs take any operand layout (any_layout_fp8()).
LowPrecision low_precision(Precision p, bool any_layout_fp8 = false);

// Blackwell and later (compute capability 10: Transformer Engine's non-TN FP8 GEMM test):
// DeviceSpec::blackwell_tensor_cores().
bool any_layout_fp8(const DeviceSpec& device);

// "" when `device` runs `p`'s GEMMs on its Tensor Cores, else why not (the plan then prices
// them in bf16). Block-scaled formats (mxfp8, nvfp4) need DeviceSpec::blackwell_tensor_cores().
std::string low_precision_unsupported(Precision p, const DeviceSpec& device);

// The plan `device` actually runs: `plan` with its precision set to bf16 when the device lacks
// the recipe's Tensor Cores; `why` (optional) gets the reason, or "" when nothing changed.
ParallelPlan plan_on_device(const ParallelPlan& plan, const DeviceSpec& device, std::string* why);

}  // namespace orrery
