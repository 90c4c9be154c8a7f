// GPU kernel models: the time of one op's kernels on a GPU, from mechanisms the hardware defines
// and the GPU's spec sheet (docs/cost-models.md, "Kernel models"). Every coefficient is shared by
// all GPUs (models/kernel_coefficients.h), so a GPU without measurements is priced from its spec.
//
//   GEMM (matmul, bmm): the library picks a tile a x b and a split-K factor s; the output's
//     tiles run in waves of SMs x tiles-per-SM, each wave as long as its slowest SM, so time
//     steps up when the tile count crosses a multiple of the SM count; a wave ends writing its
//     output tiles at the SM's share of DRAM bandwidth; a tile's rate is the
//     SM's share of the path's peak (FP32 SIMT, or TF32/FP16/BF16 Tensor Cores) at the tile's
//     efficiency; operand traffic, re-read when it does not fit L2, bounds it from below; a
//     split-K GEMM adds a reduction pass. The library's choice is taken as the fastest
//     candidate, as an autotuner would pick.
//   Convolution: implicit GEMM (M = N*P*Q, N = K, K = C*R*S per group), or Winograd F(4x4,3x3)
//     for 3x3 stride-1 FP32 convolutions, whichever is faster; backward-data is the convolution
//     of dy with the channels swapped (under stride s each input pixel gathers only the
//     ceil(R/s) x ceil(S/s) taps that reach it), backward-weight the GEMM M = K, N = C*R*S,
//     K = N*P*Q. Operand traffic is the tensors', not the im2col matrix's.
//   Softmax and layer norm: passes over the rows at the achieved bandwidth, with an extra pass
//     for rows longer than one warp handles, and idle SMs when there are few rows.
//   Everything else that streams (elementwise, casts, copies, pooling, batch norm, reductions,
//     optimizer updates): bytes over the achieved bandwidth of the memory type, or the
//     arithmetic at the FP32 rate if that is longer.
//   Each adds the launch floor (an empty kernel's GPU time).
// FP32 SIMT throughput is capped by board power: tdp_w / (energy per flop at the process node).
#pragma once

#include <string>

#include "models/kernel_coefficients.h"
#include "models/tensor_cores.h"
#include "platforms/device_spec.h"
#include "workloads/model_graph.h"

namespace orrery {

// How a GEMM ran: the chosen tile, split and waves, for `orrery cost` and op details.
struct GemmPlan {
  int tile_m = 0, tile_n = 0;  // output tile
  int split_k = 1;
  double tiles = 0;      // thread blocks launched (tiles x batch x split-K)
  int tiles_per_sm = 0;  // resident at once
  double waves = 0;
  double compute_s = 0;  // waves x wave time
  double memory_s = 0;   // operand traffic at the achieved bandwidth
  double reduce_s = 0;   // split-K reduction
  double seconds = 0;    // launch + max(compute, memory) + reduce
  bool memory_bound = false;
};

struct KernelEstimate {
  double seconds = 0;
  bool memory_bound = false;
  std::string model;   // "gemm", "conv implicit-gemm", "conv winograd", "rows", "stream"
  std::string detail;  // human-readable: tile, waves, bound, precision
  GemmPlan gemm;       // for GEMMs and convolutions
  MathMode mode;       // the precision path
};

// The flop/s of the FP32 pipes `dev` sustains under its power cap (its peak when the spec has
// no tdp_w or process_nm).
double sustained_fp32(const DeviceSpec& dev, const KernelCoefficients& c);

// Fraction of DRAM bandwidth streaming kernels reach on `dev` (HBM or GDDR).
double stream_efficiency(const DeviceSpec& dev, const KernelCoefficients& c);

// A batch of `batch` GEMMs [m x k] x [k x n] of `elem_bytes`-byte elements on the given path.
// `peak` is the path's peak flop/s (before the power cap) and `tensor_cores` says which tile
// family the library has. `eff_scale` scales the tile rate (convolutions run implicit GEMM
// below a plain GEMM's rate).
// `aligned` false: Tensor Core kernels with narrower loads (tensor_cores.h).
// `operand_bytes`: the bytes of A and B in memory when they are smaller than the GEMM's
// operands (an implicit-GEMM convolution reads its input, not the R x S times larger im2col
// matrix); 0: the GEMM's own.
GemmPlan gemm_time(double batch, double m, double n, double k, double elem_bytes, double peak,
                   bool tensor_cores, const DeviceSpec& dev, const KernelCoefficients& c,
                   double eff_scale = 1.0, bool aligned = true, bool sustained_power = false,
                   double operand_bytes = 0);

// Whether `dev` describes a GPU the kernel models can price (SMs, a memory type): CPU cores
// and devices without those fields fall back to the roofline.
bool kernel_model_applies(const DeviceSpec& dev);

// The kernel time of `op` on `dev`; `mode` is its precision path (tensor_cores.h math_mode).
// Embedding lookups are not priced here (models/embedding_model.h).
KernelEstimate kernel_time(const ModelOp& op, const DeviceSpec& dev, const MathMode& mode,
                           double flops, double bytes, const KernelCoefficients& c);

}  // namespace orrery
