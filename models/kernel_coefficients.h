// The numbers of the GPU kernel models (models/kernel_model.h) that no spec sheet gives: how
// much of a device's peak a kernel family reaches, how many cycles a GEMM tile spends outside
// its main loop, how much energy a flop takes at a process node. They are shared by every GPU:
// a GPU is told apart only by its spec (SMs, clock, peaks, bandwidth, L2, memory type, power,
// process node), so a GPU that was never measured is priced from its spec alone.
//
// scripts/fit_kernel_models.py fits them to measured kernel latencies and writes
// models/kernel/coefficients.yaml, which is compiled into the binary (embedded set
// "kernel_models"); a scenario's `cost_model: {kernel_coefficients: FILE}` loads another fit.
#pragma once

#include <string>
#include <vector>

namespace orrery {

struct KernelCoefficients {
  std::vector<std::string> sources;  // where the fit comes from (data, command, date)

  // GEMM family. A tile a x b reaches eta = 1 / (1/eta0 + edge * (a+b)/(a*b)) of the SM's rate:
  // loading a tile's edges costs in proportion to their length, its multiply-adds to its area.
  double gemm_eta0 = 0.85;      // FP32 SIMT tiles, the limit of a huge tile
  double gemm_edge = 1.0;       // edge cost at the FP32 rate; Tensor Core paths scale it (.cc)
  double gemm_regs = 25000;     // accumulators an SM holds: tiles per SM = regs / (a*b), 1..16
  double gemm_tile_cycles = 0;  // prologue and epilogue of one wave of tiles, in clock cycles
  double gemm_mem_eff = 0.8;    // fraction of DRAM bandwidth a GEMM's operand streams reach
  double gemm_l2_reread = 0.5;  // extra operand passes per doubling of operands past L2

  // Tensor Core GEMMs: the same wave model with their own tiles' numbers, fitted on measured
  // Tensor Core kernels (CUDA-graph timings: no host time). A huge tile reaches tc_eta of the
  // path's peak, by operand width (16-bit also for TF32, 8-bit, 4-bit). Shapes off the 16-byte
  // alignment still run on Tensor Cores, with narrower loads: their tiles reach
  // tc_unaligned_eff of the aligned rate and their operands tc_unaligned_eff of the bandwidth.
  double tc_eta16 = 0.85;
  double tc_eta8 = 0.85;
  double tc_eta4 = 0.85;
  double tc_edge = 1.0;       // edge cost, as gemm_edge, relative to the path's own rate
  double tc_regs = 16384;     // accumulator elements an SM holds: tiles per SM = regs / (a*b)
  double tc_tile_cycles = 0;  // prologue and epilogue of one wave of tiles, in clock cycles
  double tc_mem_eff = 0.8;    // fraction of DRAM bandwidth a GEMM's operand streams reach
  double tc_unaligned_eff = 0.5;
  // Power cap of the Tensor Cores: a 16-bit flop takes tc_pj_per_flop_16nm x process_nm / 16
  // picojoules, an operand of b bits (b/16)^tc_bits_exponent of that; a board of tdp_w sustains
  // at most tdp_w / energy.
  double tc_pj_per_flop_16nm = 0;
  double tc_bits_exponent = 1;
  // The cap acts on sustained power: a kernel timed alone runs at boost for a while. Of a
  // kernel that would take t seconds unthrottled, t / (t + tc_power_window_s) runs capped.
  double tc_power_window_s = 1e-3;

  // Fused (flash) attention: query blocks of 128 rows, one per SM at a time, each running its
  // two products (five backward) at attn_eta of the Tensor Core peak, less for short heads:
  // 1 / (1/attn_eta + attn_d_edge / head_dim); the online softmax of each score costs
  // attn_exp_share special-function operations not hidden behind the products (its exponential,
  // and the max and rescaling around it); attn_block_cycles of prologue and
  // epilogue per block; backward products at attn_bwd_eta of the forward's rate. Decoding (few
  // query blocks) splits the keys over idle SMs. q, k, v, o stream at attn_mem_eff of DRAM
  // bandwidth.
  double attn_eta = 0.7;
  double attn_d_edge = 32;
  double attn_exp_share = 1;
  double attn_block_cycles = 2000;
  double attn_bwd_eta = 0.8;
  double attn_mem_eff = 0.8;

  double launch_s = 2e-6;  // GPU time of an empty kernel: launch, first wave, drain

  // Power cap: a board of tdp_w watts sustains at most tdp_w / (energy per flop) flop/s on the
  // FP32 pipes, energy per flop = pj_per_flop_16nm x process_nm / 16.
  double pj_per_flop_16nm = 25;

  // Convolution: implicit GEMM runs the GEMM model at conv_eff of its rate; Winograd F(4x4,3x3)
  // cuts the multiply-adds of a 3x3 stride-1 convolution by winograd_ratio (4 ideal) and
  // streams its input and output winograd_passes more times for the transforms; every
  // convolution pays conv_fixed_s of cuDNN's setup kernels (layout, workspace, transforms).
  double conv_eff = 0.8;
  double winograd_ratio = 4;
  double winograd_passes = 2;
  double conv_fixed_s = 0;

  // Streaming kernels (elementwise, copies, casts, pooling, optimizer updates): a fraction of
  // DRAM bandwidth by memory type, and of the FP32 rate for their arithmetic.
  double hbm_eff = 0.88;
  double gddr_eff = 0.76;
  double stream_flop_eff = 0.5;

  // Row kernels (softmax, layer norm): rows longer than 1024 elements leave the one-warp-per-row
  // kernel for one block per row, which reads the row extra_pass more times; fewer rows than
  // rows_per_sm x SMs leave the GPU partly idle. The extra reads go to DRAM only for the rows
  // in flight L2 cannot hold (rows_in_flight_per_sm, below).
  double softmax_extra_pass = 0.4;
  double ln_extra_pass = 0.4;
  double rows_per_sm = 2;
  // Rows in flight per SM when rows take a block each: their bytes against the L2 size say how
  // much of the second look at a row comes back from DRAM rather than L2.
  double rows_in_flight_per_sm = 16;

  // Not kernel properties: measured eager-mode latencies overlap the host's dispatch of the op
  // with the kernel, latency = (host^k + kernel^k)^(1/k), k by op family (streaming, rows,
  // GEMM, convolution: their host paths differ). Only the evaluation uses them.
  double overlap_k = 3;
  double overlap_k_rows = 3;
  double overlap_k_gemm = 3;
  double overlap_k_conv = 3;
};

// The coefficients shipped with Orrery (models/kernel/coefficients.yaml).
const KernelCoefficients& shipped_kernel_coefficients();

// Parses a coefficients file; unknown keys and values out of range are InputErrors naming
// `origin`, the line and the key.
KernelCoefficients parse_kernel_coefficients(const std::string& yaml_text,
                                             const std::string& origin);

// Reads a coefficients file from disk (InputError when it is missing or bad).
KernelCoefficients load_kernel_coefficients(const std::string& path);

// The file text of `c`, as parse_kernel_coefficients reads it (all digits kept).
std::string kernel_coefficients_yaml(const KernelCoefficients& c);

}  // namespace orrery
