// Pipeline schedules (strategies/pipeline_schedule.h): the zero-bubble schedules' orders and
// bubbles by hand. Uniform stages: every layer 1 ms forward, 1 ms input gradient (B) and 1 ms
// weight gradient (W), so a stage of 8 layers takes F = B = W = 8 ms per micro-batch; sends
// over NVLink add microseconds.
//   1F1B:     (m + p - 1)(F + B + W)                     (Narayanan et al.)
//   ZB-H1:    m (F + B + W) + (p - 1)(F + B - W)         (Qi et al., "Zero Bubble Pipeline
//                                                         Parallelism", section 3.1)
//   DualPipe: m/2 x 2 (F + B + W) on each GPU's two pieces + (p/2 - 1)(F&B + B - 3W), B the
//             full backward and F&B = F + B without overlap (DeepSeek-V3 report, Table 2)
#include "strategies/pipeline_schedule.h"

#include <gtest/gtest.h>

#include "common/errors.h"
#include "engine/replay.h"
#include "strategies/llm_memory.h"
#include "strategies/llm_strategy.h"
#include "tests/llm_cluster.h"

namespace orrery {
namespace {

using testing::dgx_a100;

// 32 layers, small enough that gradients and activations move in microseconds.
const LlmConfig& llama() {
  static const LlmConfig m = [] {
    LlmConfig c = *find_llm("llama2_7b");
    c.hidden = 256;
    c.heads = c.kv_heads = 4;
    c.ffn = 512;
    c.vocab = 1024;
    return c;
  }();
  return m;
}

// Each layer: attention and MLP 0.5 ms forward each; backward 1 ms each, half of it weight
// gradients.
LlmCosts unit_costs(int stages) {
  LlmCosts c;
  c.attention_fwd.seconds = c.mlp_fwd.seconds = 0.5e-3;
  c.attention_bwd.seconds = c.mlp_bwd.seconds = 1e-3;
  c.attention_wgrad.seconds = c.mlp_wgrad.seconds = 0.5e-3;
  c.optimizer.assign(stages, BlockCost{});
  return c;
}

double step_time(const ParallelPlan& p, int gpus) {
  check_parallel_plan(p, llama(), gpus, "test");
  const testing::LlmCluster c = dgx_a100(gpus);
  const LlmStep step = build_llm_step(llama(), p, c.gpus, unit_costs(p.pp), {});
  return replay_isolated(c.source, step.graph, ReplayOptions{}).makespan;
}

ParallelPlan pipeline(int pp, int micro, PipelineSchedule s) {
  ParallelPlan p;
  p.pp = pp;
  p.seq_len = 64;
  p.global_batch = micro;
  p.schedule = s;
  return p;
}

TEST(PipelineSchedule, ZbH1OrderIsFBWInStepsWithWDelayedPMinusOne) {
  // Stage 1 of 4, 6 micro-batches: F0 F1 alone (p - 1 - i = 2), then F2 B0, then W joins
  // p - 1 = 3 steps behind F: F3 B1 W0, F4 B2 W1, F5 B3 W2; then B4 W3, B5 W4, and W5.
  const ParallelPlan p = pipeline(4, 6, PipelineSchedule::kZbH1);
  const auto order = pipeline_schedule(p, 6, chunk_layers(p, llama()))[1];
  std::string got;
  for (const auto& pass : order)
    got += std::string(pass.kind == PassKind::kForward    ? "F"
                       : pass.kind == PassKind::kBackward ? "B"
                                                          : "W") +
           std::to_string(pass.micro) + " ";
  EXPECT_EQ(got, "F0 F1 F2 B0 F3 B1 W0 F4 B2 W1 F5 B3 W2 B4 W3 B5 W4 W5 ");
}

TEST(PipelineSchedule, ZbH1CutsTheBubbleToPMinusOneTimesFPlusBMinusW) {
  const double F = 8e-3, B = 8e-3, W = 8e-3, p = 4, m = 8;
  const double one_f_one_b = step_time(pipeline(4, 8, PipelineSchedule::k1f1b), 4);
  EXPECT_NEAR(one_f_one_b, (m + p - 1) * (F + B + W), 1e-3);  // 264 ms
  const double zb = step_time(pipeline(4, 8, PipelineSchedule::kZbH1), 4);
  EXPECT_NEAR(zb, m * (F + B + W) + (p - 1) * (F + B - W), 1e-3);  // 216 ms
}

TEST(PipelineSchedule, ZbVRunsTwoChunksInAVAndBeatsZbH1) {
  // Two chunks of 4 layers per stage: chunk 0 down the stages, chunk 1 back up, so stage 0
  // holds the embedding and the output head.
  const ParallelPlan p = pipeline(4, 8, PipelineSchedule::kZbV);
  const auto path = pipeline_path(p, 0, 8);
  ASSERT_EQ(path.size(), 8u);
  EXPECT_EQ(path[3], (ChunkPlace{3, 0}));
  EXPECT_EQ(path[4], (ChunkPlace{3, 1}));
  EXPECT_EQ(path[7], (ChunkPlace{0, 1}));
  EXPECT_EQ(chunk_layers(p, llama())[2], (std::vector<int>{4, 4}));
  // Each stage's work is m (F + B + W) = 192 ms. The first stage can start its first B only
  // after the micro-batch went down and up: 2p - 1 half-stage forwards and its own, and each
  // stage ends with the B passes coming back up, so some bubble remains; it is below ZB-H1's
  // (p - 1)(F + B - W) = 24 ms and 1F1B's 72 ms.
  const double work = 8 * 24e-3;
  const double zbv = step_time(p, 4);
  EXPECT_GE(zbv, work);
  EXPECT_LT(zbv - work, 24e-3);
  // Its memory: no more than 1F1B's first stage (p micro-batches of a stage's 8 layers).
  const double act = layer_activation_bytes(llama(), p);
  for (int s = 0; s < 4; ++s) {
    const auto orders = pipeline_schedule(p, 8, chunk_layers(p, llama()));
    const HeldPeak held = held_activation_peak(
        p, s, orders[s], chunk_layers(p, llama()), 8, [act](int n) { return n * act; }, 0);
    EXPECT_LE(held.bytes, 4 * 8 * act * (1 + 1e-12)) << s;
  }
}

// Unequal passes (a layer 1 ms forward, 1.5 ms input gradient, 0.5 ms weight gradient): ZB-V's
// list schedule orders by those durations and still beats ZB-H1 and 1F1B.
TEST(PipelineSchedule, ZbVOrdersByThePricedDurations) {
  LlmCosts c = unit_costs(2);
  c.attention_bwd.seconds = c.mlp_bwd.seconds = 1e-3;
  c.attention_wgrad.seconds = c.mlp_wgrad.seconds = 0.25e-3;
  auto time = [&](PipelineSchedule s) {
    const ParallelPlan p = pipeline(2, 16, s);
    check_parallel_plan(p, llama(), 2, "test");
    const testing::LlmCluster cl = dgx_a100(2);
    return replay_isolated(cl.source, build_llm_step(llama(), p, cl.gpus, c, {}).graph,
                           ReplayOptions{})
        .makespan;
  };
  const double zbv = time(PipelineSchedule::kZbV), zbh1 = time(PipelineSchedule::kZbH1);
  const double base = time(PipelineSchedule::k1f1b);
  EXPECT_LE(zbv, zbh1 + 1e-4);
  EXPECT_LT(zbh1, base);
  // 16 micro-batches of 16 layers at 3 ms: 768 ms of work a stage.
  EXPECT_GE(zbv, 16 * 16 * 3e-3);
}

TEST(PipelineSchedule, DualPipeFeedsBothEndsOverMirroredPieces) {
  // 4 stages, each holding pieces s and 3 - s (8 layers each): 16 layers per GPU, twice 1F1B's.
  const ParallelPlan p = pipeline(4, 8, PipelineSchedule::kDualPipe);
  EXPECT_EQ(chunk_layers(p, llama())[0], (std::vector<int>{8, 8}));
  EXPECT_EQ(stage_layers(p, llama())[1], 16);
  EXPECT_EQ(pipeline_path(p, 0, 8).front(), (ChunkPlace{0, 0}));
  EXPECT_EQ(pipeline_path(p, 5, 8).front(), (ChunkPlace{3, 1}));
  EXPECT_EQ(pipeline_path(p, 5, 8).back(), (ChunkPlace{0, 1}));
  // Each GPU runs 8 micro-batches' pieces: 8 x 24 ms = 192 ms of work. Bubble by Table 2 with
  // F = 8, B = 16 (full backward), W = 8, F&B = F + B = 24: (p/2 - 1)(24 + 16 - 24) = 16 ms.
  const double dual = step_time(p, 4);
  EXPECT_GE(dual, 192e-3);
  EXPECT_LE(dual, (192 + 16 + 1) * 1e-3);
  // Memory: weights of two pieces on every stage.
  ParallelPlan q = p;
  q.schedule = PipelineSchedule::k1f1b;
  const auto dual_mem = llm_memory(llama(), p);
  const auto plain = llm_memory(llama(), q);
  EXPECT_NEAR(dual_mem[1].weights, 2 * plain[1].weights, 1e-6 * plain[1].weights);
}

TEST(PipelineSchedule, DualPipePairsForwardsAndBackwardsToOverlapThem) {
  // p = 4, m = 8: stage 0 (r = 0) runs step 4 once (two pairs) and step 5 once (one pair); the
  // middle stage 1 (r = 1) step 4 twice, its very first pair not overlapped: three each. A
  // paired backward follows its forward in the order and runs beside it in the step graph.
  const ParallelPlan p = pipeline(4, 8, PipelineSchedule::kDualPipe);
  const auto orders = pipeline_schedule(p, 8, chunk_layers(p, llama()));
  for (int s : {0, 1}) {
    int pairs = 0;
    for (size_t i = 0; i < orders[s].size(); ++i)
      if (orders[s][i].beside_previous) {
        ++pairs;
        ASSERT_GT(i, 0u);
        EXPECT_EQ(orders[s][i].kind, PassKind::kBackward);
        EXPECT_EQ(orders[s][i - 1].kind, PassKind::kForward);
        EXPECT_NE(orders[s][i].chunk, orders[s][i - 1].chunk);
      }
    EXPECT_EQ(pairs, 3) << s;
  }
}

TEST(PipelineSchedule, InterleavedMemoryFollowsMegatronsWarmUp) {
  // 4 stages, 2 chunks of 4 layers, 16 micro-batches: stage s warms up with (p - s - 1) x 2 +
  // (v - 1) x p chunk forwards and holds one more: stage 0 11 chunks (44 layer-micro-batches,
  // Korthikanti et al.'s p (1 + (p - 1)/(p v)) = 5.5 micro-batches of 8 layers), stage 3 5
  // chunks (20) where 1F1B's last stage holds one micro-batch (8).
  ParallelPlan p = pipeline(4, 16, PipelineSchedule::kInterleaved);
  p.virtual_stages = 2;
  const auto mem = llm_memory(llama(), p);
  const double act = layer_activation_bytes(llama(), p);
  EXPECT_EQ(mem[0].in_flight, 11);
  EXPECT_NEAR(mem[0].activations, 44 * act, 1e-6 * act);
  EXPECT_EQ(mem[3].in_flight, 5);
}

TEST(PipelineSchedule, RefusesWhatTheSchedulesCannotRun) {
  ParallelPlan p = pipeline(1, 8, PipelineSchedule::kZbH1);
  EXPECT_THROW(check_parallel_plan(p, llama(), 1, "test"), InfeasibleError);
  p = pipeline(3, 8, PipelineSchedule::kZbV);  // 6 chunks of 32 layers
  EXPECT_THROW(check_parallel_plan(p, llama(), 3, "test"), InfeasibleError);
  p = pipeline(4, 10, PipelineSchedule::kDualPipe);
  EXPECT_NO_THROW(check_parallel_plan(p, llama(), 4, "test"));
  for (int micro : {7, 6}) {  // odd; fewer than 2 x pp
    p = pipeline(4, micro, PipelineSchedule::kDualPipe);
    EXPECT_THROW(check_parallel_plan(p, llama(), 4, "test"), InfeasibleError) << micro;
  }
  PipelineSchedule s;
  EXPECT_TRUE(parse_pipeline_schedule("dualpipe", &s));
  EXPECT_EQ(s, PipelineSchedule::kDualPipe);
  EXPECT_EQ(pipeline_schedule_choices(), "gpipe, 1f1b, interleaved, zb-h1, zb-v or dualpipe");
}

}  // namespace
}  // namespace orrery
