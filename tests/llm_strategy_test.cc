// Language models under parallel plans as op graphs (strategies/llm_strategy.h): the
// tensor-parallel collectives of a layer counted and sized by hand, the pipeline bubble
// (p - 1) / (m + p - 1) of GPipe and 1F1B on uniform stages out of the replay, the
// data-parallel gradient reductions (all-reduce, or ZeRO-1's reduce-scatter and all-gather),
// recomputation's extra forward, and a full plan replayed on a DGX A100.
#include "strategies/llm_strategy.h"

#include <gtest/gtest.h>

#include "common/errors.h"
#include "common/h5_util.h"
#include "engine/graph_check.h"
#include "engine/replay.h"
#include "platforms/platform_spec.h"
#include "scenario/scenario.h"
#include "tests/llm_cluster.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

using Cluster = testing::LlmCluster;
using testing::dgx_a100;

const LlmConfig& llama() { return *find_llm("llama2_7b"); }

// Fixed costs: a layer's blocks 1 ms forward and 2 ms backward each, nothing else.
LlmCosts uniform(int stages) {
  LlmCosts c;
  c.attention_fwd.seconds = c.mlp_fwd.seconds = 1e-3;
  c.attention_bwd.seconds = c.mlp_bwd.seconds = 2e-3;
  c.attention_core_fwd.seconds = 0.25e-3;
  c.optimizer.assign(stages, BlockCost{});
  return c;
}

struct Count {
  int n = 0;
  double bytes = 0;
};
Count collectives(const ExecutionGraph& g, CollectiveType type, int group) {
  Count c;
  for (const auto& coll : g.collectives)
    if (coll.type == type && static_cast<int>(coll.ranks.size()) == group) {
      ++c.n;
      c.bytes = coll.bytes;
    }
  return c;
}

TEST(LlmStrategy, TensorParallelCollectivesPerLayer) {
  // LLaMA-2 7B (32 layers), TP 2, one micro-batch of 1 x 512 tokens: an all-reduce of the
  // block's output [512, 4096] in 16 bits after each of the two blocks, forward and backward:
  // 4 per layer, 4 MiB each. Full recomputation runs each layer's forward again in backward,
  // with its two all-reduces.
  ParallelPlan p;
  p.tp = 2;
  p.seq_len = 512;
  Cluster c = dgx_a100(2);
  LlmStep step = build_llm_step(llama(), p, c.gpus, uniform(1), {});
  Count ar = collectives(step.graph, CollectiveType::kAllReduce, 2);
  EXPECT_EQ(ar.n, 4 * 32);
  EXPECT_EQ(ar.bytes, 512.0 * 4096 * 2);
  EXPECT_EQ(step.tokens, 512);
  p.recompute = Recompute::kFull;
  step = build_llm_step(llama(), p, c.gpus, uniform(1), {});
  EXPECT_EQ(collectives(step.graph, CollectiveType::kAllReduce, 2).n, 6 * 32);
  // Sequence parallelism: a reduce-scatter after and an all-gather before each block, both ways.
  p.recompute = Recompute::kNone;
  p.sequence_parallel = true;
  step = build_llm_step(llama(), p, c.gpus, uniform(1), {});
  EXPECT_EQ(collectives(step.graph, CollectiveType::kAllReduce, 2).n, 0);
  EXPECT_EQ(collectives(step.graph, CollectiveType::kReduceScatter, 2).n, 4 * 32);
  EXPECT_EQ(collectives(step.graph, CollectiveType::kAllGather, 2).n, 4 * 32);
}

// Tensor-parallel communication overlap (Megatron's --tp-comm-overlap): each sequence-parallel
// all-gather and reduce-scatter splits into a chunk on the critical path (1/tp of the bytes)
// and the rest beside the GEMM it feeds or drains, so with GEMMs longer than the transfers
// only the chunks stay exposed; op by op and in the fused analytical passes alike.
TEST(LlmStrategy, TensorParallelOverlapHidesAllButAChunkBehindTheGemms) {
  ParallelPlan p;
  p.tp = 8;
  p.seq_len = 4096;
  p.sequence_parallel = true;
  check_parallel_plan(p, llama(), 8, "test");
  LlmCosts costs = uniform(1);
  // Each block's first and last GEMM 0.4 ms of its 1 ms forward (and 0.8 of 2 ms backward).
  for (BlockCost* g : {&costs.attention_in_gemm, &costs.attention_out_gemm, &costs.mlp_in_gemm,
                       &costs.mlp_out_gemm})
    g->seconds = 0.4e-3;
  for (BlockCost* g : {&costs.attention_in_dgrad, &costs.attention_out_dgrad, &costs.mlp_in_dgrad,
                       &costs.mlp_out_dgrad})
    g->seconds = 0.8e-3;
  Cluster c = dgx_a100(8);
  const double block = 4096.0 * 4096 * 2;  // [s, h] in 16 bits
  for (bool analytical : {false, true}) {
    LlmBuildOptions build;
    build.tp_analytical = analytical;
    p.tp_comm_overlap = false;
    const LlmStep plain = build_llm_step(llama(), p, c.gpus, costs, {}, build);
    p.tp_comm_overlap = true;
    const LlmStep over = build_llm_step(llama(), p, c.gpus, costs, {}, build);
    if (!analytical) {
      // Per layer and direction: two all-gathers and two reduce-scatters (chunk and rest) per
      // block, of 1/8 and 7/8 of the block's output.
      const Count ag = collectives(over.graph, CollectiveType::kAllGather, 8);
      EXPECT_EQ(ag.n, 2 * 4 * 32);
      EXPECT_EQ(collectives(over.graph, CollectiveType::kReduceScatter, 8).n, 2 * 4 * 32);
      EXPECT_EQ(collectives(plain.graph, CollectiveType::kAllGather, 8).n, 4 * 32);
      double chunk = 0, rest = 0;
      for (const auto& coll : over.graph.collectives)
        (coll.bytes < block / 2 ? chunk : rest) = coll.bytes;
      EXPECT_DOUBLE_EQ(chunk, block / 8);
      EXPECT_DOUBLE_EQ(rest, block * 7 / 8);
    }
    const RunResult a = replay_isolated(c.source, plain.graph, ReplayOptions{});
    const RunResult b = replay_isolated(c.source, over.graph, ReplayOptions{});
    const double compute = 32 * (1e-3 + 1e-3 + 2e-3 + 2e-3);
    EXPECT_GE(b.makespan, compute) << analytical;
    EXPECT_LT(b.makespan, a.makespan) << analytical;
    // What stays exposed is the chunks': about an eighth of the transfers without overlap.
    EXPECT_LT(b.makespan - compute, 0.3 * (a.makespan - compute)) << analytical;
  }
  p.sequence_parallel = false;
  EXPECT_THROW(check_parallel_plan(p, llama(), 8, "test"), InputError);
}

TEST(LlmStrategy, PipelineBubbleIsPMinusOneOverMPlusPMinusOne) {
  // 4 stages of 8 layers, 8 micro-batches. Per micro-batch a stage computes 8 x 2 ms forward and
  // 8 x 4 ms backward: 48 ms. Both schedules take (m + p - 1) x 48 ms = 528 ms, the stages idle
  // (p - 1) / (m + p - 1) = 3/11 of it; the 6 activation and gradient sends on the critical path
  // (0.5 MiB over NVLink) add microseconds.
  Cluster c = dgx_a100(4);
  for (auto schedule : {PipelineSchedule::kGpipe, PipelineSchedule::k1f1b}) {
    ParallelPlan p;
    p.pp = 4;
    p.seq_len = 64;
    p.global_batch = 8;
    p.schedule = schedule;
    check_parallel_plan(p, llama(), 4, "test");
    LlmStep step = build_llm_step(llama(), p, c.gpus, uniform(4), {});
    RunResult r = replay_isolated(c.source, step.graph, ReplayOptions{});
    const double m = 8, pp = 4, per_micro = 48e-3;
    EXPECT_NEAR(r.makespan, (m + pp - 1) * per_micro, 1e-3) << pipeline_schedule_name(schedule);
    const double busy = m * per_micro;
    EXPECT_NEAR(1 - busy / r.makespan, (pp - 1) / (m + pp - 1), 0.003);
  }
}

// Megatron-LM's synchronous pipeline sends (pp_sync): a stage's next pass waits for its sends,
// so the step grows by the sends on its critical path, and by no more than all of them.
TEST(LlmStrategy, SynchronousPipelineSendsDelayTheSendersNextPass) {
  Cluster c = dgx_a100(4);
  ParallelPlan p;
  p.pp = 4;
  p.seq_len = 4096;  // 32 MiB of activations per send
  p.global_batch = 8;
  check_parallel_plan(p, llama(), 4, "test");
  const RunResult async =
      replay_isolated(c.source, build_llm_step(llama(), p, c.gpus, uniform(4), {}).graph, {});
  p.pp_sync = true;
  const LlmStep sync_step = build_llm_step(llama(), p, c.gpus, uniform(4), {});
  const RunResult sync = replay_isolated(c.source, sync_step.graph, ReplayOptions{});
  EXPECT_GT(sync.makespan, async.makespan);
  // Each of the 2 x 3 x 8 sends moves 32 MiB over NVLink (at least 25 GB/s): under 1.4 ms each.
  EXPECT_LT(sync.makespan - async.makespan, 2 * 3 * 8 * 1.4e-3);
}

// The shipped scenarios of the newer architectures run: their tokens a step, the plan fits, and
// the step takes at least the model FLOPs at the GPUs' dense BF16 peak.
TEST(LlmStrategy, NewArchitectureScenariosRun) {
  // Dense BF16 peaks: H100 989.4 TFLOP/s, B200 2250.
  for (const auto& [file, gpus, sequences, peak] :
       std::vector<std::tuple<std::string, int, int, double>>{
           {"scenarios/llm/qwen3-8b-8xh100.yaml", 8, 64, 989.4e12},
           {"scenarios/llm/qwen3-30b-a3b-16xh100.yaml", 16, 64, 989.4e12},
           {"scenarios/llm/gemma2-9b-8xh100.yaml", 8, 64, 989.4e12},
           {"scenarios/llm/gemma3-12b-8xh100.yaml", 8, 64, 989.4e12},
           {"scenarios/llm/gpt-oss-20b-8xh100.yaml", 8, 64, 989.4e12},
           {"scenarios/llm/nemotron4-15b-8xh100.yaml", 8, 64, 989.4e12},
           {"scenarios/llm/nemotron-h-8b-8xh100.yaml", 8, 64, 989.4e12},
           {"scenarios/llm/grok1-128xh100.yaml", 128, 64, 989.4e12},
           {"scenarios/llm/deepseek-v3-256xb200.yaml", 256, 512, 2250e12}}) {
    Scenario sc = load_scenario(testing::source_path(file), {});
    ASSERT_TRUE(sc.llm.has_value()) << file;
    EXPECT_EQ(sc.llm->tokens, sequences * 4096.0) << file;
    EXPECT_EQ(sc.llm->gpus, gpus) << file;
    EXPECT_TRUE(sc.llm->fits) << file << ": " << sc.llm->memory;
    const double step = replay_isolated(sc.platform, sc.graph, ReplayOptions{}).makespan;
    EXPECT_GT(step, sc.llm->model_flops / (gpus * peak)) << file;
  }
}

// Gemma 2's layers: every other one attends over the last 4096 of 8192 keys, which is 3/4 of the
// causal work of attending over all (a causal window of 4096 over 8192 queries sees
// 4096 x 8192 - 4096^2 / 2 pairs against 8192^2 / 2), so the average layer's attention core does
// 7/8 of it; and each block gains its norm after (one kernel more each way).
TEST(LlmStrategy, SlidingWindowLayersAndSandwichNorms) {
  LlmConfig m = *find_llm("gemma2_9b");
  ParallelPlan p;
  p.seq_len = 8192;
  p.global_batch = 1;
  auto by_flops = [](const ModelOp& op) { return op.flops / 1e14; };
  const LlmCosts windowed = price_llm(m, p, by_flops);
  LlmConfig full = m;
  full.local_layers = 0;
  full.sandwich_norm = false;
  const LlmCosts whole = price_llm(full, p, by_flops);
  const double w = 4096, s = 8192;
  const double local = (w * s - w * w / 2) / (s * s / 2);
  EXPECT_NEAR(windowed.attention_core_fwd.flops / whole.attention_core_fwd.flops, 0.5 * local + 0.5,
              0.01);
  EXPECT_EQ(windowed.mlp_fwd.kernels, whole.mlp_fwd.kernels + 1);
  EXPECT_EQ(windowed.mlp_bwd.kernels, whole.mlp_bwd.kernels + 1);
}

TEST(LlmStrategy, DataParallelGradientsPerLayer) {
  // DP 2 over one stage of 32 layers: one all-reduce of each layer's bf16 gradients (202.4 M
  // parameters, 2 bytes each); ZeRO-1 reduce-scatters them instead and all-gathers the weights
  // once after the optimizer.
  ParallelPlan p;
  p.dp = 2;
  p.seq_len = 64;
  Cluster c = dgx_a100(2);
  LlmStep step = build_llm_step(llama(), p, c.gpus, uniform(1), {});
  Count ar = collectives(step.graph, CollectiveType::kAllReduce, 2);
  EXPECT_EQ(ar.n, 32);
  const LlmParams params = llm_params(llama());
  EXPECT_EQ(ar.bytes, 2 * params.per_layer);
  p.zero = 1;
  step = build_llm_step(llama(), p, c.gpus, uniform(1), {});
  EXPECT_EQ(collectives(step.graph, CollectiveType::kAllReduce, 2).n, 0);
  EXPECT_EQ(collectives(step.graph, CollectiveType::kReduceScatter, 2).n, 32);
  EXPECT_EQ(collectives(step.graph, CollectiveType::kAllGather, 2).n, 1);
  EXPECT_EQ(step.tokens, 2 * 64);
  // Buckets of at least 3 layers' gradients: 10 of 3 layers and the last of 2 (32 layers).
  p.zero = 0;
  p.grad_bucket_bytes = 2.5 * 2 * params.per_layer;
  step = build_llm_step(llama(), p, c.gpus, uniform(1), {});
  ar = collectives(step.graph, CollectiveType::kAllReduce, 2);
  EXPECT_EQ(ar.n, 11);
  double total = 0;
  for (const auto& coll : step.graph.collectives) total += coll.bytes;
  EXPECT_EQ(total, 32 * 2 * params.per_layer);
}

TEST(LlmStrategy, ContextParallelExchangesKeysAndValuesPerLayer) {
  // TP 2 x CP 2 on 4 A100s, one micro-batch of 1,024 tokens: each GPU holds 512 tokens and its
  // TP half of the 32 KV heads of 128: 512 x 2 x 16 x 128 x 2 bytes = 4 MiB of keys and values,
  // all-gathered over the CP pair (8 MiB in all) before the attention forward, again before its
  // backward, and their gradients reduce-scattered after it: per TP rank, 32 layers x (1 + 1)
  // all-gathers and 32 reduce-scatters. The TP all-reduces carry the GPU's 512 tokens, and the
  // weight gradients are all-reduced over the CP pair (the data-parallel group is DP x CP).
  ParallelPlan p;
  p.tp = 2;
  p.cp = 2;
  p.seq_len = 1024;
  check_parallel_plan(p, llama(), 4, "test");
  Cluster c = dgx_a100(4);
  const LlmStep step = build_llm_step(llama(), p, c.gpus, uniform(1), {});
  check_graph(step.graph, "cp");
  int ag = 0, rs = 0, ar_tp = 0, ar_dp = 0;
  for (const auto& coll : step.graph.collectives) {
    const bool cp_pair = coll.ranks.size() == 2 && coll.ranks[1] - coll.ranks[0] == 2;
    if (coll.type == CollectiveType::kAllGather && cp_pair) {
      ++ag;
      EXPECT_EQ(coll.bytes, 2 * 512.0 * 2 * 16 * 128 * 2);
    } else if (coll.type == CollectiveType::kReduceScatter && cp_pair) {
      ++rs;
      EXPECT_EQ(coll.bytes, 2 * 512.0 * 2 * 16 * 128 * 2);
    } else if (coll.type == CollectiveType::kAllReduce && cp_pair) {
      ++ar_dp;
    } else if (coll.type == CollectiveType::kAllReduce) {
      ++ar_tp;
      EXPECT_EQ(coll.bytes, 512.0 * 4096 * 2);
    }
  }
  EXPECT_EQ(ag, 2 * 2 * 32);  // 2 TP ranks, forward and backward, 32 layers
  EXPECT_EQ(rs, 2 * 32);
  EXPECT_EQ(ar_dp, 2 * 32);      // each TP rank's layer gradients over its CP pair
  EXPECT_EQ(ar_tp, 2 * 4 * 32);  // 2 CP ranks, 4 per layer
  EXPECT_EQ(step.tokens, 1024);
  const RunResult r = replay_isolated(c.source, step.graph, ReplayOptions{});
  EXPECT_GT(r.makespan, 0);
}

TEST(LlmStrategy, FullPlanRunsOnADgxA100) {
  // TP 2 x PP 2 x DP 2 on 8 A100s, 4 micro-batches, sequence parallelism, selective
  // recomputation, ZeRO-1, NCCL collectives, ops priced at 100 TFLOP/s and 1 TB/s.
  ParallelPlan p;
  p.tp = 2;
  p.pp = 2;
  p.dp = 2;
  p.seq_len = 256;
  p.global_batch = 8;
  p.sequence_parallel = true;
  p.recompute = Recompute::kSelective;
  p.zero = 1;
  check_parallel_plan(p, llama(), 8, "test");
  const LlmCosts costs =
      price_llm(llama(), p, [](const ModelOp& op) { return op.flops / 100e12 + op.bytes / 1e12; });
  Cluster c = dgx_a100(8);
  CollectiveOptions coll;
  LlmStep step = build_llm_step(llama(), p, c.gpus, costs, coll);
  RunResult r = replay_isolated(c.source, step.graph, ReplayOptions{});
  // No faster than one stage's compute for its micro-batches, the slowest GPU's busy time.
  const double per_micro =
      16 * (costs.attention_fwd.seconds + costs.mlp_fwd.seconds + costs.attention_bwd.seconds +
            costs.mlp_bwd.seconds + costs.attention_core_fwd.seconds);
  EXPECT_GT(r.makespan, 4 * per_micro);
  EXPECT_LT(r.makespan, 3 * 4 * per_micro);
  EXPECT_EQ(step.tokens, 8 * 256);
  EXPECT_NEAR(step.model_flops, llm_training_flops_per_token(llama(), 256) * 8 * 256, 1);
  // A plan for other GPUs than it is given is refused.
  p.dp = 1;
  EXPECT_THROW(build_llm_step(llama(), p, c.gpus, costs, coll), InputError);
}

// strategy.attention_impl reaches every fused attention op the plan prices, forward and backward.
TEST(LlmStrategy, AttentionImplReachesTheAttentionOps) {
  ParallelPlan p;
  p.tp = 2;
  p.seq_len = 256;
  p.global_batch = 1;
  for (AttentionImpl impl : {AttentionImpl::kAuto, AttentionImpl::kFlash2, AttentionImpl::kCudnn}) {
    p.attention_impl = impl;
    int seen = 0;
    price_llm(llama(), p, [&](const ModelOp& op) {
      if (op.type == "attention" || op.type == "attention_bwd") {
        ++seen;
        EXPECT_EQ(attention_impl(op), impl) << op.type;
      }
      return 1e-6;
    });
    EXPECT_GE(seen, 2);
  }
}

TEST(LlmStrategy, InterleavingShrinksTheBubbleByTheChunkCount) {
  // 4 stages, 2 chunks of 4 layers each, 8 micro-batches: a stage's work per micro-batch is
  // still 48 ms, the bubble (p - 1) x 48 ms / v (Narayanan et al., section 2.2.2): 456 ms
  // against 528 ms without interleaving.
  Cluster c = dgx_a100(4);
  ParallelPlan p;
  p.pp = 4;
  p.seq_len = 64;
  p.global_batch = 8;
  p.schedule = PipelineSchedule::kInterleaved;
  p.virtual_stages = 2;
  check_parallel_plan(p, llama(), 4, "test");
  LlmStep step = build_llm_step(llama(), p, c.gpus, uniform(4), {});
  RunResult r = replay_isolated(c.source, step.graph, ReplayOptions{});
  const double m = 8, pp = 4, v = 2, per_micro = 48e-3;
  EXPECT_NEAR(r.makespan, (m + (pp - 1) / v) * per_micro, 2e-3);
}

// Ring traffic per rank of the data-parallel collectives: 2 (n-1)/n of the bytes for an
// all-reduce, (n-1)/n for a reduce-scatter or an all-gather.
double dp_traffic(const ExecutionGraph& g, int dp) {
  double sum = 0;
  const double n = dp;
  for (const auto& c : g.collectives) {
    if (static_cast<int>(c.ranks.size()) != dp) continue;
    sum += c.bytes * (c.type == CollectiveType::kAllReduce ? 2 * (n - 1) / n : (n - 1) / n);
  }
  return sum;
}

TEST(LlmStrategy, ZeroThreeMovesOneAndAHalfTimesTheBytesOfAllReduce) {
  // One micro-batch on 2 replicas: all-reduce DP reduces each layer's gradients once; ZeRO-3
  // (FSDP) gathers each layer's weights before forward and again before backward and
  // reduce-scatters its gradients: 3 x (n-1)/n against 2 (n-1)/n (ZeRO, section 7).
  ParallelPlan p;
  p.dp = 2;
  p.seq_len = 64;
  Cluster c = dgx_a100(2);
  const double all_reduce = dp_traffic(build_llm_step(llama(), p, c.gpus, uniform(1), {}).graph, 2);
  p.zero = 3;
  LlmStep z3 = build_llm_step(llama(), p, c.gpus, uniform(1), {});
  EXPECT_NEAR(dp_traffic(z3.graph, 2), 1.5 * all_reduce, 1e-6 * all_reduce);
  EXPECT_EQ(collectives(z3.graph, CollectiveType::kAllGather, 2).n, 2 * 32);
  // It runs: the gathers overlap the compute one layer ahead.
  RunResult r = replay_isolated(c.source, z3.graph, ReplayOptions{});
  EXPECT_GT(r.makespan, 32 * 6e-3);
}

TEST(LlmStrategy, ExpertParallelAllToAllPerMoeLayer) {
  // Mixtral 8x7B, EP 2 over 2 replicas, one micro-batch of 256 tokens: each MoE layer
  // dispatches and combines its routed tokens forward and backward (4 all-to-alls), each GPU
  // sending the (ep - 1)/ep of its 256 x 2 routed copies of [h] (16 bits) held by the other
  // GPU's experts.
  const LlmConfig& mix = *find_llm("mixtral_8x7b");
  ParallelPlan p;
  p.dp = 2;
  p.ep = 2;
  p.seq_len = 256;
  check_parallel_plan(p, mix, 2, "test");
  Cluster c = dgx_a100(2);
  LlmStep step = build_llm_step(mix, p, c.gpus, uniform(1), {});
  Count a2a = collectives(step.graph, CollectiveType::kAllToAll, 2);
  EXPECT_EQ(a2a.n, 4 * 32);
  EXPECT_EQ(a2a.bytes, 256.0 * 2 * 4096 * 2 * 1 / 2);
  RunResult r = replay_isolated(c.source, step.graph, ReplayOptions{});
  EXPECT_GT(r.makespan, 32 * 6e-3);
  // A capacity factor of 1.25 pads every expert's share: 1.25 x the bytes.
  p.dropless = false;
  p.capacity_factor = 1.25;
  step = build_llm_step(mix, p, c.gpus, uniform(1), {});
  EXPECT_EQ(collectives(step.graph, CollectiveType::kAllToAll, 2).bytes,
            1.25 * 256.0 * 2 * 4096 * 2 * 1 / 2);
  // Dropless with the busiest rank taking 1.5 x its share (a skew, or a histogram of 8 experts
  // whose first 4, rank 0's, take 3 of every 4 tokens... here 60 of 100: 1.2 x).
  p.dropless = true;
  p.moe_imbalance = 1.5;
  step = build_llm_step(mix, p, c.gpus, uniform(1), {});
  EXPECT_EQ(collectives(step.graph, CollectiveType::kAllToAll, 2).bytes,
            1.5 * 256.0 * 2 * 4096 * 2 * 1 / 2);
  p.expert_load = {20, 10, 20, 10, 10, 10, 10, 10};
  EXPECT_DOUBLE_EQ(p.routed_factor(), 60.0 / 50);
  p.expert_load = {1, 2, 3};
  EXPECT_THROW(check_parallel_plan(p, mix, 2, "test"), InfeasibleError);
}

TEST(LlmStrategy, OneReplicaInFullGivesTheStepOfAll) {
  // TP 2 x PP 2 x DP 2 on one DGX A100: the replicas' pipeline and TP traffic use links of
  // their own (each GPU's NVLink), so simulating replica 0 in full and replica 1 only in the
  // gradient all-reduces gives the same step with about half the ops.
  ParallelPlan p;
  p.tp = 2;
  p.pp = 2;
  p.dp = 2;
  p.seq_len = 256;
  p.global_batch = 8;
  Cluster c = dgx_a100(8);
  const LlmCosts costs =
      price_llm(llama(), p, [](const ModelOp& op) { return op.flops / 100e12 + op.bytes / 1e12; });
  CollectiveOptions coll;
  LlmStep all = build_llm_step(llama(), p, c.gpus, costs, coll);
  LlmBuildOptions one;
  one.all_replicas = false;
  LlmStep half = build_llm_step(llama(), p, c.gpus, costs, coll, one);
  EXPECT_LT(half.graph.ops.size(), 0.55 * all.graph.ops.size());
  EXPECT_EQ(half.tokens, all.tokens);
  const double t_all = replay_isolated(c.source, all.graph, ReplayOptions{}).makespan;
  const double t_one = replay_isolated(c.source, half.graph, ReplayOptions{}).makespan;
  EXPECT_NEAR(t_one, t_all, 1e-3 * t_all);
  // TP collectives priced analytically: the same step within 2% (NVSwitch links are not shared).
  one.tp_analytical = true;
  const double t_alpha =
      replay_isolated(c.source, build_llm_step(llama(), p, c.gpus, costs, coll, one).graph,
                      ReplayOptions{})
          .makespan;
  EXPECT_NEAR(t_alpha, t_all, 0.02 * t_all);
}

TEST(LlmStrategy, SweepRecordsPlansTheGpusCannotRunAsInfeasible) {
  // LLaMA-2 7B on one DGX A100 of 40 GB GPUs over TP 1, 3 and 8: TP 1 (data parallel, no
  // ZeRO) needs 16 bytes a parameter, 108 GB, on every GPU; TP 3 does not divide the 8 GPUs
  // or the 32 heads; TP 8 runs. The sweep succeeds with 1 ok and 2 infeasible points, and the
  // report says why.
  const std::string dir = testing::make_temp_dir("llm_sweep");
  testing::write_file(dir + "/s.yaml", R"(name: llm-sweep
platform: {preset: dgx-a100, servers: 1}
device: A100-SXM4-40GB
workload: {type: llm, model: llama2_7b, seq_len: 512, global_batch: 8}
strategy: {tp: 1}
sweep:
  grid:
    strategy.tp: [1, 3, 8]
)");
  const std::string bin = testing::orrery_bin();
  auto r = testing::run_shell(bin + " sweep " + dir + "/s.yaml -o " + dir + "/out.h5 -j 1");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("1 ok, 0 failed, 2 infeasible"), std::string::npos) << r.output;
  r = testing::run_shell(bin + " report " + dir + "/out.h5");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("Infeasible points"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("out of memory: needs"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("must divide the 8 GPUs"), std::string::npos) << r.output;
}

TEST(LlmStrategy, RunPrintsThroughputAndWritesItWithTheMemoryVerdict) {
  const std::string dir = testing::make_temp_dir("llm_run");
  auto r = testing::run_shell(testing::orrery_bin() + " run " +
                              testing::source_path("scenarios/llm/llama2-7b-dgx-a100.yaml") +
                              " --set workload.global_batch=2 --set workload.seq_len=512 --set "
                              "workload.train_tokens=1B -o " +
                              dir + "/out.h5");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("Throughput      "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Training run    1e+09 tokens in "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Memory          fits: "), std::string::npos) << r.output;
  hid_t f = H5Fopen((dir + "/out.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  double tokens = 0, flops = 0;
  for (auto [name, out] : {std::pair{"tokens_per_iteration", &tokens},
                           std::pair{"model_flops_per_iteration", &flops}}) {
    hid_t a = H5Aopen(f, name, H5P_DEFAULT);
    ASSERT_GE(a, 0) << name;
    H5Aread(a, H5T_NATIVE_DOUBLE, out);
    H5Aclose(a);
  }
  EXPECT_EQ(tokens, 2 * 512);
  EXPECT_NEAR(flops, llm_training_flops_per_token(llama(), 512) * 1024, 1e-6 * flops);
  EXPECT_EQ(h5::read_string_attr(f, "memory").rfind("fits: ", 0), 0u);
  H5Fclose(f);
}

TEST(LlmStrategy, ScenarioRunsAndReportsThroughputAndMemory) {
  Scenario sc = load_scenario(testing::source_path("scenarios/llm/llama2-7b-dgx-a100.yaml"),
                              {"workload.global_batch=4", "workload.seq_len=1024"});
  ASSERT_TRUE(sc.llm.has_value());
  EXPECT_EQ(sc.llm->tokens, 4 * 1024);
  EXPECT_EQ(sc.llm->gpus, 8);
  EXPECT_TRUE(sc.llm->fits);
  EXPECT_NE(sc.llm->memory.find("fits: "), std::string::npos);
  EXPECT_EQ(sc.llm->peak_flops_per_gpu, sc.device.peak_flops(DType::kBF16, true));
  const RunResult r = replay_isolated(sc.platform, sc.graph, ReplayOptions{});
  // Slower than the model FLOPs at the GPUs' peak, faster than at a tenth of it.
  const double at_peak = sc.llm->model_flops / (8 * sc.llm->peak_flops_per_gpu);
  EXPECT_GT(r.makespan, at_peak);
  EXPECT_LT(r.makespan, 10 * at_peak);
  // Bad plans are refused with the key named.
  auto refused = [](const std::string& set) {
    try {
      load_scenario(testing::source_path("scenarios/llm/llama2-7b-dgx-a100.yaml"), {set});
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(refused("strategy.tp=3").find("tp x pp x cp = 6 must divide the 8 GPUs"),
            std::string::npos);
  EXPECT_NE(refused("workload.model=gpt5").find("unknown language model \"gpt5\""),
            std::string::npos);
  EXPECT_NE(refused("strategy.schedule=zigzag")
                .find("expected gpipe, 1f1b, interleaved, zb-h1, zb-v or dualpipe"),
            std::string::npos);
  EXPECT_NE(refused("strategy.tq=2").find("tq"), std::string::npos);
  EXPECT_NE(
      refused("strategy.attention_impl=flash4").find("expected auto, flash2, flash3 or cudnn"),
      std::string::npos);
  EXPECT_NE(refused("strategy.attention_impl=flash3").find("FlashAttention-3 is built for Hopper"),
            std::string::npos);
  EXPECT_NE(refused("workload.train_tokens=2X").find("expected a positive token count"),
            std::string::npos);
}

}  // namespace
}  // namespace orrery
