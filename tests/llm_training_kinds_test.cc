// Training kinds and MoE execution (strategies/parallel_plan.h): LoRA's frozen weights and
// adapters, selective recomputation by module and full recomputation of some layers,
// activation and optimizer offloading, dropless routing with imbalance, DeepEP's two-leg
// dispatch and grouped expert GEMMs: each checked by hand.
#include <gtest/gtest.h>

#include "common/errors.h"
#include "engine/replay.h"
#include "strategies/llm_memory.h"
#include "strategies/llm_pricing.h"
#include "strategies/llm_strategy.h"
#include "tests/llm_cluster.h"
#include "workloads/llm_config.h"

namespace orrery {
namespace {

const LlmConfig& llama() { return *find_llm("llama2_7b"); }  // h 4096, f 11008, 32 layers

// Fixed costs on `stages` stages: a layer's blocks `fwd` each forward and twice that backward.
LlmCosts fixed(double fwd = 1e-3, int stages = 1) {
  LlmCosts c;
  c.attention_fwd.seconds = c.mlp_fwd.seconds = fwd;
  c.attention_bwd.seconds = c.mlp_bwd.seconds = 2 * fwd;
  c.optimizer.assign(stages, BlockCost{});
  return c;
}

TEST(TrainingKinds, LoraFreezesTheBaseWeightsAndTrainsRankRAdapters) {
  ParallelPlan p;
  p.seq_len = 1024;
  const auto full = llm_memory(llama(), p);
  p.lora_rank = 16;
  // Per layer: QKV r (h + 3h), output r (h + h), gate/up r (h + 2f), down r (f + h).
  const double h = 4096, f = 11008, r = 16;
  const double adapters = r * (h + 3 * h) + r * (h + h) + r * (h + 2 * f) + r * (f + h);
  EXPECT_DOUBLE_EQ(lora_layer_parameters(llama(), p), adapters);
  const auto lora = llm_memory(llama(), p);
  EXPECT_DOUBLE_EQ(lora[0].trainable, 32 * adapters);
  // Frozen 16-bit weights plus the adapters' 2 bytes; gradients 2 and Adam 12 per adapter
  // parameter only.
  EXPECT_DOUBLE_EQ(lora[0].weights, full[0].weights + 2 * 32 * adapters);
  EXPECT_DOUBLE_EQ(lora[0].gradients, 2 * 32 * adapters);
  EXPECT_DOUBLE_EQ(lora[0].optimizer, 12 * 32 * adapters);
  // Backward: the base GEMMs' data gradients only (half of their backward), and the adapters'
  // two GEMMs each way. With every GEMM priced at its FLOPs, the layer's backward FLOPs are
  // the base forward's plus the adapters' 3 x 2 x rows x r x (in + out).
  const OpPricer by_flops = [](const ModelOp& op) { return op.flops * 1e-15; };
  ParallelPlan base = p;
  base.lora_rank = 0;
  const LlmCosts c0 = price_llm(llama(), base, by_flops);
  const LlmCosts c1 = price_llm(llama(), p, by_flops);
  const double linear_fwd = 2 * 1024 * (4 * h * h + 3 * h * f);
  EXPECT_NEAR(
      c0.attention_bwd.flops + c0.mlp_bwd.flops - (c1.attention_bwd.flops + c1.mlp_bwd.flops),
      linear_fwd - 2 * 2 * 1024 * adapters, 1e-6 * linear_fwd);
  EXPECT_NEAR(
      c1.attention_fwd.flops + c1.mlp_fwd.flops - (c0.attention_fwd.flops + c0.mlp_fwd.flops),
      2 * 1024 * adapters, 1e-9 * linear_fwd);
}

TEST(TrainingKinds, SelectiveRecomputationByModuleDropsWhatItRecomputes) {
  // LLaMA-2 7B, s 1024, b 1, no TP, bf16: per layer Korthikanti's terms generalized (no dropout):
  // norms' inputs 4sbh, the QKV and MLP inputs 4sbh, Q K V 6sbh, the projection's input 2sbh,
  // SwiGLU 6sbf, flash statistics 4as.
  const double s = 1024, h = 4096, f = 11008, a = 32;
  ParallelPlan p;
  p.seq_len = 1024;
  const double none = layer_activation_bytes(llama(), p);
  EXPECT_DOUBLE_EQ(none, (4 + 4 + 6 + 2) * s * h + 6 * s * f + 4 * a * s);
  p.recompute = Recompute::kSelective;
  p.recompute_modules = kRecomputeCoreAttention;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(llama(), p), none - 4 * a * s);
  p.recompute_modules = kRecomputeActivation;  // the product, the down projection's input
  EXPECT_DOUBLE_EQ(layer_activation_bytes(llama(), p), none - 2 * s * f);
  p.recompute_modules = kRecomputeMlp;  // the whole MLP inside
  EXPECT_DOUBLE_EQ(layer_activation_bytes(llama(), p), none - 6 * s * f);
  p.recompute_modules = kRecomputeNorm;  // the norms' outputs, the projections' inputs
  EXPECT_DOUBLE_EQ(layer_activation_bytes(llama(), p), none - 4 * s * h);
  // Full recomputation of 8 of each stage's 16 layers: 8 x 2sbh + 8 x everything.
  p = ParallelPlan{};
  p.pp = 2;
  p.global_batch = 2;
  p.seq_len = 1024;
  p.recompute = Recompute::kFull;
  p.recompute_layers = 8;
  const auto mem = llm_memory(llama(), p);
  EXPECT_NEAR(mem[1].activations, 8 * 2 * s * h + 8 * none + 4 * s * 32000, 1);
  // The MLP recomputed runs its forward again in each layer's backward.
  p = ParallelPlan{};
  p.seq_len = 1024;
  p.recompute = Recompute::kSelective;
  p.recompute_modules = kRecomputeMlp;
  const LlmCosts c = fixed();
  const testing::LlmCluster cl = testing::dgx_a100(1);
  LlmBuildOptions op_by_op;
  op_by_op.fuse_passes = false;
  const LlmStep step = build_llm_step(llama(), p, cl.gpus, c, {}, op_by_op);
  EXPECT_NEAR(replay_isolated(cl.source, step.graph, ReplayOptions{}).makespan, 32 * 7e-3, 1e-6);
}

TEST(TrainingKinds, OffloadingMovesActivationsAndTheOptimizerToTheHost) {
  ParallelPlan p;
  p.seq_len = 1024;
  const auto on_gpu = llm_memory(llama(), p);
  p.offload_layers = 24;  // of 32
  const double layer = layer_activation_bytes(llama(), p);
  const auto off = llm_memory(llama(), p);
  EXPECT_NEAR(on_gpu[0].activations - off[0].activations, 24 * layer, 1);
  const LlmCosts c = fixed();
  const testing::LlmCluster cl = testing::dgx_a100(1);
  LlmStep step = build_llm_step(llama(), p, cl.gpus, c, {});
  int down = 0, up = 0;
  for (const auto& op : step.graph.ops) {
    if (op.name.find(".offload") != std::string::npos) ++down;
    if (op.name.find(".reload") != std::string::npos &&
        op.name.find(".reloaded") == std::string::npos)
      ++up;
  }
  EXPECT_EQ(down, 24);
  EXPECT_EQ(up, 24);
  // 24 x 0.3 GiB each way over PCIe beside 6 ms of compute a layer: the step grows by less
  // than the copies would take in series.
  const double t = replay_isolated(cl.source, step.graph, ReplayOptions{}).makespan;
  EXPECT_GE(t, 32 * 6e-3);
  // ZeRO-Offload: no optimizer states on the GPU; the update runs on the CPU at 30 bytes per
  // parameter over the host's bandwidth.
  p = ParallelPlan{};
  p.seq_len = 1024;
  p.offload_optimizer = true;
  EXPECT_EQ(llm_memory(llama(), p)[0].optimizer, 0);
  step = build_llm_step(llama(), p, cl.gpus, c, {});
  const double params = llm_memory(llama(), p)[0].trainable;
  bool cpu_adam = false;
  for (const auto& op : step.graph.ops)
    if (op.name.find("optimizer.cpu") != std::string::npos) {
      cpu_adam = true;
      EXPECT_NEAR(op.duration, params * 30 / 50e9, 1e-9);
    }
  EXPECT_TRUE(cpu_adam);
}

TEST(MoeExecution, DeepEpCrossesTheNetworkOncePerServer) {
  // Mixtral (8 experts, top-2) with EP 8, then 16, over 2 DGX A100 servers, dp 16: NCCL's
  // all-to-all moves the 2 routed copies; DeepEP first one copy per distinct other server, then the
  // 2 copies inside the server. With 4 experts a server, a token picks 2 of 8: the chance it misses
  // a server is C(4,2)/C(8,2) = 6/28, so it reaches 2 (1 - 6/28) = 1.571 servers, half of them the
  // other one.
  const LlmConfig& mix = *find_llm("mixtral_8x7b");
  ParallelPlan p;
  p.dp = 16;
  p.ep = 8;
  p.seq_len = 256;
  check_parallel_plan(p, mix, 16, "test");
  const testing::LlmCluster cl = testing::dgx_a100(16, 2);
  const double token_bytes = 256.0 * 4096 * 2;
  p.moe_dispatcher = MoeDispatcher::kDeepEp;
  const LlmCosts c = fixed(0);
  LlmStep step = build_llm_step(mix, p, cl.gpus, c, {});
  for (const auto& coll : step.graph.collectives)
    if (coll.type == CollectiveType::kAllToAll) {
      EXPECT_EQ(coll.ranks.size(), 8u);
    }
  // Above, each EP group of 8 lies in one server: DeepEP is NCCL's all-to-all. EP 16 spans both.
  p.ep = 16;
  step = build_llm_step(mix, p, cl.gpus, c, {});
  double inter = 0, intra = 0;
  int n_inter = 0, n_intra = 0;
  for (const auto& coll : step.graph.collectives) {
    if (coll.type != CollectiveType::kAllToAll) continue;
    if (coll.ranks.size() == 2) inter = coll.bytes, ++n_inter;
    if (coll.ranks.size() == 8) intra = coll.bytes, ++n_intra;
  }
  // Per leg: 8 rails of the 2 GPUs of a local rank, 2 servers of 8 GPUs.
  EXPECT_GT(n_intra, 0);
  EXPECT_EQ(n_inter, 4 * n_intra);
  EXPECT_NEAR(inter, token_bytes * 2 * (1 - 6.0 / 28) / 2, 1e-6 * token_bytes);
  EXPECT_NEAR(intra, token_bytes * 2 * 7 / 8, 1e-6 * token_bytes);
  // Node-limited routing to one server: one copy crosses at most.
  p.moe_node_limit = 1;
  step = build_llm_step(mix, p, cl.gpus, c, {});
  for (const auto& coll : step.graph.collectives)
    if (coll.type == CollectiveType::kAllToAll && coll.ranks.size() == 2) {
      EXPECT_NEAR(coll.bytes, token_bytes * 1 / 2, 1e-6 * token_bytes);
    }
}

TEST(MoeExecution, FineGrainedExpertsRunAsAGroupedGemmOfSmallOnes) {
  // Qwen3 30B-A3B: 128 experts of 768, 8 per token; 4096 tokens on one GPU route 32,768 rows
  // over its 128 experts: 256 rows each. Priced per expert, a GEMM of 256 rows at a cost that
  // grows with fewer rows than linearly costs more than one GEMM of 32,768 rows.
  const LlmConfig& q = *find_llm("qwen3_30b_a3b");
  ParallelPlan p;
  p.seq_len = 4096;
  const double per_expert = 2 * 256.0 * 2048 * 2 * 768, one_gemm = 2 * 32768.0 * 2048 * 2 * 768;
  bool grouped = false, single = false;
  const LlmCosts c = price_llm(q, p, [&](const ModelOp& op) {
    grouped = grouped || op.flops == per_expert;
    single = single || op.flops == one_gemm;
    return 1e-6;
  });
  EXPECT_TRUE(grouped);
  EXPECT_FALSE(single);
  EXPECT_GT(c.mlp_fwd.seconds, 0);
}

TEST(MoeExecution, ExpertsFoldedOverTensorParallelGpus) {
  // Qwen3 30B-A3B on 8 GPUs, TP 2 x DP 4, experts whole (etp 1) over EP 8 folded across the TP
  // and data-parallel GPUs: each GPU holds 16 whole experts and dispatches its half of the 4096
  // tokens (8 copies each, 7/8 leaving); the MLP block has no TP collective (every layer MoE).
  const LlmConfig& q = *find_llm("qwen3_30b_a3b");
  ParallelPlan p;
  p.tp = 2;
  p.dp = 4;
  p.ep = 8;
  p.etp = 1;
  p.seq_len = 4096;
  p.sequence_parallel = true;
  check_parallel_plan(p, q, 8, "test");
  const double h = 2048;
  EXPECT_DOUBLE_EQ(layer_share(q, p).experts, 16 * 3 * h * 768);
  const LlmCosts c = fixed(0);
  const testing::LlmCluster cl = testing::dgx_a100(8);
  const LlmStep step = build_llm_step(q, p, cl.gpus, c, {});
  int a2a = 0, tp_colls = 0;
  for (const auto& coll : step.graph.collectives) {
    if (coll.type == CollectiveType::kAllToAll) {
      ++a2a;
      EXPECT_EQ(coll.ranks.size(), 8u);
      EXPECT_DOUBLE_EQ(coll.bytes, 2048 * h * 2 * 8 * 7 / 8);
    }
    if (coll.ranks.size() == 2) ++tp_colls;
  }
  EXPECT_EQ(a2a, 4 * 48);
  // In each of the 4 TP groups: the attention block's all-gather and reduce-scatter, each way.
  EXPECT_EQ(tp_colls, 4 * 4 * 48);
  // Without sequence parallelism, or with an expert TP Orrery does not model, refused.
  p.sequence_parallel = false;
  EXPECT_THROW(check_parallel_plan(p, q, 8, "test"), InfeasibleError);
  p.sequence_parallel = true;
  p.tp = 4;
  p.dp = 2;
  p.etp = 2;
  EXPECT_THROW(check_parallel_plan(p, q, 8, "test"), InfeasibleError);
}

// Memory terms as frameworks hold them, and the 4D plan Llama 3.1 405B trained with (The Llama
// 3 Herd of Models, section 3.3: TP 8 x PP 16 x DP 128 on 16,384 H100s, 8,192 tokens, 16
// sequences per replica, FSDP sharding gradients and optimizer states beside the pipeline,
// no activation recomputation): it fits the H100's 80 GiB.
TEST(TrainingKinds, MemoryTermsAsFrameworksHoldThem) {
  ParallelPlan p;
  p.seq_len = 1024;
  MemoryOptions plain;
  plain.fragmentation = 0;
  MemoryOptions fw;  // 5% fragmentation, FP32 gradients
  fw.fp32_grads = true;
  const auto a = llm_memory(llama(), p, plain);
  const auto b = llm_memory(llama(), p, fw);
  EXPECT_DOUBLE_EQ(b[0].gradients, 2 * a[0].gradients);
  EXPECT_DOUBLE_EQ(b[0].fragmentation, 0.05 * (b[0].activations + b[0].buffers));
  EXPECT_DOUBLE_EQ(b[0].total() - a[0].total(), a[0].gradients + b[0].fragmentation);

  const LlmConfig& m = *find_llm("llama3_405b");
  ParallelPlan q;
  q.tp = 8;
  q.pp = 16;
  q.dp = 128;
  q.sequence_parallel = true;
  q.global_batch = 2048;
  q.schedule = PipelineSchedule::kInterleaved;
  q.virtual_stages = 8;
  q.account_for_embedding_and_loss = true;
  q.zero = 2;
  check_parallel_plan(q, m, 16384, "llama3");
  const MemoryVerdict v = check_memory(m, q, 80.0 * (1 << 30));
  EXPECT_TRUE(v.fits) << v.message();
  // 16 micro-batches per replica: a middle stage's 8 one-layer chunks all warm up before the
  // first backward, 128 layer-micro-batches.
  EXPECT_EQ(llm_memory(m, q)[1].in_flight, 128);
}

// FSDP in a 4D plan (ZeRO-3 beside pipeline stages and TP, refused before): each stage gathers
// its layers' weights over the data-parallel pair before each forward and backward and
// reduce-scatters their gradients after each backward. LLaMA-2 7B, TP 2 x PP 2 x DP 2, one
// micro-batch: 16 layers a stage x 2 passes x 2 TP ranks x 2 stages = 128 gathers, 64
// reduce-scatters, each a layer's TP share in 16 bits.
TEST(TrainingKinds, FsdpRunsBesidePipelineStagesAndTensorParallelism) {
  ParallelPlan p;
  p.tp = 2;
  p.pp = 2;
  p.dp = 2;
  p.zero = 3;
  p.seq_len = 512;
  check_parallel_plan(p, llama(), 8, "test");
  const testing::LlmCluster cl = testing::dgx_a100(8);
  const LlmStep step = build_llm_step(llama(), p, cl.gpus, fixed(1e-3, 2), {});
  int gathers = 0, scatters = 0;
  double bytes = 0;
  for (const auto& coll : step.graph.collectives) {
    if (coll.ranks.size() != 2) continue;
    if (coll.type == CollectiveType::kAllGather) ++gathers, bytes = coll.bytes;
    if (coll.type == CollectiveType::kReduceScatter) ++scatters;
  }
  EXPECT_EQ(gathers, 128);
  EXPECT_EQ(scatters, 64);
  EXPECT_DOUBLE_EQ(bytes, 2 * layer_share(llama(), p).dense);
  EXPECT_GT(replay_isolated(cl.source, step.graph, ReplayOptions{}).makespan, 32 * 6e-3 / 2);
}

}  // namespace
}  // namespace orrery
