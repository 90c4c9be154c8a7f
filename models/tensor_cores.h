// When a GEMM or convolution runs on Tensor Cores. Campo (docs/references.md, "Tensor
// Core Acceleration") names two conditions: the op is a matrix multiplication or convolution in
// a Tensor Core dtype, and its input tensors meet the shape requirement. The requirement used
// here is NVIDIA's: every GEMM dimension (M, N, K), and a convolution's input and output
// channels, a multiple of 16 bytes of elements: 8 for fp16/bf16, 4 for tf32, 16 for int8
// (NVIDIA Deep Learning Performance Guide, "Tensor Core Requirements").
#pragma once

#include "platforms/device_spec.h"
#include "workloads/model_graph.h"

namespace orrery {

// Elements per 16 bytes for dtype `t` (8 for fp16), or 0 when `t` has no Tensor Core path.
int tensor_core_alignment(DType t);

// The op is a GEMM/conv type whose shapes meet the alignment rule for `t` (normally the op's
// dtype; tf32 when FP32 math is allowed to run as TF32).
bool tensor_core_shapes_ok(const ModelOp& op, DType t);

// The dtype an op's math runs in and whether it runs on Tensor Cores on `dev`. FP32 GEMMs run as
// TF32 when `gemm_tf32` (PyTorch's torch.backends.cuda.matmul.allow_tf32, off by default since
// 1.12) and FP32 convolutions when `conv_tf32` (torch.backends.cudnn.allow_tf32, on by default),
// on devices with TF32 Tensor Cores.
// A 16-bit or narrower GEMM or convolution whose shapes miss the alignment rule still runs on
// Tensor Cores: cuBLAS and cuDNN pick kernels with narrower vector loads (and FP8/FP4 have no
// CUDA-core path at all); `aligned` says which, and the kernel model prices the narrower loads.
// FP32 tensors that may run as TF32 do so only when aligned, else on FP32 CUDA cores.
// `sustained_power`: the GPU runs at its board power limit, as it does through a training
// step's back-to-back kernels; false prices a kernel timed alone, which runs at boost clocks until
// the power limit catches up with it (models/kernel_model.h).
struct MathMode {
  DType dtype = DType::kFP32;
  bool tensor_cores = false;
  bool aligned = true;
  bool sustained_power = false;
};
MathMode math_mode(const ModelOp& op, const DeviceSpec& dev, bool gemm_tf32, bool conv_tf32);

// GEMMs (matmul, bmm), convolutions and attention: the op types that have Tensor Core kernels.
bool has_tensor_core_kernels(const std::string& op_type);

// The type an op of type `t` computes in on `dev`: an fp8 or fp4 op on a GPU without Tensor
// Cores for its type runs in the GPU's faster 16-bit type (bf16 on a tie, as amp picks it;
// fp16 on Volta, Turing and the P100); any other type is itself.
DType fallback_dtype(DType t, const DeviceSpec& dev);

}  // namespace orrery
