#include "models/kernel_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/errors.h"
#include "models/attention_support.h"
#include "models/op_class.h"
#include "workloads/op_counts.h"

namespace orrery {
namespace {

struct Tile {
  int m, n;
};

// Output tiles of the GEMM kernels cuBLAS and cuDNN ship: FP32 SIMT kernels are named
// sgemm_128x128, 128x64, 128x32, 64x64, 32x32 (both orientations); Tensor Core kernels use
// larger tiles, up to 256x128.
const Tile kSimtTiles[] = {{128, 128}, {128, 64}, {64, 128}, {128, 32}, {32, 128},
                           {64, 64},   {64, 32},  {32, 64},  {32, 32}};
const Tile kTensorTiles[] = {{256, 128}, {128, 256}, {128, 128}, {128, 64}, {64, 128}, {64, 64}};
const int kSplits[] = {1, 2, 4, 8, 16, 32};

// A split-K slice shorter than this is not worth a reduction pass.
constexpr double kMinSliceK = 128;

double clock_hz(const DeviceSpec& dev) {
  if (dev.clock > 0) return dev.clock;
  // fp32 = 2 x clock x SMs x cores per SM; 128 cores per SM where the spec gives none (every
  // architecture since Turing except GA100).
  int cores = dev.fp32_cores_per_sm > 0 ? dev.fp32_cores_per_sm : 128;
  return dev.fp32 / (2.0 * std::max(1, dev.sms) * cores);
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// The fraction of its peak (and clock) a precision path sustains under the board's power cap:
// the FP32 pipes by their energy per flop, Tensor Cores by theirs at the operand width.
double power_throttle(bool tensor_cores, double peak, double elem_bytes, const DeviceSpec& dev,
                      const KernelCoefficients& c) {
  if (!tensor_cores) return sustained_fp32(dev, c) / dev.fp32;
  if (dev.tdp_w <= 0 || dev.process_nm <= 0 || c.tc_pj_per_flop_16nm <= 0 || peak <= 0) return 1.0;
  const double bits =
      std::min(16.0, 8.0 * elem_bytes);  // TF32 multiplies 19-bit operands on 16-bit datapaths
  const double joules = c.tc_pj_per_flop_16nm * 1e-12 * dev.process_nm / 16.0 *
                        std::pow(bits / 16.0, c.tc_bits_exponent);
  return std::min(1.0, dev.tdp_w / joules / peak);
}

// The share of the unthrottled rate a Tensor Core kernel of `burst_s` (its time unthrottled)
// keeps when the power cap allows `cap` of it: all of the cap when the GPU is at its limit
// already, a blend by duration when the kernel runs alone.
double capped_share(double burst_s, double cap, bool sustained_power, const KernelCoefficients& c) {
  if (cap >= 1) return 1;
  const double w = sustained_power ? 1.0 : burst_s / (burst_s + c.tc_power_window_s);
  return 1 - (1 - cap) * w;
}

// A huge Tensor Core tile's share of the path's peak, by operand width.
double tc_eta(double elem_bytes, const KernelCoefficients& c) {
  if (elem_bytes <= 0.5) return c.tc_eta4;
  if (elem_bytes <= 1) return c.tc_eta8;
  return c.tc_eta16;
}

std::string path_name(const MathMode& mode) {
  return std::string(dtype_name(mode.dtype)) + (mode.tensor_cores ? " tensor cores" : " SIMT");
}

std::string gemm_detail(const GemmPlan& g, const DeviceSpec& dev) {
  std::string s = "tile " + std::to_string(g.tile_m) + "x" + std::to_string(g.tile_n);
  if (g.split_k > 1) s += ", split-K " + std::to_string(g.split_k);
  s += ", " + fmt("%.0f", g.tiles) + " tiles in " + fmt("%.0f", g.waves) + " wave" +
       (g.waves == 1 ? "" : "s") + " of " + std::to_string(dev.sms) + " SMs x " +
       std::to_string(g.tiles_per_sm);
  s += g.memory_bound ? ", memory-bound" : ", compute-bound";
  return s;
}

// The precision path's peak, before the power cap.
double path_peak(const DeviceSpec& dev, const MathMode& mode) {
  return dev.peak_flops(mode.dtype, mode.tensor_cores);
}

double elem_bytes(const ModelOp& op) { return dtype_bytes(op.dtype); }

// GEMM and convolution ops whose shapes are missing or unusual (imported traces that carry only
// FLOPs and bytes): a large GEMM's efficiency and the operand traffic.
KernelEstimate generic_gemm(double flops, double bytes, const DeviceSpec& dev, const MathMode& mode,
                            const KernelCoefficients& c) {
  KernelEstimate e;
  const double e_bytes = dtype_bytes(mode.dtype);
  const double cap = power_throttle(mode.tensor_cores, path_peak(dev, mode), e_bytes, dev, c);
  const double peak = path_peak(dev, mode) * (mode.tensor_cores ? 1.0 : cap);
  double eta = mode.tensor_cores ? tc_eta(e_bytes, c) : c.gemm_eta0;
  double compute = flops / (eta * peak);
  if (mode.tensor_cores) compute /= capped_share(compute, cap, mode.sustained_power, c);
  double memory = bytes / ((mode.tensor_cores ? c.tc_mem_eff : c.gemm_mem_eff) * dev.mem_bw);
  e.memory_bound = memory > compute;
  e.seconds = c.launch_s + std::max(compute, memory);
  e.model = "gemm (no shapes)";
  e.detail = std::string("FLOPs and bytes only, ") +
             (e.memory_bound ? "memory-bound" : "compute-bound") + ", " + path_name(mode);
  e.mode = mode;
  return e;
}

KernelEstimate from_plan(const GemmPlan& g, const char* model, const DeviceSpec& dev,
                         const MathMode& mode) {
  KernelEstimate e;
  e.seconds = g.seconds;
  e.memory_bound = g.memory_bound;
  e.model = model;
  e.detail = gemm_detail(g, dev) + ", " + path_name(mode);
  e.gemm = g;
  e.mode = mode;
  return e;
}

KernelEstimate matmul_time(const ModelOp& op, double flops, double bytes, const DeviceSpec& dev,
                           const MathMode& mode, const KernelCoefficients& c) {
  if (op.inputs.size() < 2 || op.inputs[0].size() < 2 || op.inputs[1].size() < 2)
    return generic_gemm(flops, bytes, dev, mode, c);
  const Shape& a = op.inputs[0];
  const Shape& b = op.inputs[1];
  double k = static_cast<double>(a.back());
  double n = static_cast<double>(b.back());
  double m, batch;
  if (b.size() == 2) {
    // A 2-D weight: the library folds the input's leading dimensions into M (nn.Linear).
    m = static_cast<double>(numel(a)) / std::max(1.0, k);
    batch = 1;
  } else {
    m = static_cast<double>(a[a.size() - 2]);
    batch = static_cast<double>(numel(a)) / std::max(1.0, m * k);
  }
  if (m <= 0 || n <= 0 || k <= 0 || batch <= 0) {
    KernelEstimate e;
    e.seconds = c.launch_s;
    e.model = "gemm";
    e.detail = "empty GEMM";
    e.mode = mode;
    return e;
  }
  double peak = path_peak(dev, mode);
  GemmPlan g = gemm_time(batch, m, n, k, elem_bytes(op), peak, mode.tensor_cores, dev, c, 1.0,
                         mode.aligned, mode.sustained_power);
  return from_plan(g, "gemm", dev, mode);
}

// Winograd F(4x4,3x3): 36 GEMMs over the 6x6 input tiles, one per tile element, each
// [tiles x C] x [C x K]; with the winograd_ratio coefficient at its ideal 4 they do exactly the
// transformed multiply-adds (a quarter of the direct ones). The input, filter and output
// transforms are separate kernels that stream the tensors again.
GemmPlan winograd(double images, double h, double w, double cin, double cout, double e_bytes,
                  double peak, const DeviceSpec& dev, const KernelCoefficients& c) {
  double tiles = images * std::ceil(h / 4) * std::ceil(w / 4);
  GemmPlan g =
      gemm_time(36, tiles, cout, cin, e_bytes, peak, false, dev, c, c.winograd_ratio / 4.0);
  double transform = c.winograd_passes * e_bytes * images * h * w * (cin + cout) /
                         (stream_efficiency(dev, c) * dev.mem_bw) +
                     2 * c.launch_s;
  g.seconds += transform;
  g.memory_s += transform;
  return g;
}

KernelEstimate conv_time(const ModelOp& op, double flops, double bytes, const DeviceSpec& dev,
                         const MathMode& mode, const KernelCoefficients& c) {
  // Shapes by type (workloads/op_counts.h): x/dy first, w or dy second, y/dx/dw the output.
  if (op.inputs.size() < 2 || op.inputs[0].size() != 4 || op.inputs[1].size() != 4 ||
      op.output.size() != 4)
    return generic_gemm(flops, bytes, dev, mode, c);
  const double g = static_cast<double>(std::max<int64_t>(1, op_attr(op, "groups", 1)));
  const bool stride1 = op_attr(op, "stride_h", 1) == 1 && op_attr(op, "stride_w", 1) == 1;
  const double e_bytes = elem_bytes(op);
  const double peak = path_peak(dev, mode);
  // N, C, H, W of the input; K, P, Q of the output; R, S of the filter.
  double n, cin, h, w, cout, p, q, r, s;
  const Shape& i0 = op.inputs[0];
  const Shape& i1 = op.inputs[1];
  const Shape& out = op.output;
  if (op.type == "conv2d") {
    n = i0[0], cin = i0[1], h = i0[2], w = i0[3];
    cout = i1[0], r = i1[2], s = i1[3];
    p = out[2], q = out[3];
  } else if (op.type == "conv2d_bwd_data") {
    n = i0[0], cout = i0[1], p = i0[2], q = i0[3];
    r = i1[2], s = i1[3];
    cin = out[1], h = out[2], w = out[3];
  } else {  // conv2d_bwd_filter
    n = i0[0], cin = i0[1], h = i0[2], w = i0[3];
    cout = i1[1], p = i1[2], q = i1[3];
    r = out[2], s = out[3];
  }
  const bool winograd_ok = r == 3 && s == 3 && stride1 && g == 1 && !mode.tensor_cores;
  // What the kernel reads: the tensors themselves (implicit GEMM gathers the R x S windows of
  // its input from on-chip copies, it never writes the im2col matrix).
  const double x_bytes = n * cin * h * w * e_bytes;
  const double dy_bytes = n * cout * p * q * e_bytes;
  const double w_bytes = cout * cin / g * r * s * e_bytes;

  GemmPlan best;
  const char* model = "conv implicit-gemm";
  if (op.type == "conv2d_bwd_filter") {
    // dW[K, C*R*S] = dY[K, N*P*Q] x im2col(X)[N*P*Q, C*R*S]: a long reduction, so split-K.
    best = gemm_time(g, cout / g, cin / g * r * s, n * p * q, e_bytes, peak, mode.tensor_cores, dev,
                     c, c.conv_eff, mode.aligned, mode.sustained_power, x_bytes + dy_bytes);
  } else {
    // Forward: Y[N*P*Q, K] = im2col(X) x W; backward-data is the same with C and K exchanged,
    // each input pixel gathering the ceil(R/stride) x ceil(S/stride) filter taps that reach it
    // (cuDNN splits a strided backward-data into stride_h x stride_w such convolutions).
    const bool fwd = op.type == "conv2d";
    const double sh = static_cast<double>(std::max<int64_t>(1, op_attr(op, "stride_h", 1)));
    const double sw = static_cast<double>(std::max<int64_t>(1, op_attr(op, "stride_w", 1)));
    const double rows = fwd ? n * p * q : n * h * w;
    const double cols = fwd ? cout : cin;
    const double red = fwd ? cin / g * r * s : cout / g * std::ceil(r / sh) * std::ceil(s / sw);
    best = gemm_time(g, rows, cols / g, red, e_bytes, peak, mode.tensor_cores, dev, c, c.conv_eff,
                     mode.aligned, mode.sustained_power, (fwd ? x_bytes : dy_bytes) + w_bytes);
    if (winograd_ok) {
      GemmPlan wg = fwd ? winograd(n, p, q, cin, cout, e_bytes, peak, dev, c)
                        : winograd(n, h, w, cout, cin, e_bytes, peak, dev, c);
      if (wg.seconds < best.seconds) {
        best = wg;
        model = "conv winograd";
      }
    }
  }
  best.seconds += c.conv_fixed_s;
  return from_plan(best, model, dev, mode);
}

// Fused attention (flash attention's structure: Dao, "FlashAttention-2"; Shah et al.,
// "FlashAttention-3"): each block of 128 queries of one head walks its keys, computing scores
// and the weighted sum on Tensor Cores with the online softmax between them; the scores never
// reach DRAM. Blocks run one per SM in waves; when there are fewer blocks than SMs (decoding, a
// short prefill) the keys of a block are split over the idle SMs and the partial results
// merged, as flash-decoding does.
KernelEstimate attention_time(const ModelOp& op, double bytes, const DeviceSpec& dev,
                              const MathMode& mode, const KernelCoefficients& c) {
  KernelEstimate e;
  e.model = "attention";
  e.mode = mode;
  const AttentionDims a = attention_dims(op);
  const bool backward = op.type == "attention_bwd";
  if (a.batch * a.heads * a.seq * a.seq_kv * a.head_dim <= 0) {
    e.seconds = c.launch_s;
    e.detail = "empty attention";
    return e;
  }
  if (const std::string why = attention_impl_unsupported(a.impl, dev, mode.dtype); !why.empty())
    throw InputError("op " + op.name + " (impl " + attention_impl_name(a.impl) + "): " + why);
  const double sms = std::max(1, dev.sms);
  const double e_bytes = elem_bytes(op);
  const double peak = path_peak(dev, mode) * attention_mma_share(a.impl, dev);
  const double cap = power_throttle(mode.tensor_cores, path_peak(dev, mode), e_bytes, dev, c);
  const double f = clock_hz(dev);
  double eta = 1.0 / (1.0 / c.attn_eta + c.attn_d_edge / std::max(1.0, a.head_dim));
  if (!mode.aligned) eta *= c.tc_unaligned_eff;
  if (backward) eta *= c.attn_bwd_eta;
  const double rate_sm = eta * peak / sms;
  const double exp_sm = dev.special_function_rate() / sms;
  // Tiles of 128 query rows (a short sequence's rows rounded up to 16, the MMA's granularity)
  // by 128 keys: the tensor cores compute whole tiles, so a diagonal tile of a causal mask and
  // the ragged edges cost as much as full ones.
  constexpr double kTile = 128;
  const double tile_rows = a.seq >= kTile ? kTile : 16 * std::ceil(a.seq / 16);
  const double q_blocks = std::ceil(a.seq / tile_rows);
  double key_tiles = 0;  // over the query blocks of one head
  if (!a.causal && a.window <= 0) {
    key_tiles = q_blocks * std::ceil(a.seq_kv / kTile);
  } else {
    for (double i = 0; i < q_blocks; ++i) {
      const double last =
          a.causal ? a.seq_kv - a.seq + std::min((i + 1) * tile_rows, a.seq) : a.seq_kv;
      const double first =
          a.window > 0 ? std::max(0.0, a.seq_kv - a.seq + i * tile_rows - a.window + 1) : 0.0;
      key_tiles += std::ceil(last / kTile) - std::floor(first / kTile);
    }
  }
  // Backward parallelises over key blocks (dK, dV accumulate per block), forward over queries.
  const double blocks = a.batch * a.heads * (backward ? std::ceil(a.seq_kv / kTile) : q_blocks);
  const double pairs = a.batch * a.heads * key_tiles * tile_rows * kTile;
  const double keys_per_block = blocks > 0 ? pairs / blocks / tile_rows : 0;
  const double split =
      std::clamp(std::floor(sms / std::max(1.0, blocks)), 1.0, std::ceil(keys_per_block / 256));
  const double units = blocks * split;
  const double unit_pairs = units > 0 ? pairs / units : 0;
  const double products = backward ? 5 : 2;
  const double unit_s = unit_pairs * products * 2 * a.head_dim / rate_sm +
                        c.attn_exp_share * unit_pairs / exp_sm + c.attn_block_cycles / f;
  const double waves = std::ceil(units / sms);
  double compute_s = waves * unit_s;
  compute_s /= capped_share(compute_s, cap, mode.sustained_power, c);
  const double memory_s = bytes / (c.attn_mem_eff * dev.mem_bw);
  e.memory_bound = memory_s > compute_s;
  e.seconds = c.launch_s + std::max(compute_s, memory_s) + (split > 1 ? c.launch_s : 0.0);
  e.detail = fmt("%.0f blocks of ", blocks) + fmt("%.0f ", backward ? kTile : tile_rows) +
             (backward ? "keys" : "queries") +
             (split > 1 ? fmt(", keys split %.0f ways", split) : std::string()) +
             fmt(", %.0f wave", waves) + (waves == 1 ? "" : "s") +
             (e.memory_bound ? ", memory-bound" : ", compute-bound") + ", " + path_name(mode);
  if (a.impl != AttentionImpl::kAuto) e.detail += std::string(", ") + attention_impl_name(a.impl);
  return e;
}

bool is_row_op(const std::string& t) {
  return t == "softmax" || t == "softmax_bwd" || t == "layernorm" || t == "layernorm_bwd";
}

KernelEstimate row_time(const ModelOp& op, double bytes, const DeviceSpec& dev,
                        const MathMode& mode, const KernelCoefficients& c) {
  KernelEstimate e;
  e.model = "rows";
  e.mode = mode;
  e.memory_bound = true;
  double row = op.inputs.empty() || op.inputs[0].empty() ? 1.0 : op.inputs[0].back();
  double rows =
      op.inputs.empty() ? 1.0 : static_cast<double>(numel(op.inputs[0])) / std::max(1.0, row);
  bool softmax = op.type.rfind("softmax", 0) == 0;
  double extra = softmax ? c.softmax_extra_pass : c.ln_extra_pass;
  // One warp per row up to 1024 elements (32 lanes x 32 values in registers); longer rows
  // take a block per row and a second look at the row, which misses L2 (and goes to DRAM) in
  // the share of the rows in flight that L2 cannot hold: none on a 40-50 MB L2, most on 4 MB.
  const double in_flight = c.rows_in_flight_per_sm * std::max(1, dev.sms) * row * elem_bytes(op);
  const double miss = dev.l2_bytes > 0 ? std::min(1.0, in_flight / dev.l2_bytes) : 1.0;
  double passes = 1.0 + (row > 1024 ? extra * miss : 0.0);
  double busy = std::min(1.0, rows / (c.rows_per_sm * std::max(1, dev.sms)));
  double t = passes * bytes / (stream_efficiency(dev, c) * dev.mem_bw * busy);
  e.seconds = c.launch_s + t;
  e.detail = fmt("%.0f rows of ", rows) + fmt("%.0f", row) +
             (row > 1024 ? ", block per row" + fmt(" (%.0f%% of re-reads miss L2)", 100 * miss)
                         : ", warp per row") +
             fmt(", %.0f%% of SMs busy", 100 * busy) + ", memory-bound";
  return e;
}

KernelEstimate stream_time(double flops, double bytes, const DeviceSpec& dev, const MathMode& mode,
                           const KernelCoefficients& c) {
  KernelEstimate e;
  e.model = "stream";
  e.mode = mode;
  double eff = stream_efficiency(dev, c);
  double memory = bytes / (eff * dev.mem_bw);
  double compute = flops / (sustained_fp32(dev, c) * c.stream_flop_eff);
  e.memory_bound = memory >= compute;
  e.seconds = c.launch_s + std::max(memory, compute);
  e.detail =
      e.memory_bound ? fmt("memory-bound at %.0f%% of DRAM bandwidth", 100 * eff) : "compute-bound";
  return e;
}

}  // namespace

double sustained_fp32(const DeviceSpec& dev, const KernelCoefficients& c) {
  if (dev.tdp_w <= 0 || dev.process_nm <= 0 || c.pj_per_flop_16nm <= 0) return dev.fp32;
  double joules_per_flop = c.pj_per_flop_16nm * 1e-12 * dev.process_nm / 16.0;
  return std::min(dev.fp32, dev.tdp_w / joules_per_flop);
}

double stream_efficiency(const DeviceSpec& dev, const KernelCoefficients& c) {
  return dev.hbm() ? c.hbm_eff : c.gddr_eff;
}

bool kernel_model_applies(const DeviceSpec& dev) {
  return dev.sms > 0 && !dev.memory.empty() && dev.fp32 > 0 && dev.mem_bw > 0;
}

GemmPlan gemm_time(double batch, double m, double n, double k, double e_bytes, double peak,
                   bool tensor_cores, const DeviceSpec& dev, const KernelCoefficients& c,
                   double eff_scale, bool aligned, bool sustained_power, double operand_bytes) {
  const double sms = std::max(1, dev.sms);
  // Tensor Cores: tiles chosen at boost clocks, the power cap applied to the winner (below).
  const double cap = power_throttle(tensor_cores, peak, e_bytes, dev, c);
  const double throttle = tensor_cores ? 1.0 : cap;
  const double rate = peak * throttle;
  const double f = clock_hz(dev) * throttle;
  const double narrow = aligned ? 1.0 : c.tc_unaligned_eff;
  const double eta0 = (tensor_cores ? tc_eta(e_bytes, c) * narrow : c.gemm_eta0) * eff_scale;
  // Loading a tile's edges competes with its math in proportion to math per byte loaded: a path
  // x times the FP32 rate on elements half the size pays x/2 times the FP32 edge cost. Tensor
  // Core kernels stage operands through shared memory asynchronously: their own edge cost.
  const double edge = tensor_cores ? c.tc_edge : c.gemm_edge * (peak / dev.fp32) * (e_bytes / 4.0);
  const double regs = tensor_cores ? c.tc_regs : c.gemm_regs;
  const double tile_cycles = tensor_cores ? c.tc_tile_cycles : c.gemm_tile_cycles;

  // Operand traffic: every operand once if A and B fit in L2, more passes the further past.
  // Low-precision GEMMs write their output in 16 bits (BF16), not in their operands' type.
  const double out_e = tensor_cores ? std::max(e_bytes, 2.0) : e_bytes;
  const double ab = operand_bytes > 0 ? operand_bytes : batch * (m * k + k * n) * e_bytes;
  double traffic = ab + batch * m * n * out_e;
  if (dev.l2_bytes > 0 && ab > dev.l2_bytes)
    traffic += ab * c.gemm_l2_reread * std::log2(ab / dev.l2_bytes);
  const double bw = (tensor_cores ? c.tc_mem_eff * narrow : c.gemm_mem_eff) * dev.mem_bw;
  const double memory_s = traffic / bw;

  GemmPlan best;
  best.seconds = INFINITY;
  const Tile* tiles = tensor_cores ? kTensorTiles : kSimtTiles;
  const int num_tiles = tensor_cores ? int(std::size(kTensorTiles)) : int(std::size(kSimtTiles));
  for (int ti = 0; ti < num_tiles; ++ti) {
    const Tile t = tiles[ti];
    const double area = double(t.m) * t.n;
    const double eta = 1.0 / (1.0 / eta0 + edge * (t.m + t.n) / area);
    const int per_sm = std::clamp(static_cast<int>(regs / area), 1, 16);
    const double out_tiles = std::ceil(m / t.m) * std::ceil(n / t.n) * batch;
    for (int s : kSplits) {
      if (s > 1 && (k / s < kMinSliceK || out_tiles >= sms * per_sm)) break;
      const double slice = std::ceil(k / s);
      const double blocks = out_tiles * s;
      const double waves = std::ceil(blocks / (sms * per_sm));
      // A wave: the tiles' multiply-adds at the tile rate, then the epilogue writing each
      // output tile (FP32 partial sums under split-K) at the SM's share of DRAM bandwidth,
      // plus the fixed prologue and epilogue cycles.
      const double out_bytes = s > 1 ? 4.0 : out_e;
      const double wave_s = per_sm * 2.0 * area * slice / (eta * rate / sms) +
                            per_sm * area * out_bytes / (bw / sms) + tile_cycles / f;
      const double compute_s = waves * wave_s;
      // Split-K partial sums (FP32) are written, read back and summed by a second kernel.
      const double reduce_s = s > 1 ? (s + 1) * batch * m * n * 4.0 / bw + c.launch_s : 0.0;
      const double total = c.launch_s + std::max(compute_s, memory_s) + reduce_s;
      if (total < best.seconds) {
        best.tile_m = t.m;
        best.tile_n = t.n;
        best.split_k = s;
        best.tiles = blocks;
        best.tiles_per_sm = per_sm;
        best.waves = waves;
        best.compute_s = compute_s;
        best.memory_s = memory_s;
        best.reduce_s = reduce_s;
        best.seconds = total;
        best.memory_bound = memory_s > compute_s;
      }
    }
  }
  if (tensor_cores && cap < 1) {
    best.compute_s /= capped_share(best.compute_s, cap, sustained_power, c);
    best.seconds = c.launch_s + std::max(best.compute_s, best.memory_s) + best.reduce_s;
    best.memory_bound = best.memory_s > best.compute_s;
  }
  return best;
}

KernelEstimate kernel_time(const ModelOp& op, const DeviceSpec& dev, const MathMode& mode,
                           double flops, double bytes, const KernelCoefficients& c) {
  if (is_attention(op.type)) return attention_time(op, bytes, dev, mode, c);
  OpClass cls = op_class(op.type);
  if (cls == OpClass::kGemm) return matmul_time(op, flops, bytes, dev, mode, c);
  if (cls == OpClass::kConv) return conv_time(op, flops, bytes, dev, mode, c);
  if (is_row_op(op.type)) return row_time(op, bytes, dev, mode, c);
  return stream_time(flops, bytes, dev, mode, c);
}

}  // namespace orrery
