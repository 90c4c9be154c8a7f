// The GPU kernel models (models/kernel_model.h): their mechanisms on hand-computed cases, the
// coefficients file, and the shipped fit against the measured kernel data.
#include "models/kernel_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "common/errors.h"
#include "models/cost_model.h"
#include "models/cost_table.h"
#include "models/kernel_coefficients.h"
#include "test_util.h"
#include "workloads/op_query.h"

namespace orrery {
namespace {

// Coefficients that make the GEMM model's arithmetic easy to follow by hand: tiles at 80% of
// peak whatever their size, each SM holding 128x128 accumulators (one 128x128 tile, or sixteen
// 32x32 tiles, so every tile size does the same work per wave), no fixed cycles, no launch
// time, memory free.
KernelCoefficients plain() {
  KernelCoefficients c;
  c.gemm_eta0 = 0.8;
  c.gemm_edge = 0;
  c.gemm_regs = 128 * 128;
  c.gemm_tile_cycles = 0;
  c.gemm_mem_eff = 1;
  c.gemm_l2_reread = 0;
  c.launch_s = 0;
  c.pj_per_flop_16nm = 0;  // no power cap
  return c;
}

DeviceSpec gpu(int sms) {
  DeviceSpec d = device_spec("A100-SXM4-80GB");
  d.sms = sms;
  d.mem_bw = 1e24;  // memory never bounds
  return d;
}

ModelOp matmul(int64_t m, int64_t n, int64_t k, DType t = DType::kFP32) {
  return query_op(
      "linear",
      {{"B", "1"}, {"M", std::to_string(m)}, {"N", std::to_string(n)}, {"K", std::to_string(k)}}, t,
      "test");
}

TEST(KernelModel, OneFullWaveOfTilesRunsAtTheTileRate) {
  // 108 SMs, M = 108 x 128, N = 128: 108 tiles of 128x128 fill one wave exactly, so the GEMM
  // takes its FLOPs at 80% of the FP32 peak: 2 x 13824 x 128 x 4096 / (0.8 x 19.5e12).
  const DeviceSpec d = gpu(108);
  const GemmPlan g = gemm_time(1, 108 * 128, 128, 4096, 4, d.fp32, false, d, plain());
  EXPECT_EQ(g.tile_m, 128);
  EXPECT_EQ(g.tile_n, 128);
  EXPECT_EQ(g.waves, 1);
  EXPECT_NEAR(g.seconds, 2.0 * 13824 * 128 * 4096 / (0.8 * d.fp32), 1e-15);
}

TEST(KernelModel, TimeStepsWhenTilesCrossAMultipleOfTheSmCount) {
  // One more row of output adds 0.7% of the FLOPs but a 109th tile, and a second wave: with
  // smaller tiles too, since an SM's wave holds the same area of output whatever the tile.
  const DeviceSpec d = gpu(108);
  const KernelCoefficients c = plain();
  const double full = gemm_time(1, 108 * 128, 128, 4096, 4, d.fp32, false, d, c).seconds;
  const GemmPlan over = gemm_time(1, 108 * 128 + 1, 128, 4096, 4, d.fp32, false, d, c);
  EXPECT_NEAR(over.seconds / full, 2.0, 1e-9);
  EXPECT_EQ(over.waves, 2);
  // Within a wave, time does not shrink with the tile count: 107 tiles take as long as 108
  // (split 2 ways they make 214 blocks, two waves of half the work).
  const double fewer = gemm_time(1, 107 * 128, 128, 4096, 4, d.fp32, false, d, c).seconds;
  EXPECT_NEAR(fewer, full, full * 1e-9);
  // The step sits at the SM count: the same GEMM on 109 SMs has no second wave.
  const DeviceSpec d109 = gpu(109);
  EXPECT_EQ(gemm_time(1, 108 * 128 + 1, 128, 4096, 4, d109.fp32, false, d109, c).waves, 1);
}

TEST(KernelModel, SplitKFillsAGpuThatOneOutputTileWouldLeaveIdle) {
  // A 128x128 output with K = 65536: one tile would use one SM of 108; split 32 ways (the most
  // the library splits) it uses 32 SMs and adds a reduction of 33 FP32 passes over the output.
  const DeviceSpec d = gpu(108);
  const KernelCoefficients c = plain();
  const GemmPlan g = gemm_time(1, 128, 128, 65536, 4, d.fp32, false, d, c);
  EXPECT_EQ(g.split_k, 32);
  EXPECT_EQ(g.tile_m, 128);
  const double one_tile = 2.0 * 128 * 128 * 65536 / (0.8 * d.fp32 / 108);
  EXPECT_NEAR(g.compute_s, one_tile / 32, one_tile * 1e-12);
  EXPECT_NEAR(g.reduce_s, 33 * 128 * 128 * 4.0 / d.mem_bw, 1e-15);
}

TEST(KernelModel, EveryKernelPaysTheLaunchFloor) {
  const KernelCoefficients& c = shipped_kernel_coefficients();
  ASSERT_GT(c.launch_s, 0);
  const CostModel cost;
  const DeviceSpec d = device_spec("H100-SXM5");
  for (const char* op : {"add", "relu", "softmax", "ln"}) {
    const ModelOp tiny = query_op(op, {{"B", "1"}, {"H", "1"}}, DType::kFP32, "test");
    const OpEstimate e = cost.estimate(tiny, d);
    EXPECT_EQ(e.source, EstimateSource::kKernelModel) << op;
    EXPECT_GE(e.seconds, c.launch_s) << op;
    EXPECT_LT(e.seconds, c.launch_s * 1.01) << op;  // a few bytes add next to nothing
  }
  EXPECT_GE(cost.estimate(matmul(1, 1, 1), d).seconds, c.launch_s);
}

TEST(KernelModel, StreamingKernelsMoveTheirBytesAtTheMemoryTypesBandwidth) {
  // add of two 4096 x 4096 FP32 tensors: 3 x 64 MiB at the HBM efficiency of the fit.
  const KernelCoefficients& c = shipped_kernel_coefficients();
  const DeviceSpec a100 = device_spec("A100-SXM4-80GB");
  const DeviceSpec t4 = device_spec("T4");
  const ModelOp add = query_op("add", {{"B", "4096"}, {"H", "4096"}}, DType::kFP32, "test");
  const double bytes = 3.0 * 4096 * 4096 * 4;
  const CostModel cost;
  EXPECT_NEAR(cost.estimate(add, a100).seconds, c.launch_s + bytes / (c.hbm_eff * a100.mem_bw),
              1e-12);
  EXPECT_NEAR(cost.estimate(add, t4).seconds, c.launch_s + bytes / (c.gddr_eff * t4.mem_bw), 1e-12);
}

TEST(KernelModel, PowerCapHoldsLowPowerCardsBelowTheirBoostPeak) {
  const KernelCoefficients& c = shipped_kernel_coefficients();
  // T4: 70 W on 12 nm; the measured data shows it sustaining about a third of its 8.1 TFLOP/s
  // on long SGEMMs. The A100 (250 W on 7 nm) and the H100 (700 W on 4 nm) run at peak.
  const DeviceSpec t4 = device_spec("T4");
  EXPECT_NEAR(sustained_fp32(t4, c), 70.0 / (c.pj_per_flop_16nm * 1e-12 * 12 / 16), 1);
  EXPECT_LT(sustained_fp32(t4, c), 0.8 * t4.fp32);
  EXPECT_EQ(sustained_fp32(device_spec("A100-PCIe-40GB"), c), device_spec("A100-PCIe-40GB").fp32);
  EXPECT_EQ(sustained_fp32(device_spec("H100-SXM5"), c), device_spec("H100-SXM5").fp32);
  DeviceSpec no_power = t4;
  no_power.tdp_w = 0;
  EXPECT_EQ(sustained_fp32(no_power, c), t4.fp32);
}

TEST(KernelModel, PrecisionPathFollowsPyTorchDefaults) {
  // FP32 matmul stays on CUDA cores (allow_tf32 off), FP32 convolution runs as TF32 on Tensor
  // Cores (cudnn.allow_tf32 on), BF16 matmul on Tensor Cores; a V100 has no TF32.
  const CostModel cost;
  const DeviceSpec a100 = device_spec("A100-SXM4-80GB");
  auto k = cost.kernel_estimate(matmul(4096, 4096, 4096), a100);
  ASSERT_TRUE(k);
  EXPECT_FALSE(k->mode.tensor_cores);
  EXPECT_NE(k->detail.find("fp32 SIMT"), std::string::npos) << k->detail;
  const ModelOp conv = query_op("conv",
                                {{"B", "32"},
                                 {"in_channels", "64"},
                                 {"out_channels", "64"},
                                 {"kernel_size", "3"},
                                 {"input_size", "56"},
                                 {"stride", "1"},
                                 {"padding", "1"}},
                                DType::kFP32, "test");
  k = cost.kernel_estimate(conv, a100);
  ASSERT_TRUE(k);
  EXPECT_TRUE(k->mode.tensor_cores);
  EXPECT_EQ(k->mode.dtype, DType::kTF32);
  EXPECT_EQ(k->model, "conv implicit-gemm");  // no Winograd on Tensor Cores
  k = cost.kernel_estimate(conv, device_spec("V100-SXM2"));
  EXPECT_FALSE(k->mode.tensor_cores);
  k = cost.kernel_estimate(matmul(4096, 4096, 4096, DType::kBF16), a100);
  EXPECT_TRUE(k->mode.tensor_cores);
  // Tensor Cores make the same GEMM much faster than SIMT FP32.
  EXPECT_LT(k->seconds * 5, cost.kernel_estimate(matmul(4096, 4096, 4096), a100)->seconds);
}

TEST(KernelModel, WinogradTakesThreeByThreeStrideOneFp32Convolutions) {
  const CostModel cost;
  const DeviceSpec v100 = device_spec("V100-SXM2");
  auto conv = [](int kernel, int stride) {
    return query_op("conv",
                    {{"B", "64"},
                     {"in_channels", "256"},
                     {"out_channels", "256"},
                     {"kernel_size", std::to_string(kernel)},
                     {"input_size", "28"},
                     {"stride", std::to_string(stride)},
                     {"padding", "1"}},
                    DType::kFP32, "test");
  };
  EXPECT_EQ(cost.kernel_estimate(conv(3, 1), v100)->model, "conv winograd");
  EXPECT_EQ(cost.kernel_estimate(conv(3, 2), v100)->model, "conv implicit-gemm");
  EXPECT_EQ(cost.kernel_estimate(conv(1, 1), v100)->model, "conv implicit-gemm");
}

TEST(KernelModel, ConvolutionBackwardPassesAreGemmsOfTheirOwnShape) {
  // ResNet-50's 3x3 conv of stage 3 (256 channels at 14x14, batch 64) on a V100: the
  // backward-weight pass reduces over N*P*Q = 12544 and cannot use Winograd, so it costs more
  // than the forward; backward-data is the forward with the channels exchanged (here equal),
  // so it costs the same.
  const CostModel cost;
  const DeviceSpec v100 = device_spec("V100-SXM2");
  ModelOp fwd, data, filter;
  fwd.type = "conv2d";
  fwd.inputs = {{64, 256, 14, 14}, {256, 256, 3, 3}};
  fwd.output = {64, 256, 14, 14};
  fwd.attrs = {{"stride_h", 1}, {"stride_w", 1}, {"pad_h", 1}, {"pad_w", 1}};
  data = fwd;
  data.type = "conv2d_bwd_data";
  data.inputs = {{64, 256, 14, 14}, {256, 256, 3, 3}};
  filter = fwd;
  filter.type = "conv2d_bwd_filter";
  filter.inputs = {{64, 256, 14, 14}, {64, 256, 14, 14}};
  filter.output = {256, 256, 3, 3};
  const double f = cost.kernel_estimate(fwd, v100)->seconds;
  EXPECT_DOUBLE_EQ(cost.kernel_estimate(data, v100)->seconds, f);
  const auto w = cost.kernel_estimate(filter, v100);
  EXPECT_EQ(w->model, "conv implicit-gemm");
  EXPECT_GT(w->seconds, f);
}

// A strided backward-data pass gathers, for each input pixel, only the filter taps that reach
// it: ceil(3/2)^2 = 4 of 9 under stride 2, so it does the forward's multiply-adds and not 9/4 of
// them; and an implicit GEMM reads its tensors, not the R x S times larger im2col matrix. With
// plain coefficients (no fixed cycles, memory at full bandwidth, no L2 re-reads) both are exact.
TEST(KernelModel, StridedBackwardDataGathersOnlyTheTapsThatReachAPixel) {
  const KernelCoefficients c = plain();
  const DeviceSpec dev = gpu(80);
  auto conv = [](const char* type, int64_t stride) {
    ModelOp op;
    op.type = type;
    const int64_t p = 28 / stride;
    if (std::string(type) == "conv2d") {
      op.inputs = {{256, 128, 28, 28}, {128, 128, 3, 3}};
      op.output = {256, 128, p, p};
    } else {
      op.inputs = {{256, 128, p, p}, {128, 128, 3, 3}};
      op.output = {256, 128, 28, 28};
    }
    op.attrs = {{"stride_h", stride}, {"stride_w", stride}, {"pad_h", 1}, {"pad_w", 1}};
    return op;
  };
  const MathMode mode{DType::kFP32, false, true, false};
  auto run = [&](const ModelOp& op) { return kernel_time(op, dev, mode, 0, 0, c); };
  // Stride 2: 14 x 14 outputs, the forward's GEMM 256 x 196 rows x 128 x (128 x 9); backward-
  // data's 256 x 784 rows x 128 x (128 x 4): 784 x 4 = 196 x 16, 16/9 of the forward's
  // multiply-adds (the taps of the padded edge pixels), where all 9 taps would be 4 times that.
  const KernelEstimate fwd = run(conv("conv2d", 2)), data = run(conv("conv2d_bwd_data", 2));
  EXPECT_NEAR(data.gemm.compute_s / fwd.gemm.compute_s, 784.0 * 4 / (196 * 9), 0.02);
  // Traffic: dy, the weights and dx once, FP32.
  const double bytes = 4.0 * (256 * 128 * 14 * 14 + 128 * 128 * 9 + 256 * 128 * 28 * 28);
  EXPECT_NEAR(data.gemm.memory_s * dev.mem_bw, bytes, 1e-9 * bytes);
}

TEST(KernelModel, TensorCorePathReproducesPublishedAchievableMatmulFlops) {
  // Maximum Achievable Matmul FLOPS, BF16 (Stas Bekman, "Machine Learning Engineering Open
  // Book", MAMF comparison table), a check outside the fitting data (scripts/fit_tensor_kernels.py
  // fits AIConfigurator's TensorRT-LLM GEMMs): each within 10%.
  const CostModel cost;
  struct Case {
    const char* device;
    int64_t m, n, k;
    double tflops;
  } cases[] = {{"A100-SXM4-80GB", 1024, 10240, 5120, 271.2},
               {"A100-PCIe-80GB", 2048, 5120, 6144, 252.9},
               {"H100-SXM5", 2048, 2048, 13312, 794.5}};
  for (const Case& c : cases) {
    const double t =
        cost.estimate(matmul(c.m, c.n, c.k, DType::kBF16), device_spec(c.device)).seconds;
    const double tflops = 2.0 * c.m * c.n * c.k / t / 1e12;
    EXPECT_NEAR(tflops / c.tflops, 1.0, 0.10) << c.device << ": " << tflops;
  }
}

// Measured rows (AIConfigurator, H100 SXM, bf16): M = 4353 is off the alignment and used to go
// to CUDA cores at 8x the time; it runs on Tensor Cores with narrower loads, close to its aligned
// neighbour (39.3 ms measured, 4352: 39.7 ms), and an unpadded vocabulary's output layer
// likewise.
TEST(KernelModel, UnalignedGemmsStayOnTensorCores) {
  const CostModel cost;
  const DeviceSpec h100 = device_spec("H100-SXM5");
  const auto odd = cost.kernel_estimate(matmul(4353, 65536, 51200, DType::kBF16), h100);
  const auto even = cost.kernel_estimate(matmul(4352, 65536, 51200, DType::kBF16), h100);
  EXPECT_TRUE(odd->mode.tensor_cores);
  EXPECT_FALSE(odd->mode.aligned);
  EXPECT_TRUE(even->mode.aligned);
  EXPECT_GT(odd->seconds, even->seconds);
  EXPECT_LT(odd->seconds, 1.3 * even->seconds);
  EXPECT_NEAR(odd->seconds / 39.3e-3, 1.0, 0.25);
  const double vocab_odd =
      cost.kernel_estimate(matmul(4096, 12564, 12288, DType::kBF16), h100)->seconds;
  const double vocab_even =
      cost.kernel_estimate(matmul(4096, 12568, 12288, DType::kBF16), h100)->seconds;
  EXPECT_LT(vocab_odd, 1.3 * vocab_even);
}

// The Tensor Core power cap: a board allowed half its peak by its energy per flop runs a
// training step's kernels (sustained) at half the rate; a kernel timed alone runs at boost for
// about power_window_s, so a short one is barely slowed and a long one almost fully.
TEST(KernelModel, TensorCorePowerCapActsOnSustainedPower) {
  DeviceSpec h100 = device_spec("H100-SXM5");
  h100.mem_bw = 1e24;  // compute alone
  KernelCoefficients c;
  c.tc_eta16 = 0.8;
  c.tc_edge = 0;
  c.tc_tile_cycles = 0;
  c.launch_s = 0;
  c.tc_bits_exponent = 1;
  c.tc_power_window_s = 1e-3;
  // cap = tdp / (pj x 1e-12 x 4/16 x peak) = 0.5
  c.tc_pj_per_flop_16nm = 700.0 / (0.5 * 0.25 * h100.bf16_tc * 1e-12);
  auto run = [&](double m, bool sustained) {
    return gemm_time(1, m, 8192, 8192, 2, h100.bf16_tc, true, h100, c, 1.0, true, sustained);
  };
  KernelCoefficients free = c;
  free.tc_pj_per_flop_16nm = 0;
  for (double m : {1024.0, 65536.0}) {
    const double open = gemm_time(1, m, 8192, 8192, 2, h100.bf16_tc, true, h100, free).seconds;
    EXPECT_NEAR(run(m, true).seconds / open, 2.0, 1e-9) << m;
    const double alone = run(m, false).seconds / open;
    // Of the unthrottled time t, w = t / (t + 1 ms) is capped: the rate is 1 - (1 - 0.5) w.
    const double w = open / (open + 1e-3);
    EXPECT_NEAR(alone, 1.0 / (1.0 - 0.5 * w), 1e-6) << m;
  }
  // FP8 operands take half the energy per flop (bits_exponent 1) at twice the peak: the same
  // share of it is capped.
  EXPECT_NEAR(
      gemm_time(1, 65536, 8192, 8192, 1, h100.fp8_tc, true, h100, c, 1.0, true, true).seconds /
          gemm_time(1, 65536, 8192, 8192, 1, h100.fp8_tc, true, h100, free).seconds,
      2.0, 1e-3);  // the datasheet's FP8 peak is 2.0001 x its BF16 peak
}

// Attention as one fused kernel: prefill compute-bound on Tensor Cores, decode bound by reading
// the KV cache (B x KV x S_kv x D x 2 tensors x 2 bytes) at DRAM bandwidth.
TEST(KernelModel, AttentionPrefillComputesAndDecodeStreamsTheKvCache) {
  const CostModel cost;
  const DeviceSpec h100 = device_spec("H100-SXM5");
  auto attention = [&](int64_t b, int64_t s, int64_t skv, int64_t h, int64_t kv, int64_t d) {
    return query_op("attention",
                    {{"B", std::to_string(b)},
                     {"S", std::to_string(s)},
                     {"S_kv", std::to_string(skv)},
                     {"H", std::to_string(h)},
                     {"KV", std::to_string(kv)},
                     {"D", std::to_string(d)}},
                    DType::kBF16, "test");
  };
  const auto prefill = cost.kernel_estimate(attention(4, 8192, 8192, 32, 8, 128), h100);
  EXPECT_EQ(prefill->model, "attention");
  EXPECT_FALSE(prefill->memory_bound);
  EXPECT_TRUE(prefill->mode.tensor_cores);
  // Below the Tensor Core peak, above a tenth of it.
  const double flops = attention(4, 8192, 8192, 32, 8, 128).flops;
  EXPECT_GT(prefill->seconds, flops / h100.bf16_tc);
  EXPECT_LT(prefill->seconds, 10 * flops / h100.bf16_tc);
  const ModelOp dec = attention(64, 1, 32768, 32, 8, 128);
  const auto decode = cost.kernel_estimate(dec, h100);
  EXPECT_TRUE(decode->memory_bound);
  const double kv_bytes = 64.0 * 8 * 32768 * 128 * 2 * 2;
  EXPECT_GT(decode->seconds, kv_bytes / h100.mem_bw);
  EXPECT_LT(decode->seconds, 2 * kv_bytes / h100.mem_bw);
  // Doubling the sequence of a long prefill roughly quadruples causal work: time follows.
  const double longer = cost.kernel_estimate(attention(4, 16384, 16384, 32, 8, 128), h100)->seconds;
  EXPECT_NEAR(longer / prefill->seconds, 4.0, 0.6);
  // No queries or no keys: an empty kernel, not a NaN.
  EXPECT_DOUBLE_EQ(cost.kernel_estimate(attention(1, 0, 0, 8, 8, 64), h100)->seconds,
                   cost.coefficients().launch_s);
  // Backward does 5 products to forward's 2.
  ModelOp bwd = attention(4, 8192, 8192, 32, 8, 128);
  bwd.type = "attention_bwd";
  const double ratio = cost.kernel_estimate(bwd, h100)->seconds / prefill->seconds;
  EXPECT_GT(ratio, 2.0);
  EXPECT_LT(ratio, 4.5);
}

// The attention kernel a framework calls: FlashAttention-2's synchronous MMA reaches two thirds
// of the Tensor Core peak on Hopper and datacenter Blackwell (FlashAttention-3's measurement), all
// of it on Ampere and workstation Blackwell; kernels that cannot run there are refused.
TEST(KernelModel, AttentionImplSetsTheMmaPathAndWhereItRuns) {
  KernelCoefficients c = CostModel().coefficients();
  c.attn_exp_share = 0;  // products only, so times scale with the MMA rate exactly
  c.attn_block_cycles = 0;
  c.launch_s = 0;
  c.tc_pj_per_flop_16nm = 0;
  auto attention = [](const std::string& impl, DType t = DType::kBF16) {
    std::map<std::string, std::string> f = {{"B", "4"}, {"S", "8192"}, {"H", "32"}, {"D", "128"}};
    if (!impl.empty()) f["impl"] = impl;
    return query_op("attention", f, t, "test");
  };
  auto seconds = [&](const ModelOp& op, const DeviceSpec& dev) {
    const KernelEstimate e =
        kernel_time(op, dev, math_mode(op, dev, false, false), op.flops, op.bytes, c);
    EXPECT_FALSE(e.memory_bound) << dev.name;
    return e.seconds;
  };
  for (const char* name : {"H100-SXM5", "B200", "A100-SXM4-80GB", "RTX-PRO-6000-Server"}) {
    const DeviceSpec dev = device_spec(name);
    const double base = seconds(attention(""), dev);
    const bool async = dev.compute_capability >= 9 && dev.compute_capability < 12;
    EXPECT_NEAR(seconds(attention("flash2"), dev) / base, async ? 1.5 : 1.0, 1e-9) << name;
    EXPECT_DOUBLE_EQ(seconds(attention("cudnn"), dev), base) << name;
    EXPECT_DOUBLE_EQ(seconds(attention("auto"), dev), base) << name;
  }
  const DeviceSpec h100 = device_spec("H100-SXM5");
  EXPECT_DOUBLE_EQ(seconds(attention("flash3"), h100), seconds(attention(""), h100));
  auto refused = [&](const ModelOp& op, const char* dev, const char* expect) {
    const DeviceSpec d = device_spec(dev);
    try {
      kernel_time(op, d, math_mode(op, d, false, false), op.flops, op.bytes, c);
      ADD_FAILURE() << "priced " << op.name << " on " << dev;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(expect), std::string::npos) << e.what();
    }
  };
  refused(attention("flash3"), "A100-SXM4-80GB", "Hopper (compute capability 9.0) only; A100");
  refused(attention("flash3"), "B200", "B200 is 10.0");
  refused(attention("flash2"), "V100-SXM2", "8.0 or later; V100-SXM2 is 7.0");
  refused(attention("cudnn"), "T4", "8.0 or later; T4 is 7.5");
  refused(attention("flash2", DType::kFP8), "H100-SXM5", "fp16 and bf16 only, not fp8");
  ModelOp odd = attention("");
  odd.attrs["impl"] = 7;
  refused(odd, "H100-SXM5", "attr impl 7 names no attention kernel");
  EXPECT_THROW(attention("flash4"), InputError);
}

TEST(KernelModel, DevicesWithoutSmsOrMemoryTypeFallBackToTheRoofline) {
  const CostModel cost;
  const DeviceSpec cpu = device_spec("Xeon-vCPU-1T");
  EXPECT_FALSE(kernel_model_applies(cpu));
  EXPECT_EQ(cost.estimate(matmul(64, 64, 64), cpu).source, EstimateSource::kAnalytic);
  CostModelOptions o;
  o.model = AnalyticModel::kRoofline;
  EXPECT_EQ(CostModel(o).estimate(matmul(64, 64, 64), device_spec("H100")).source,
            EstimateSource::kAnalytic);
}

TEST(KernelCoefficients, FileRoundTripsAndBadValuesNameTheKey) {
  const KernelCoefficients& c = shipped_kernel_coefficients();
  ASSERT_FALSE(c.sources.empty());
  const KernelCoefficients back = parse_kernel_coefficients(kernel_coefficients_yaml(c), "x.yaml");
  EXPECT_EQ(back.gemm_eta0, c.gemm_eta0);
  EXPECT_EQ(back.winograd_ratio, c.winograd_ratio);
  EXPECT_EQ(back.overlap_k_conv, c.overlap_k_conv);
  std::string text = kernel_coefficients_yaml(c);
  const std::string key = "  eta0: ";
  std::string bad = text;
  bad.replace(bad.find(key), bad.find('\n', bad.find(key)) - bad.find(key), "  eta0: 1.5");
  try {
    parse_kernel_coefficients(bad, "fit.yaml");
    FAIL() << "an efficiency of 1.5 was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("fit.yaml"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("eta0"), std::string::npos) << e.what();
  }
  std::string missing = text;
  missing.erase(missing.find("rows:"));
  EXPECT_THROW(parse_kernel_coefficients(missing, "fit.yaml"), InputError);
  EXPECT_THROW(parse_kernel_coefficients(text + "extra:\n  x: 1\n", "fit.yaml"), InputError);
}

TEST(KernelCoefficients, ScenarioSelectsTheModel) {
  auto parse = [](const std::string& yaml) {
    YAML::Node n = YAML::Load(yaml);
    return parse_cost_model(YamlMap(n, "s.yaml"), "cost_model");
  };
  EXPECT_EQ(parse("cost_model: roofline").model, AnalyticModel::kRoofline);
  EXPECT_EQ(parse("cost_model: kernel").model, AnalyticModel::kKernel);
  EXPECT_EQ(parse("{}").model, AnalyticModel::kKernel);
  EXPECT_EQ(parse("cost_model: {model: roofline, efficiency: 0.6}").model,
            AnalyticModel::kRoofline);
  EXPECT_THROW(parse("cost_model: fast"), InputError);
  EXPECT_THROW(parse("cost_model: {model: fast}"), InputError);
  EXPECT_THROW(parse("cost_model: {kernel_coefficients: /no/such/file.yaml}"), InputError);
}

}  // namespace
}  // namespace orrery
