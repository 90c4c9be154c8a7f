// Searching language-model plans (sweeps/llm_search.h, sweeps/llm_plan.h, `orrery plan` with
// plan.search) and what makes it fast without changing the answer: passes fused into one op
// per phase, one lane per TP group when every collective is analytical, the replay's
// exposed-time split per comm queue that the breakdown reads, analytical collectives repeated.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

#include "common/errors.h"
#include "engine/graph_check.h"
#include "engine/replay.h"
#include "platforms/platform_spec.h"
#include "results/h5_store.h"
#include "scenario/llm_figures.h"
#include "strategies/llm_strategy.h"
#include "sweeps/llm_search.h"
#include "tests/llm_cluster.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

using Cluster = testing::LlmCluster;
using testing::dgx_a100;

const LlmConfig& llama() { return *find_llm("llama2_7b"); }

LlmCosts priced(const ParallelPlan& p) {
  return price_llm(llama(), p,
                   [](const ModelOp& op) { return op.flops / 100e12 + op.bytes / 1e12; });
}

double step_time(const Cluster& c, const LlmStep& s) {
  return replay_isolated(c.source, s.graph, ReplayOptions{}).makespan;
}

TEST(LlmPlan, FusedPassesTakeTheTimeOfOpByOp) {
  // TP 2 x PP 2 x DP 2 on one DGX A100 with TP collectives analytical, ZeRO-1 and selective
  // recomputation: every pass but the last micro-batch's backward is one compute op per phase
  // and one repeated op per kind of TP collective. The step is the same to rounding.
  ParallelPlan p;
  p.tp = 2;
  p.pp = 2;
  p.dp = 2;
  p.seq_len = 256;
  p.global_batch = 16;
  p.zero = 1;
  p.sequence_parallel = true;
  p.recompute = Recompute::kSelective;
  check_parallel_plan(p, llama(), 8, "test");
  Cluster c = dgx_a100(8);
  LlmBuildOptions op_by_op;
  op_by_op.tp_analytical = true;
  op_by_op.fuse_passes = false;
  LlmBuildOptions fused = op_by_op;
  fused.fuse_passes = true;
  const LlmStep a = build_llm_step(llama(), p, c.gpus, priced(p), {}, op_by_op);
  const LlmStep b = build_llm_step(llama(), p, c.gpus, priced(p), {}, fused);
  EXPECT_LT(b.graph.ops.size() * 5, a.graph.ops.size());
  check_graph(b.graph, "fused");
  int repeated = 0;
  for (const auto& coll : b.graph.collectives)
    if (coll.repeat > 1) {
      ++repeated;
      EXPECT_TRUE(coll.analytical);
      EXPECT_EQ(coll.repeat, 2 * 16);  // two blocks a layer, 16 layers a stage
    }
  EXPECT_GT(repeated, 0);
  const double ta = step_time(c, a), tb = step_time(c, b);
  EXPECT_NEAR(tb, ta, 1e-9 * ta);
}

TEST(LlmPlan, MegatronsSplitRunsEveryLayerOnceWithShorterEndChunks) {
  // LLaMA-2 7B's 32 layers + embedding + loss = 34 are not 4 chunks; with 30 layers, 32 = 4 x 8:
  // PP 2 x VP 2 chunks of 7, 8 / 8, 7 layers. Every layer's forward runs once per micro-batch,
  // and the first stage, holding the embedding, is not the longer one.
  LlmConfig m = llama();
  m.layers = 30;
  ParallelPlan p;
  p.pp = 2;
  p.dp = 4;
  p.seq_len = 256;
  p.global_batch = 8;
  p.schedule = PipelineSchedule::kInterleaved;
  p.virtual_stages = 2;
  p.account_for_embedding_and_loss = true;
  check_parallel_plan(p, m, 8, "test");
  EXPECT_EQ(chunk_layers(p, m), (std::vector<std::vector<int>>{{7, 8}, {8, 7}}));
  Cluster c = dgx_a100(8);
  LlmBuildOptions op_by_op;
  op_by_op.fuse_passes = false;
  const LlmCosts costs =
      price_llm(m, p, [](const ModelOp& op) { return op.flops / 100e12 + op.bytes / 1e12; });
  const LlmStep step = build_llm_step(m, p, c.gpus, costs, {}, op_by_op);
  check_graph(step.graph, "split");
  int forwards = 0;
  for (const auto& op : step.graph.ops)
    if (op.phase == "forward" && op.name.find(".attn") != std::string::npos &&
        op.name.find(".fwd") != std::string::npos)
      ++forwards;
  // Replica 0 and its three peers, 2 micro-batches each (8 sequences over DP 4), 30 layers.
  EXPECT_EQ(forwards, 4 * 2 * 30);
  // Chunks of one part: 6 layers + 2 in 8 chunks leave the embedding's and the loss's chunks
  // without a layer; the step still runs every layer once per micro-batch, op by op or fused.
  m.layers = 6;
  p.virtual_stages = 4;
  check_parallel_plan(p, m, 8, "test");
  for (bool fuse : {false, true}) {
    LlmBuildOptions o;
    o.fuse_passes = fuse;
    o.tp_analytical = true;
    const LlmStep small = build_llm_step(
        m, p, c.gpus,
        price_llm(m, p, [](const ModelOp& op) { return op.flops / 100e12 + op.bytes / 1e12; }), {},
        o);
    check_graph(small.graph, "one-part chunks");
    EXPECT_GT(step_time(c, small), 0);
  }
}

TEST(LlmPlan, OneLanePerTensorParallelGroupWhenEverythingIsAnalytical) {
  // TP 4 x PP 2 x DP 2 on two DGX A100 with every collective analytical and replica 0 alone:
  // its TP ranks run the same ops in lockstep, so TP rank 0 stands for the group.
  ParallelPlan p;
  p.tp = 4;
  p.pp = 2;
  p.dp = 2;
  p.seq_len = 256;
  p.global_batch = 8;
  p.zero = 1;
  check_parallel_plan(p, llama(), 16, "test");
  Cluster c = dgx_a100(16, 2);
  CollectiveOptions coll;
  coll.analytical = true;
  LlmBuildOptions lanes;
  lanes.all_replicas = false;
  lanes.tp_analytical = true;
  LlmBuildOptions one = lanes;
  one.one_tp_rank = true;
  const LlmStep a = build_llm_step(llama(), p, c.gpus, priced(p), coll, lanes);
  const LlmStep b = build_llm_step(llama(), p, c.gpus, priced(p), coll, one);
  // Compute ops and sends drop 4x; a TP collective was one op per group already.
  EXPECT_LT(b.graph.ops.size() * 5, a.graph.ops.size() * 2);
  const double ta = step_time(c, a), tb = step_time(c, b);
  EXPECT_NEAR(tb, ta, 1e-9 * ta);
}

TEST(LlmPlan, BreakdownAddsUpToTheIterationAndFindsTheBubble) {
  // 4 stages of 8 layers, 8 micro-batches, fixed block costs (1 ms forward, 2 ms backward,
  // 0.25 ms recomputed attention core): each stage computes 8 x (16 + 32) ms and recomputes
  // 8 x 8 x 0.25 ms; the rest of the (m + p - 1) = 11 slots of the iteration is bubble.
  ParallelPlan p;
  p.pp = 4;
  p.seq_len = 64;
  p.global_batch = 8;
  p.recompute = Recompute::kSelective;
  Cluster c = dgx_a100(4);
  LlmCosts costs;
  costs.attention_fwd.seconds = costs.mlp_fwd.seconds = 1e-3;
  costs.attention_bwd.seconds = costs.mlp_bwd.seconds = 2e-3;
  costs.attention_core_fwd.seconds = 0.25e-3;
  costs.optimizer.assign(4, BlockCost{});
  const LlmStep step = build_llm_step(llama(), p, c.gpus, costs, {});
  const RunResult r = replay_isolated(c.source, step.graph, ReplayOptions{});
  LlmRunInfo info;
  info.tokens = step.tokens;
  info.model_flops = step.model_flops;
  info.gpus = 4;
  const LlmFigures f = llm_figures(info, r);
  const LlmBreakdown& b = f.breakdown;
  EXPECT_NEAR(b.compute + b.recompute + b.tp + b.ep + b.cp + b.pp + b.dp + b.bubble, r.makespan,
              1e-12);
  EXPECT_NEAR(b.compute, 8 * 48e-3, 1e-9);
  EXPECT_NEAR(b.recompute, 8 * 8 * 0.25e-3, 1e-9);
  EXPECT_EQ(b.tp, 0);
  EXPECT_EQ(b.dp, 0);
  const double slot = 48e-3 + 2e-3;       // a micro-batch's compute and recomputation on a stage
  EXPECT_NEAR(b.bubble, 3 * slot, 2e-4);  // plus the activation sends, microseconds
  EXPECT_NEAR(f.tokens_per_s, step.tokens / r.makespan, 1e-9);
}

// Length of [a0, a1] outside the union of `cover` (disjoint intervals).
double outside(double a0, double a1, const std::vector<std::pair<double, double>>& cover) {
  double len = a1 - a0;
  for (const auto& [c0, c1] : cover) len -= std::max(0.0, std::min(a1, c1) - std::max(a0, c0));
  return len;
}

TEST(LlmPlan, ExposedCommunicationIsChargedToTheMostBlockingQueue) {
  // GPU 0 computes for 1 s and sends GPU 1 two large buffers on comm queues 0 and 1, the first
  // after GPU 1's 0.5 s op, the second after its next 1 s one: each queue is charged for its
  // time outside compute and the queues before it, which add up to the exposed time.
  Cluster c = dgx_a100(2);
  ExecutionGraph g;
  for (const auto& gpu : c.gpus) g.devices.push_back({gpu.host, gpu.host, "", "", {}});
  auto compute = [&](const std::string& name, int device, double d, std::vector<int> deps) {
    Op o;
    o.name = name;
    o.device = device;
    o.duration = d;
    o.phase = device == 0 ? "forward" : "backward";
    o.deps = std::move(deps);
    g.ops.push_back(o);
    return static_cast<int>(g.ops.size()) - 1;
  };
  compute("compute", 0, 1.0, {});
  const int w0 = compute("wait0", 1, 0.5, {});
  const int w1 = compute("wait1", 1, 1.0, {w0});
  const int s0 = append_transfer(g, "send0", 0, {StreamClass::kComm, 0}, 0, 1, 400e9, "comm", {w0});
  const int s1 = append_transfer(g, "send1", 0, {StreamClass::kComm, 1}, 0, 1, 200e9, "comm", {w1});
  ReplayOptions opt;
  opt.record_timeline = true;
  const RunResult r = replay_isolated(c.source, g, opt);
  const OpTiming a = r.timeline[s0], b = r.timeline[s1];
  ASSERT_LT(a.start, 1.0);  // the sends overlap compute and each other
  ASSERT_LT(b.start, a.end);
  const double q0 = outside(a.start, a.end, {{0.0, 1.0}});
  const double q1 = outside(b.start, b.end, {{0.0, std::max(1.0, a.end)}});
  const DeviceStats& d = r.devices[0];
  ASSERT_EQ(d.exposed_by_queue.size(), 2u);
  EXPECT_NEAR(d.exposed_by_queue[0], q0, 1e-9);
  EXPECT_NEAR(d.exposed_by_queue[1], q1, 1e-9);
  EXPECT_GT(q1, 0.1);
  EXPECT_NEAR(d.exposed_comm, q0 + q1, 1e-9);
  ASSERT_EQ(d.compute_by_phase.size(), 1u);
  EXPECT_EQ(d.compute_by_phase[0].first, "forward");
  EXPECT_NEAR(d.compute_by_phase[0].second, 1.0, 1e-9);
  EXPECT_EQ(r.devices[1].compute_by_phase[0].first, "backward");
  EXPECT_NEAR(r.devices[1].compute_by_phase[0].second, 1.5, 1e-9);
}

TEST(LlmPlan, RepeatedAnalyticalCollectiveTakesThatManyTimes) {
  Cluster c = dgx_a100(8);
  auto time_of = [&](int repeat) {
    ExecutionGraph g;
    for (const auto& gpu : c.gpus) g.devices.push_back({gpu.host, gpu.host, "", "", {}});
    Collective coll;
    coll.ranks = {0, 1, 2, 3, 4, 5, 6, 7};
    coll.bytes = 64 << 20;
    coll.analytical = true;
    coll.repeat = repeat;
    append_collective(g, "ar", coll, "comm", {});
    check_graph(g, "test");
    return replay_isolated(c.source, g, ReplayOptions{}).makespan;
  };
  EXPECT_NEAR(time_of(7), 7 * time_of(1), 1e-12);
  // Flows cannot be repeated as one op.
  ExecutionGraph g;
  for (int i = 0; i < 2; ++i) g.devices.push_back({c.gpus[i].host, c.gpus[i].host, "", "", {}});
  Collective coll;
  coll.ranks = {0, 1};
  coll.bytes = 1024;
  coll.repeat = 2;
  append_collective(g, "ar", coll, "comm", {});
  try {
    check_graph(g, "g.json");
    FAIL() << "accepted a repeated flow collective";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("needs an analytical collective"), std::string::npos)
        << e.what();
  }
}

YAML::Node tree(const std::string& text) { return YAML::Load(text); }

TEST(LlmPlan, SearchListsTheValidPlans) {
  // LLaMA-2 7B (32 layers, 32 heads) on one 8-GPU server, a global batch of 8:
  // tp x pp must divide 8, leaving (tp, pp, dp) = (1,1,8) (1,2,4) (1,4,2) (2,1,4) (2,2,2)
  // (2,4,1) (8,1,1); a micro-batch of 2 needs dp <= 4 (all but the first): 13 pairs with the
  // micro-batch, each with ZeRO 0 or 3 (FSDP beside pipeline stages too, as Llama 3 trained):
  // 26 plans of 4 x 3 x 2 x 2 = 48 combinations.
  const YAML::Node base = tree(R"(platform: {preset: dgx-a100, servers: 1}
workload: {type: llm, model: llama2_7b, seq_len: 512, global_batch: 8})");
  const YAML::Node plan = tree(R"(search:
  tp: [1, 2, 3, 8]
  pp: [1, 2, 4]
  micro_batch: [1, 2]
  zero: [0, 3]
  recompute: [none])");
  const LlmSearchSummary s = expand_llm_search(plan, base, "p.yaml");
  EXPECT_TRUE(s.active);
  EXPECT_EQ(s.combinations, 48);
  EXPECT_EQ(s.plans, 26);
  EXPECT_EQ(s.model, "llama2_7b");
  ASSERT_TRUE(s.sweep["zip"][0]["strategy.tp"].IsSequence());
  EXPECT_EQ(s.sweep["zip"][0]["strategy.tp"].size(), 26u);
  // Defaults: TP over the divisors of the 8 GPUs per server, PP over those of 8 / TP (10
  // pairs), micro-batches 1, 2, 4, 8, ZeRO 0-3, three recomputations.
  const LlmSearchSummary d = expand_llm_search(tree("search: {}"), base, "p.yaml");
  EXPECT_EQ(d.combinations, 10 * 4 * 4 * 3);
  auto refused = [&](const std::string& plan_text, const std::string& base_text) {
    try {
      expand_llm_search(tree(plan_text), tree(base_text), "p.yaml");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const std::string ok_base = R"(platform: {preset: dgx-a100, servers: 1}
workload: {type: llm, model: llama2_7b, global_batch: 8})";
  EXPECT_NE(refused("search: {gpus: [12]}", ok_base).find("not a whole number of servers"),
            std::string::npos);
  EXPECT_NE(refused("search: {zero: [4]}", ok_base).find("plan.search.zero"), std::string::npos);
  EXPECT_NE(refused("search: {tp: [3]}", ok_base).find("none of its"), std::string::npos);
  EXPECT_NE(refused("search: {}", "platform: {preset: dgx-a100}\nworkload: {type: model}")
                .find("needs workload.type llm"),
            std::string::npos);
  EXPECT_NE(refused("search: {}",
                    "platform: {preset: dgx-a100}\nworkload: {type: llm, model: "
                    "llama2_7b}")
                .find("needs workload.global_batch"),
            std::string::npos);
  EXPECT_NE(refused("search: {pipelines: [1]}", ok_base).find("pipelines"), std::string::npos);
  EXPECT_NE(refused("search: {framework: [caffe2]}", ok_base).find("unknown framework"),
            std::string::npos);
}

// Software stacks as a search dimension: every plan under each stack, but a stack that fixes
// the ZeRO stage (FSDP: 3, DDP: 0) only with that stage.
TEST(LlmPlan, SearchGoesOverFrameworksAndTheirZeroStages) {
  auto tree = [](const std::string& text) { return YAML::Load(text); };
  const YAML::Node base = tree(R"(platform: {preset: dgx-a100, servers: 1}
workload: {type: llm, model: llama2_7b, global_batch: 8})");
  const LlmSearchSummary one = expand_llm_search(
      tree("search: {tp: [1, 2], pp: [1], micro_batch: [1], zero: [0, 1, 3], recompute: [none]}"),
      base, "p.yaml");
  EXPECT_EQ(one.plans, 6);
  EXPECT_FALSE(one.sweep["zip"][0]["framework"]);
  const LlmSearchSummary s = expand_llm_search(
      tree("search: {framework: [megatron-te, pytorch-fsdp, ddp], tp: [1, 2], pp: [1], "
           "micro_batch: [1], zero: [0, 1, 3], recompute: [none]}"),
      base, "p.yaml");
  // megatron-te: all 6; pytorch-fsdp: ZeRO-3 only (2); DDP: ZeRO-0 only (2).
  EXPECT_EQ(s.plans, 10);
  const YAML::Node fw = s.sweep["zip"][0]["framework"];
  ASSERT_TRUE(fw.IsSequence());
  ASSERT_EQ(fw.size(), 10u);
  const YAML::Node zero = s.sweep["zip"][0]["strategy.zero"];
  for (size_t i = 0; i < fw.size(); ++i) {
    if (fw[i].as<std::string>() == "pytorch-fsdp") {
      EXPECT_EQ(zero[i].as<int>(), 3);
    }
    if (fw[i].as<std::string>() == "ddp") {
      EXPECT_EQ(zero[i].as<int>(), 0);
    }
  }
}

TEST(LlmPlan, PlanCommandRanksTheSimulatedPlansAndStoresThem) {
  const std::string dir = testing::make_temp_dir("llm_plan");
  testing::write_file(dir + "/p.yaml", R"(name: llm-plan
platform: {preset: dgx-a100, servers: 1}
device: A100-SXM4-40GB
workload: {type: llm, model: llama2_7b, seq_len: 512, global_batch: 8, train_tokens: 1B}
plan:
  search: {tp: [1, 2, 8], pp: [1, 2], micro_batch: [1], zero: [0, 3], recompute: [none]}
  rank_by: time
  prices: {gpu_hour: 2}
  top: 3
)");
  const std::string bin = testing::orrery_bin();
  auto r = testing::run_shell(bin + " plan " + dir + "/p.yaml -o " + dir + "/out.h5 -j 2");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("Plan search  llama2_7b"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Best 3 by time per iteration"), std::string::npos) << r.output;
  LoadedResults res = read_results_h5(dir + "/out.h5");
  double best = 1e30, rank1 = 0;
  int infeasible = 0, ranked = 0;
  for (const auto& run : res.runs) {
    const auto& p = run.params;
    if (p.at("sweep.status") == "infeasible") {
      ++infeasible;
      EXPECT_EQ(p.count("plan.rank"), 0u);
      continue;
    }
    ASSERT_EQ(p.at("sweep.status"), "ok") << p.at("sweep.error");
    ++ranked;
    const double t = run.result.makespan;
    best = std::min(best, t);
    if (p.at("plan.rank") == "1") rank1 = t;
    // The breakdown adds up to the iteration; cost = GPUs x hours x price.
    double sum = 0;
    for (const char* k :
         {"llm.compute_s", "llm.recompute_s", "llm.tp_exposed_s", "llm.ep_exposed_s",
          "llm.cp_exposed_s", "llm.pp_exposed_s", "llm.dp_exposed_s", "llm.bubble_s"})
      sum += std::atof(p.at(k).c_str());
    EXPECT_NEAR(sum, t, 1e-6 * t);
    EXPECT_NEAR(std::atof(p.at("plan.cost_per_iteration").c_str()), 8 * t / 3600 * 2, 1e-9);
    EXPECT_NEAR(std::atof(p.at("llm.gpu_hours").c_str()) * 2,
                std::atof(p.at("plan.training_cost").c_str()), 1e-6);
  }
  // TP 1 and TP 2 without pipeline or ZeRO-3 need more than 40 GB (16 bytes a parameter over
  // at most 2 GPUs); the rest run.
  EXPECT_GT(infeasible, 0);
  EXPECT_GT(ranked, 2);
  EXPECT_EQ(rank1, best);
}

}  // namespace
}  // namespace orrery

namespace orrery {
namespace {

// With a campaign, each plan's campaign ranks it: the least expected wall time (failures,
// checkpoints and restarts included) first, with its days, goodput and cost in the table.
TEST(LlmPlan, PlansRankByTheirCampaign) {
  const std::string dir = testing::make_temp_dir("llm_plan");
  testing::write_file(dir + "/p.yaml", R"(name: llm-plan-campaign
platform: {preset: dgx-h100, servers: 2}
workload: {type: llm, model: llama2_7b, seq_len: 1024, global_batch: 32}
campaign: {tokens: 100B, prices: {gpu_hour: 2.5}, checkpoint: {interval: optimal}}
plan:
  search: {tp: [1, 2, 8], pp: [1], micro_batch: [1], zero: [1], recompute: [selective]}
)");
  const std::string bin = testing::orrery_bin();
  auto r = testing::run_shell(bin + " plan " + dir + "/p.yaml -o " + dir + "/out.h5 -j 2");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("by the campaign's expected wall time"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("goodput"), std::string::npos) << r.output;
  LoadedResults res = read_results_h5(dir + "/out.h5");
  double best = 1e30, rank1 = 0;
  for (const auto& run : res.runs) {
    const auto& p = run.params;
    ASSERT_EQ(p.at("sweep.status"), "ok");
    const double days = std::atof(p.at("campaign.wall_days").c_str());
    best = std::min(best, days);
    if (p.at("plan.rank") == "1") rank1 = days;
    // Its cost: 16 GPUs and the spares' GPUs for its wall time, and its energy.
    const double spares = std::atof(p.at("campaign.spares").c_str());
    EXPECT_NEAR(std::atof(p.at("campaign.gpu_cost").c_str()), (16 + 8 * spares) * days * 24 * 2.5,
                1e-6 * days * 24 * 2.5 * 24);
  }
  EXPECT_EQ(rank1, best);
}

// A search over two systems whose top rows are all one system's: the list of each system's
// best plan still names the other, with its own best rank and time.
TEST(LlmPlan, PlanAcrossSystemsShowsEachSystemsBestPlan) {
  const std::string dir = testing::make_temp_dir("llm_plan");
  testing::write_file(dir + "/p.yaml", R"(name: two-systems
platform: {preset: dgx-a100, servers: 1}
workload: {type: llm, model: llama2_7b, seq_len: 512, global_batch: 8}
sweep:
  named:
    system:
      fast: {platform: {preset: dgx-a100, servers: 1}}
      slow: {platform: {preset: dgx-a100, servers: 1, server: {nvlink: {bandwidth: 2.5GB/s}}}}
plan:
  search: {tp: [2, 4, 8], pp: [1], micro_batch: [1], zero: [1], recompute: [none]}
  rank_by: time
  top: 1
)");
  auto r = testing::run_shell(testing::orrery_bin() + " plan " + dir + "/p.yaml -o " + dir +
                              "/out.h5 -j 2");
  ASSERT_EQ(r.status, 0) << r.output;
  const auto at = r.output.find("Best plan of each system");
  ASSERT_NE(at, std::string::npos) << r.output;
  const std::string list = r.output.substr(at);
  EXPECT_NE(list.find("system=fast"), std::string::npos) << list;
  EXPECT_NE(list.find("system=slow"), std::string::npos) << list;
  // The fast system is listed first (its best ranks 1); the slow one's best ranks lower.
  EXPECT_LT(list.find("system=fast"), list.find("system=slow")) << list;
  LoadedResults res = read_results_h5(dir + "/out.h5");
  double fast = 1e30, slow = 1e30;
  for (const auto& run : res.runs) {
    if (run.params.at("sweep.status") != "ok") continue;
    double& best = run.params.at("system") == "fast" ? fast : slow;
    best = std::min(best, run.result.makespan);
  }
  ASSERT_LT(fast, slow);
  char want[32];
  std::snprintf(want, sizeof want, "%.3f", slow);
  EXPECT_NE(list.find(want), std::string::npos) << list << " wants " << want;
}

}  // namespace
}  // namespace orrery

namespace orrery {
namespace {

// Plans whose likely ranges (the validated runs most like them, scenario/error_band.h) overlap
// the best's are marked: the model's error cannot tell them apart. Checked by hand from each
// point's stored range; rank_by pessimistic ranks by the top of the range.
TEST(LlmPlan, PlansWithinTheBestsLikelyRangeAreMarked) {
  const std::string dir = testing::make_temp_dir("llm_plan");
  testing::write_file(dir + "/p.yaml", R"(name: ranges
platform: {preset: dgx-h100, servers: 1}
workload: {type: llm, model: llama2_7b, seq_len: 1024, global_batch: 16}
plan:
  search: {tp: [1, 2, 4, 8], pp: [1], micro_batch: [1], zero: [1], recompute: [none]}
  rank_by: pessimistic
)");
  auto r = testing::run_shell(testing::orrery_bin() + " plan " + dir + "/p.yaml -o " + dir +
                              "/out.h5 -j 2");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("Best 4 by the top of the likely range"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("marked ~"), std::string::npos) << r.output;
  LoadedResults res = read_results_h5(dir + "/out.h5");
  struct Row {
    int rank;
    double low, high;
    bool within;
  };
  std::vector<Row> rows;
  for (const auto& run : res.runs) {
    const auto& p = run.params;
    if (p.at("sweep.status") != "ok") continue;
    ASSERT_TRUE(p.count("likely.low_s")) << "no likely range stored";
    rows.push_back({std::atoi(p.at("plan.rank").c_str()), std::atof(p.at("likely.low_s").c_str()),
                    std::atof(p.at("likely.high_s").c_str()), p.at("plan.within_range") == "1"});
  }
  ASSERT_GE(rows.size(), 3u);
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.rank < b.rank; });
  int within = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_LE(rows[0].high, rows[i].high);  // pessimistic: the lowest top first
    const bool overlap = i > 0 && rows[i].low <= rows[0].high && rows[0].low <= rows[i].high;
    EXPECT_EQ(rows[i].within, overlap) << "rank " << rows[i].rank;
    within += overlap;
  }
  // Here at least two plans are within the best's range (the acceptance case).
  EXPECT_GE(within, 1);
}

}  // namespace
}  // namespace orrery
