// Distribution strategies: hand-computed parameter-server times, overlap on/off, bucket
// fusion, PEARL versus PS traffic, and the errors a platform that cannot host a strategy gives.
#include <gtest/gtest.h>

#include <algorithm>

#include "common/errors.h"
#include "common/yaml_reader.h"
#include "engine/graph_check.h"
#include "engine/replay.h"
#include "models/cost_model.h"
#include "models/pricing.h"
#include "platforms/platform_spec.h"
#include "strategies/model_index.h"
#include "strategies/strategy.h"
#include "workloads/zoo/zoo.h"

namespace orrery {
namespace {

// A model of `layers` layers of `params` fp32 weights each, with negligible compute: forward
// op (owns the weights), backward weight-gradient op, optimizer update.
ModelGraph tiny_model(int layers, double params) {
  ModelGraph m;
  m.name = "tiny";
  for (int l = 0; l < layers; ++l) {
    ModelOp f;
    f.name = "fwd" + std::to_string(l);
    f.type = "relu";
    f.layer = "layer" + std::to_string(l);
    f.params = params;
    if (l > 0) f.deps = {l - 1};
    m.ops.push_back(f);
  }
  for (int l = layers - 1; l >= 0; --l) {
    ModelOp b;
    b.name = "bwd" + std::to_string(l);
    b.type = "relu_bwd";
    b.phase = Phase::kBackward;
    b.layer = "layer" + std::to_string(l);
    b.grads = params;
    b.deps = {static_cast<int>(m.ops.size()) - 1};
    m.ops.push_back(b);
  }
  for (int l = 0; l < layers; ++l) {
    ModelOp u;
    u.name = "upd" + std::to_string(l);
    u.type = "sgd_update";
    u.phase = Phase::kOptimizer;
    u.layer = "layer" + std::to_string(l);
    u.deps = {2 * layers - 1 - l};  // its gradient op
    m.ops.push_back(u);
  }
  return m;
}

// Servers n0..n<servers-1>; each has a CPU on a link of `cpu_bw` to the switch and `gpus` GPUs
// on links of 100 GB/s. CPUs are fast enough that PS updates take no time.
Topology ps_platform(int servers, int gpus, double cpu_bw) {
  Topology t;
  t.name = "ps";
  t.routers = {"switch"};
  for (int s = 0; s < servers; ++s) {
    std::string p = "n" + std::to_string(s) + "_";
    t.hosts.push_back({p + "cpu0", 1e18, 8, "cpu", {}});
    t.links.push_back({p + "cpu0_l", cpu_bw, 1e-9, true, "ethernet"});
    t.edges.push_back({p + "cpu0", "switch", p + "cpu0_l"});
    for (int g = 0; g < gpus; ++g) {
      std::string h = p + "gpu" + std::to_string(g);
      t.hosts.push_back({h, 1e15, 1, "gpu", {{"launch_host", p + "cpu0"}}});
      t.links.push_back({h + "_l", 100e9, 1e-9, true, "ethernet"});
      t.edges.push_back({h, "switch", h + "_l"});
    }
  }
  return t;
}

RunResult run(const Topology& t, const ModelGraph& m, const StrategyOptions& opt,
              double seconds_per_op = 0.0) {
  PricedReplica r{&m, std::vector<double>(m.ops.size(), seconds_per_op), nullptr};
  ExecutionGraph g = build_strategy(r, cluster_layout(t), opt);
  check_graph(g, "strategy");
  PlatformSource p;
  p.topology = t;
  return replay_isolated(p, g, ReplayOptions{});
}

TEST(Strategies, PsPullPushTimeIsTheBottleneckLinksAndHalvesWithTwoPsHosts) {
  // Two variables of 25 M fp32 weights (100 MB each). One worker GPU on server n2. With one PS
  // (n0), its 1 GB/s link carries both pulls (200 MB) then both pushes (200 MB): 0.4 s. With
  // two PS hosts each carries one variable's pull and push: 0.2 s. Flows only: no requests'
  // software time, no host copies (tests/parameter_server_test.cc covers those).
  ModelGraph m = tiny_model(2, 25e6);
  Topology t = ps_platform(3, 1, 1e9);
  StrategyOptions opt;
  opt.type = StrategyType::kPsWorker;
  opt.input_bytes = 0;
  opt.ps_servers = 1;
  opt.ps.rpc_overhead = 0;
  opt.ps.copies = false;
  t.hosts.erase(
      std::remove_if(t.hosts.begin(), t.hosts.end(),
                     [](const TopoHost& h) { return h.name == "n0_gpu0" || h.name == "n1_gpu0"; }),
      t.hosts.end());
  t.edges.erase(
      std::remove_if(t.edges.begin(), t.edges.end(),
                     [](const TopoEdge& e) { return e.a == "n0_gpu0" || e.a == "n1_gpu0"; }),
      t.edges.end());
  double one = run(t, m, opt).makespan;
  EXPECT_NEAR(one, 0.4, 0.4 * 0.01);
  opt.ps_servers = 2;
  double two = run(t, m, opt).makespan;
  EXPECT_NEAR(two, 0.2, 0.2 * 0.01);
}

TEST(Strategies, PsShardsLargestVariableFirstOntoTheLeastLoadedPs) {
  ModelGraph m = tiny_model(3, 1e6);
  m.ops[0].params = 3e6;  // layer0 is the largest
  auto vars = model_variables(m);
  ASSERT_EQ(vars.size(), 3u);
  // Variables come in backward order: layer2, layer1, layer0.
  EXPECT_EQ(vars[0].layer, "layer2");
  EXPECT_DOUBLE_EQ(vars[2].pull_bytes, 12e6);
  EXPECT_DOUBLE_EQ(vars[2].grad_bytes, 4e6);  // gradient ops carry 1e6 grads of layer0
}

TEST(Strategies, OverlapHidesGradientCommunicationBehindBackward) {
  // 4 layers of 50 MB of gradients on 2 GPUs over 1 GB/s: with overlap the all-reduce of the
  // last layers runs while earlier layers still compute backward.
  ModelGraph m = tiny_model(4, 12.5e6);
  Topology t = ps_platform(2, 1, 1e9);
  for (auto& l : t.links) l.bandwidth = 1e9;
  StrategyOptions opt;
  opt.type = StrategyType::kAllReduce;
  opt.input_bytes = 0;
  opt.bucket_bytes = 1;  // one bucket per layer
  opt.overlap = true;
  // Bytes over links only: the hand count below has no protocol latency.
  opt.collectives.protocol = CollectiveProtocol::kIdeal;
  double on = run(t, m, opt, 20e-3).makespan;
  opt.overlap = false;
  double off = run(t, m, opt, 20e-3).makespan;
  // Each 50 MB all-reduce over 2 GPUs: 2 steps of 25 MB at 1 GB/s = 50 ms. Without overlap all
  // four follow backward (8 ops x 20 ms): 160 + 4 x 50 + 20 (last update) = 380 ms. With
  // overlap the first bucket starts when the last layer's backward ends (100 ms) and the
  // communication stream stays busy from there: 100 + 4 x 50 + 20 = 320 ms.
  EXPECT_NEAR(off, 0.160 + 4 * 0.050 + 0.020, 1e-6);
  EXPECT_NEAR(on, 0.100 + 4 * 0.050 + 0.020, 1e-6);
}

TEST(Strategies, BucketsFuseGradientsUpToTheThreshold) {
  YAML::Node keys = YAML::Load("{batch: 8}");
  ModelGraph m = make_zoo_model("resnet50", YamlMap(keys, "test"));
  double total = m.total_grad_bytes();
  auto buckets = gradient_buckets(m, 25.0 * 1024 * 1024, false);
  // ResNet-50 has 25.6 M parameters (~97.5 MiB of fp32 gradients): 4 buckets of >= 25 MiB.
  EXPECT_EQ(buckets.size(), 4u);
  double sum = 0;
  for (const auto& b : buckets)
    for (int j : b) sum += m.ops[j].grads * 4;
  EXPECT_DOUBLE_EQ(sum, total);
}

TEST(Strategies, PearlMovesFewerBytesThanPsForASparseEmbeddingModel) {
  // GCN (PAI Table IV): 25 GiB of sparse embeddings and a dense tower. PS
  // funnels every worker's dense weights and rows through the PS host's link; PEARL all-reduces
  // dense weights and gathers only looked-up rows.
  YAML::Node keys = YAML::Load("{batch: 64}");
  ModelGraph m = make_zoo_model("gcn", YamlMap(keys, "test"));
  Topology t = ps_platform(2, 4, 10e9);
  auto busiest = [](const RunResult& r) {
    double most = 0;
    for (const auto& l : r.links) most = std::max(most, l.bytes);
    return most;
  };
  StrategyOptions opt;
  opt.input_bytes = 0;
  opt.type = StrategyType::kPsWorker;
  RunResult ps = run(t, m, opt, 1e-6);
  opt.type = StrategyType::kPearl;
  opt.gpus = 4;
  RunResult pearl = run(t, m, opt, 1e-6);
  EXPECT_LT(busiest(pearl), busiest(ps) / 2);
}

TEST(Strategies, OneWngSharesPcieAndIsSlowerThanOneGpu) {
  PlatformSpec spec =
      parse_platform_spec(YAML::Load("{preset: pcie-server, server: {gpus: 4}}"), "test");
  Topology t = build_topology(spec);
  ModelGraph m = tiny_model(4, 25e6);
  StrategyOptions opt;
  opt.type = StrategyType::k1w1g;
  double single = run(t, m, opt, 1e-3).makespan;
  opt.type = StrategyType::k1wng;
  RunResult multi = run(t, m, opt, 1e-3);
  // Four replicas pull 400 MB of weights and push 400 MB of gradients over one PCIe tree.
  EXPECT_GT(multi.makespan, single);
  double pcie = 0;
  for (const auto& l : multi.links)
    if (l.link_class == "pcie") pcie = std::max(pcie, l.bytes);
  EXPECT_GE(pcie, 4 * 100e6);
}

TEST(Strategies, PlatformsThatCannotHostAStrategyAreInputErrors) {
  ModelGraph m = tiny_model(2, 1e6);
  PricedReplica r{&m, std::vector<double>(m.ops.size(), 0.0), nullptr};
  ClusterLayout one_server = cluster_layout(ps_platform(1, 2, 1e9));
  StrategyOptions opt;
  opt.type = StrategyType::kPsWorker;
  EXPECT_THROW(build_strategy(r, one_server, opt), InputError);
  opt.type = StrategyType::k1wng;
  opt.gpus = 3;
  EXPECT_THROW(build_strategy(r, one_server, opt), InputError);
  opt.type = StrategyType::kAllReduce;
  opt.gpus = 2;
  EXPECT_NO_THROW(build_strategy(r, one_server, opt));
}

TEST(Strategies, InputPipelineStallsTheGpuWhenSlower) {
  // Cachew (docs/references.md): a 50 ms CPU input stage feeding 4 x 1 ms of compute per
  // step stalls the GPU; over 3 steps with one batch of prefetch the stage paces the run.
  ModelGraph m = tiny_model(2, 1e3);
  Topology t = ps_platform(1, 1, 10e9);
  StrategyOptions opt;
  opt.type = StrategyType::k1w1g;
  opt.input_bytes = 1e6;
  opt.iterations = 3;
  double fast = run(t, m, opt, 1e-3).makespan;
  opt.input_pipeline_time = 50e-3;
  double slow = run(t, m, opt, 1e-3).makespan;
  EXPECT_LT(fast, 0.02);
  EXPECT_GT(slow, 3 * 0.050);
  EXPECT_LT(slow, 3 * 0.050 + 0.02);
}

}  // namespace
}  // namespace orrery
