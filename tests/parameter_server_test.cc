// PS/Worker as deployed (strategies/parameter_server.cc, ps_placement.cc, ps_options.cc): the
// per-request cost, the PS's aggregation on its memory bus, co-located versus dedicated shards on
// a NIC-bound cluster, the wait for every pull before forward, what the placement policies place,
// and the errors bad keys give. Expectations are worked out in the comments.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "common/errors.h"
#include "common/yaml_reader.h"
#include "engine/graph_check.h"
#include "engine/replay.h"
#include "scenario/scenario.h"
#include "strategies/model_index.h"
#include "strategies/ps_placement.h"
#include "strategies/strategy.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

// `layers` layers of `params` fp32 weights: a forward op owning them, a weight-gradient op, a
// momentum update (5 passes of 4 bytes per element, 4 flops). Compute costs what the caller says.
ModelGraph layered_model(int layers, double params) {
  ModelGraph m;
  m.name = "layered";
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
    u.type = "momentum_update";
    u.phase = Phase::kOptimizer;
    u.layer = "layer" + std::to_string(l);
    u.flops = 4 * params;
    u.bytes = 20 * params;
    u.deps = {2 * layers - 1 - l};
    m.ops.push_back(u);
  }
  return m;
}

// Servers n0..n<servers-1>. Each has a CPU n<s>_cpu0 (8 cores of 1e15 flop/s: sums never wait
// for flops; memory bandwidth `mem_bw`) and `gpus` GPUs on a server switch by 1 TB/s links, and
// reaches the cluster switch through one NIC link of `nic_bw`. Latencies are 1 ns.
Topology cluster(int servers, int gpus, double nic_bw, double mem_bw) {
  Topology t;
  t.name = "cluster";
  t.routers = {"switch"};
  for (int s = 0; s < servers; ++s) {
    const std::string p = "n" + std::to_string(s) + "_";
    t.routers.push_back(p + "sw");
    t.hosts.push_back({p + "cpu0", 1e15, 8, "cpu", {{"mem_bw", std::to_string(mem_bw)}}});
    t.links.push_back({p + "cpu0_l", 1e12, 1e-9, true, "pcie"});
    t.edges.push_back({p + "cpu0", p + "sw", p + "cpu0_l"});
    for (int g = 0; g < gpus; ++g) {
      const std::string h = p + "gpu" + std::to_string(g);
      t.hosts.push_back({h, 1e15, 1, "gpu", {{"launch_host", p + "cpu0"}}});
      t.links.push_back({h + "_l", 1e12, 1e-9, true, "pcie"});
      t.edges.push_back({h, p + "sw", h + "_l"});
    }
    t.links.push_back({p + "nic", nic_bw, 1e-9, true, "ethernet"});
    t.edges.push_back({p + "sw", "switch", p + "nic"});
  }
  return t;
}

struct Replayed {
  ExecutionGraph graph;
  RunResult result;
  double start(const std::string& op) const { return at(op).start; }
  double end(const std::string& op) const { return at(op).end; }
  const OpTiming& at(const std::string& op) const {
    const int i = graph.find_op(op);
    if (i < 0) throw std::runtime_error("no op " + op);
    return result.timeline.at(i);
  }
};

Replayed run(const Topology& t, const ModelGraph& m, const StrategyOptions& opt,
             double seconds_per_op = 0.0) {
  PricedReplica r{&m, std::vector<double>(m.ops.size(), seconds_per_op), nullptr};
  Replayed out;
  out.graph = build_strategy(r, cluster_layout(t), opt);
  check_graph(out.graph, "strategy");
  PlatformSource p;
  p.topology = t;
  out.result = replay_isolated(p, out.graph, ReplayOptions{});
  return out;
}

StrategyOptions ps_worker() {
  StrategyOptions opt;
  opt.type = StrategyType::kPsWorker;
  opt.input_bytes = 0;
  opt.host_overheads = false;
  return opt;
}

TEST(ParameterServer, EveryRequestCostsItsRpcOverhead) {
  // One worker (n1), one dedicated PS (n0), tensors of 4 bytes, no copies. A pull is the PS's half
  // of the request (0.5 ms) then the worker's (0.5 ms); each end serves its connection one request
  // at a time, so L pulls end at (L + 1) x 0.5 ms, and L pushes, in the other direction, likewise:
  // 2 x (L + 1) x 0.5 ms = (L + 1) ms. Ten more tensors cost ten more requests: 10 ms.
  StrategyOptions opt = ps_worker();
  opt.ps.copies = false;
  opt.ps.rpc_overhead = 1e-3;
  const Topology t = cluster(2, 1, 1e12, 1e12);
  const double ten = run(t, layered_model(10, 1), opt).result.makespan;
  const double twenty = run(t, layered_model(20, 1), opt).result.makespan;
  EXPECT_NEAR(ten, 11e-3, 1e-5);
  EXPECT_NEAR(twenty - ten, 10 * opt.ps.rpc_overhead, 1e-5);
  opt.ps.rpc_overhead = 0;
  EXPECT_LT(run(t, layered_model(20, 1), opt).result.makespan, 1e-5);
}

TEST(ParameterServer, AggregationReadsEveryWorkersGradientAtThePsMemoryBandwidth) {
  // Four workers (the GPUs of n1) push a 40 MB gradient to the PS on n0, whose memory moves
  // 10 GB/s. Summing reads 4 x 40 MB and writes 40 MB: 200 MB / 10 GB/s =
  // 20 ms. The momentum update then reads and writes 5 x 40 MB: 20 ms.
  StrategyOptions opt = ps_worker();
  const double mem_bw = 10e9, bytes = 40e6;
  Replayed r = run(cluster(2, 4, 100e9, mem_bw), layered_model(1, bytes / 4), opt);
  const auto& sum = r.at("ps/layer0.aggregate");
  EXPECT_NEAR(sum.end - sum.start, (4 + 1) * bytes / mem_bw, 1e-9);
  const auto& update = r.at("ps/layer0.update");
  EXPECT_NEAR(update.end - update.start, 5 * bytes / mem_bw, 1e-9);
  // The copies of one socket share its bus: the PS's four receive copies (2 x 40 MB each) and the
  // sum run one after another, never two at once.
  std::vector<std::pair<double, double>> bus;
  for (int w = 0; w < 4; ++w) {
    const auto& c = r.at("w" + std::to_string(w) + "/layer0.push.ps_copy");
    EXPECT_NEAR(c.end - c.start, 2 * bytes / mem_bw, 1e-9);
    bus.push_back({c.start, c.end});
  }
  bus.push_back({sum.start, sum.end});
  std::sort(bus.begin(), bus.end());
  for (size_t i = 1; i < bus.size(); ++i) EXPECT_GE(bus[i].first, bus[i - 1].second - 1e-12);
}

TEST(ParameterServer, RequestsStreamThroughOneRpcThreadAtTheStacksRate) {
  // One worker, one layer of 100 MB, NIC 1 GB/s, RPC stack 0.5 GB/s, no request overhead. A
  // pull: the shard's stack serializes 100 MB (0.2 s) on the thread serving the worker, the
  // NIC carries it (0.1 s), the worker's pull thread takes it back (0.2 s).
  StrategyOptions opt = ps_worker();
  opt.ps.rpc_overhead = 0;
  opt.ps.rpc_bandwidth = 0.5e9;
  const double bytes = 100e6;
  Replayed r = run(cluster(2, 1, 1e9, 1e15), layered_model(1, bytes / 4), opt);
  const auto& out = r.at("w0/layer0.pull.ps_stack");
  EXPECT_NEAR(out.end - out.start, bytes / 0.5e9, 1e-9);
  const auto& wire = r.at("w0/layer0.pull");
  EXPECT_GE(wire.start, out.end - 1e-12);
  EXPECT_NEAR(wire.end - wire.start, bytes / 1e9, 0.01 * bytes / 1e9);
  const auto& in = r.at("w0/layer0.pull.stack");
  EXPECT_GE(in.start, wire.end - 1e-12);
  EXPECT_NEAR(in.end - in.start, bytes / 0.5e9, 1e-9);
  // A push streams through both stacks too; rpc_bandwidth 0 leaves the stack out.
  EXPECT_NEAR(r.at("w0/layer0.push.ps_stack").end - r.at("w0/layer0.push.ps_stack").start,
              bytes / 0.5e9, 1e-9);
  opt.ps.rpc_bandwidth = 0;
  Replayed none = run(cluster(2, 1, 1e9, 1e15), layered_model(1, bytes / 4), opt);
  EXPECT_LT(none.result.makespan, r.result.makespan - 4 * bytes / 0.5e9 + 0.01);
}

TEST(HostAllReduce, CopiesSumsAndRingsOverTheCpus) {
  // Horovod without GPU operations on 2 servers of 2 GPUs: one 100 MB bucket. Each GPU copies it
  // to its server's CPU (PCIe links of 1 TB/s: 0.1 ms); each CPU sums its 2 copies (reads 2,
  // writes 1: 300 MB at 10 GB/s, 30 ms); the 2 CPUs run a ring all-reduce, 2 steps of 50 MB,
  // each at most the TCP stream's 0.5 GB/s (the NIC gives 1 GB/s): 0.2 s; each CPU sums what it
  // received (1/2 of the bucket read twice, written once: 150 MB, 15 ms); the GPUs copy it back.
  StrategyOptions opt;
  opt.type = StrategyType::kAllReduce;
  opt.input_bytes = 0;
  opt.host_overheads = false;
  opt.host_allreduce = true;
  opt.host_stream_bandwidth = 0.5e9;
  const double bytes = 100e6, mem = 10e9;
  const Topology t = cluster(2, 2, 1e9, mem);
  Replayed r = run(t, layered_model(1, bytes / 4), opt);
  const auto& sum = r.at("allreduce.bucket0.sum0");
  EXPECT_NEAR(sum.end - sum.start, 3 * bytes / mem, 1e-3);
  const auto& ring = r.at("allreduce.bucket0.ring");
  EXPECT_GE(ring.start, sum.end - 1e-12);
  EXPECT_NEAR(ring.end - ring.start, 2 * (bytes / 2) / 0.5e9, 0.01 * 0.2);
  const int cpu1 = r.graph.find_op("allreduce.bucket0.reduce1") >= 0 ? 1 : 0;
  ASSERT_EQ(cpu1, 1);
  const auto& reduce = r.at("allreduce.bucket0.reduce1");
  EXPECT_NEAR(reduce.end - reduce.start, 1.5 * bytes / mem, 1e-3);
  // Each GPU's update waits for its own copy back, which waits for its CPU's sum.
  EXPECT_GE(r.start("g3/upd0"), r.end("allreduce.bucket0.g3.h2d") - 1e-12);
  EXPECT_GE(r.start("allreduce.bucket0.g3.h2d"), reduce.end - 1e-12);
  // A faster stream than the NIC leaves the NIC to decide: 2 x 50 MB at 1 GB/s.
  opt.host_stream_bandwidth = 10e9;
  Replayed fast = run(t, layered_model(1, bytes / 4), opt);
  const auto& nic_ring = fast.at("allreduce.bucket0.ring");
  EXPECT_NEAR(nic_ring.end - nic_ring.start, 2 * (bytes / 2) / 1e9, 0.01 * 0.1);
}

TEST(BytePs, ServersSumEachMachinesShardSlices) {
  // BytePS on 2 servers of 2 GPUs, a summation server on each (colocated), one 100 MB bucket,
  // NICs of 1 GB/s, CPU memory 10 GB/s, TCP streams faster than the NIC. Each server's GPUs
  // reduce-scatter the bucket (50 MB each), copy their shard to host and push half of it (25 MB)
  // to each summation server: to their own over loopback (no flow), to the other over the NIC,
  // which the server's 2 GPUs share (25 MB at 0.5 GB/s: 50 ms). A summation server adds the two
  // machines' 50 MB slices (reads 2, writes 1: 15 ms at 10 GB/s); the pulls come back the same
  // way; the GPUs all-gather the bucket before their updates.
  StrategyOptions opt;
  opt.type = StrategyType::kBytePs;
  opt.ps.placement = PsPlacement::kColocated;
  opt.input_bytes = 0;
  opt.host_overheads = false;
  opt.host_stream_bandwidth = 100e9;
  const double bytes = 100e6, mem = 10e9;
  Replayed r = run(cluster(2, 2, 1e9, mem), layered_model(1, bytes / 4), opt);
  EXPECT_LT(r.graph.find_op("byteps.bucket0.g0.push0"), 0);  // loopback
  const auto& push = r.at("byteps.bucket0.g0.push1");
  EXPECT_NEAR(push.end - push.start, 25e6 / 0.5e9, 0.02 * 0.05);
  const auto& sum = r.at("byteps.bucket0.sum1");
  EXPECT_NEAR(sum.end - sum.start, 3 * 50e6 / mem, 1e-3);
  EXPECT_GE(sum.start, push.end - 1e-12);
  const auto& pull = r.at("byteps.bucket0.g0.pull1");
  EXPECT_GE(pull.start, sum.end - 1e-12);
  EXPECT_NEAR(pull.end - pull.start, 25e6 / 0.5e9, 0.02 * 0.05);
  const int ag = r.graph.find_op("byteps.bucket0.ag0");
  ASSERT_GE(ag, 0);
  EXPECT_GE(r.start("g0/upd0"), r.end("byteps.bucket0.ag0") - 1e-12);
  EXPECT_GE(r.start("byteps.bucket0.ag0"), r.end("byteps.bucket0.g1.h2d") - 1e-12);
  // A TCP stream slower than the NIC's share decides instead: 25 MB at 0.2 GB/s.
  opt.host_stream_bandwidth = 0.2e9;
  Replayed slow = run(cluster(2, 2, 1e9, mem), layered_model(1, bytes / 4), opt);
  const auto& capped = slow.at("byteps.bucket0.g0.push1");
  EXPECT_NEAR(capped.end - capped.start, 25e6 / 0.2e9, 0.02 * 0.125);
}

// docs/strategies.md's Horovod table is what `orrery accuracy --only horovod --markdown` prints
// now (a golden result; regenerate it with --update-doc when a model changes on purpose).
TEST(ParameterServer, HorovodTableInTheDocsIsWhatAccuracyPrints) {
  if (testing::orrery_bin().empty()) GTEST_SKIP() << "ORRERY_BIN is set by ctest";
  const std::string output = testing::expect_doc_block_is_command_output(
      "accuracy --only horovod --markdown -j 2", "docs/strategies.md", "ps-validation");
  for (const char* row : {"| VGG-16, parameter servers | 16 P100 | 74.7 samples/s |",
                          "| ResNet-101, Horovod, all-reduce on the CPUs | 16 P100 | 1338.3"})
    EXPECT_NE(output.find(row), std::string::npos) << row;
}

TEST(ParameterServer, ColocatedIsSlowerThanDedicatedWhenTheNicIsTheBottleneck) {
  // Four worker servers of one GPU; 64 layers of 2.5 MB (M = 160 MB per worker and direction),
  // placed round-robin on four shards; NICs of 1 GB/s are the only slow links; compute, copies and
  // requests take no time; six steps. A variable's pull for the next step starts when its update
  // is done, while later variables are still being pushed, so pulls and pushes overlap.
  //  - dedicated (four more servers, one shard each): the first step's pulls bring M in (0.16 s);
  //    then each step pushes M out while the next step's pulls come in, plus the pulls of the four
  //    variables updated last (10 MB, 0.01 s); the last step's pushes take 0.16 s:
  //    0.16 + 5 x 0.17 + 0.16 = 1.17 s.
  //  - co-located (a shard on each worker server): a quarter of every pull and push stays on the
  //    server. Out of its NIC go three quarters of its worker's pushes (120 MB) and its shard's
  //    answers to the other three workers' pulls (3 x 40 MB), 0.24 s a step; the first step only
  //    pulls (0.12 s each way), the last only pushes: 0.12 + 5 x 0.24 + 0.12 = 1.44 s.
  StrategyOptions opt = ps_worker();
  opt.ps.rpc_overhead = 0;
  opt.ps.rpc_bandwidth = 0;
  opt.ps.policy = PsPolicy::kRoundRobin;
  opt.iterations = 6;
  const ModelGraph m = layered_model(64, 2.5e6 / 4);
  const double nic = 1e9, mem = 1e15;
  opt.ps_servers = 4;
  const double dedicated = run(cluster(8, 1, nic, mem), m, opt).result.makespan;
  opt.ps.placement = PsPlacement::kColocated;
  const double colocated = run(cluster(4, 1, nic, mem), m, opt).result.makespan;
  EXPECT_NEAR(dedicated, 1.17, 0.01 * 1.17);
  EXPECT_NEAR(colocated, 1.44, 0.01 * 1.44);
  EXPECT_GT(colocated, 1.2 * dedicated);
}

TEST(ParameterServer, WorkersWaitForEveryPullBeforeForward) {
  // One worker, two layers of 100 MB, NIC 1 GB/s, forward ops of 10 ms. The second layer's pull
  // ends 0.2 s in; with pulls: all the first forward op starts only then. With pulls: per_layer
  // it starts as soon as its own layer is on the GPU (0.1 s), while the second pull is in flight.
  StrategyOptions opt = ps_worker();
  opt.ps.rpc_overhead = 0;
  opt.ps.rpc_bandwidth = 0;
  const Topology t = cluster(2, 1, 1e9, 1e12);
  const ModelGraph m = layered_model(2, 25e6);
  Replayed all = run(t, m, opt, 10e-3);
  const double last_pull = all.end("w0/layer1.pull.h2d");
  EXPECT_NEAR(last_pull, 0.2, 1e-3);
  EXPECT_GE(all.start("w0/fwd0"), last_pull);
  opt.ps.pulls = PsPulls::kPerLayer;
  Replayed per_layer = run(t, m, opt, 10e-3);
  EXPECT_NEAR(per_layer.start("w0/fwd0"), per_layer.end("w0/layer0.pull.h2d"), 1e-9);
  EXPECT_LT(per_layer.start("w0/fwd0"), per_layer.end("w0/layer1.pull.h2d") - 0.05);
  // Pushes follow backward: a layer's push leaves the GPU when its gradient exists.
  EXPECT_NEAR(all.start("w0/layer1.push.d2h"), all.end("w0/bwd1"), 1e-9);
}

TEST(ParameterServer, PoliciesPlaceWhatTheyClaim) {
  // Variables come in backward order; sizes 1, 5, 3, 2 (MB) and created (first read) in reverse.
  std::vector<Variable> vars(4);
  const double mb[] = {1, 5, 3, 2};
  for (int v = 0; v < 4; ++v) {
    vars[v].layer = "v" + std::to_string(v);
    vars[v].pull_bytes = mb[v] * 1e6;
    vars[v].forward = {3 - v};
  }
  // greedy, by bytes onto the least-loaded: 5 -> s0, 3 -> s1, 2 -> s1 (3 < 5), 1 -> s0 (5 = 5,
  // first wins).
  auto g = place_variables(vars, 2, PsPolicy::kGreedy);
  ASSERT_EQ(g.size(), 4u);
  EXPECT_EQ(g[1].shard, 0);
  EXPECT_EQ(g[2].shard, 1);
  EXPECT_EQ(g[3].shard, 1);
  EXPECT_EQ(g[0].shard, 0);
  // round_robin, in creation order v3, v2, v1, v0.
  auto rr = place_variables(vars, 2, PsPolicy::kRoundRobin);
  EXPECT_EQ(rr[3].shard, 0);
  EXPECT_EQ(rr[2].shard, 1);
  EXPECT_EQ(rr[1].shard, 0);
  EXPECT_EQ(rr[0].shard, 1);
  // partitioned: a third of every variable on each of three shards.
  auto part = place_variables(vars, 3, PsPolicy::kPartitioned);
  ASSERT_EQ(part.size(), 12u);
  for (size_t i = 0; i < part.size(); ++i) {
    EXPECT_EQ(part[i].var, static_cast<int>(i / 3));
    EXPECT_EQ(part[i].shard, static_cast<int>(i % 3));
    EXPECT_DOUBLE_EQ(part[i].fraction, 1.0 / 3);
  }

  // Shards go server after server, then to each server's next socket.
  ClusterLayout layout;
  for (int s = 0; s < 2; ++s)
    layout.servers.push_back(
        {{}, {"n" + std::to_string(s) + "_cpu0", "n" + std::to_string(s) + "_cpu1"}, {4, 4}});
  auto shards = place_ps_shards(layout, {0, 1}, 3, 0);
  ASSERT_EQ(shards.size(), 3u);
  EXPECT_EQ(shards[0].host, "n0_cpu0");
  EXPECT_EQ(shards[1].host, "n1_cpu0");
  EXPECT_EQ(shards[2].host, "n0_cpu1");
  EXPECT_EQ(shards[2].cores, 4);
  EXPECT_EQ(place_ps_shards(layout, {1}, 1, 2)[0].cores, 2);

  // In a graph: two shards on two dedicated servers, greedy; layer0 (4 MB) and layer1 (8 MB)
  // land on different PS hosts, and every one of layer1's requests goes to the same one.
  const ModelGraph m = [] {
    ModelGraph x = layered_model(2, 1e6);
    x.ops[1].params = 2e6;
    return x;
  }();
  StrategyOptions opt = ps_worker();
  opt.ps_servers = 2;
  PricedReplica r{&m, std::vector<double>(m.ops.size(), 0.0), nullptr};
  ExecutionGraph graph = build_strategy(r, cluster_layout(cluster(3, 2, 1e9, 1e9)), opt);
  auto host_of = [&](const std::string& op) {
    return graph.devices[graph.ops[graph.find_op(op)].device].host;
  };
  EXPECT_EQ(host_of("ps/layer1.update"), "n0_cpu0");
  EXPECT_EQ(host_of("ps/layer0.update"), "n1_cpu0");
  EXPECT_EQ(host_of("w1/layer1.push.ps_rpc"), "n0_cpu0");
}

TEST(ParameterServer, BadKeysAndLayoutsAreInputErrorsNamingTheKey) {
  auto parse = [](const std::string& text) {
    YAML::Node n = YAML::Load(text);
    return parse_ps_options(YamlMap(n, "s.yaml", "strategy.ps"));
  };
  auto message = [&](const std::string& text) {
    try {
      parse(text);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("{placement: colocate}").find("strategy.ps.placement"), std::string::npos);
  EXPECT_NE(message("{placement: colocate}").find("did you mean \"colocated\""), std::string::npos);
  EXPECT_NE(message("{policy: greedy-by-size}").find("strategy.ps.policy"), std::string::npos);
  EXPECT_NE(message("{pulls: some}").find("strategy.ps.pulls"), std::string::npos);
  EXPECT_NE(message("{rpc_overhead: 5}").find("strategy.ps.rpc_overhead"), std::string::npos);
  EXPECT_NE(message("{rpc_overhead: -5us}").find("strategy.ps.rpc_overhead"), std::string::npos);
  EXPECT_NE(message("{shards: -1}").find("strategy.ps.shards"), std::string::npos);
  EXPECT_NE(message("{shard: 2}").find("strategy.ps.shard"), std::string::npos);
  PsOptions o = parse(
      "{placement: colocated, shards: 3, policy: partitioned, pulls: per_layer, "
      "rpc_overhead: 1ms, rpc_bandwidth: 2GB/s, copies: false, cores: 2}");
  EXPECT_EQ(o.placement, PsPlacement::kColocated);
  EXPECT_EQ(o.shards, 3);
  EXPECT_EQ(o.policy, PsPolicy::kPartitioned);
  EXPECT_EQ(o.pulls, PsPulls::kPerLayer);
  EXPECT_DOUBLE_EQ(o.rpc_overhead, 1e-3);
  EXPECT_DOUBLE_EQ(o.rpc_bandwidth, 2e9);
  EXPECT_DOUBLE_EQ(parse("{rpc_bandwidth: 0}").rpc_bandwidth, 0);
  EXPECT_NE(message("{rpc_bandwidth: fast}").find("strategy.ps.rpc_bandwidth"), std::string::npos);
  EXPECT_FALSE(o.copies);
  EXPECT_EQ(o.cores, 2);

  // Dedicated parameter servers need servers of their own.
  const ModelGraph m = layered_model(2, 1e3);
  PricedReplica r{&m, std::vector<double>(m.ops.size(), 0.0), nullptr};
  StrategyOptions opt = ps_worker();
  opt.ps_servers = 2;
  try {
    build_strategy(r, cluster_layout(cluster(2, 2, 1e9, 1e9)), opt);
    ADD_FAILURE() << "two PS servers on a two-server platform were accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("strategy.ps_servers"), std::string::npos) << e.what();
  }
  opt.ps.placement = PsPlacement::kColocated;
  EXPECT_NO_THROW(build_strategy(r, cluster_layout(cluster(2, 2, 1e9, 1e9)), opt));
}

TEST(ParameterServer, ScenarioKeysReachTheStrategy) {
  const std::string dir = testing::make_temp_dir("ps");
  testing::write_file(dir + "/s.yaml", R"(name: ps
platform: {preset: ethernet-cluster, servers: 2}
workload: {type: model, model: resnet50, batch: 8}
strategy:
  type: ps_worker
  ps: {placement: colocated, policy: round_robin, rpc_overhead: 1ms}
)");
  // Co-located on both servers: every GPU is a worker, each server's first socket a shard.
  Scenario sc = load_scenario(dir + "/s.yaml");
  const ExecutionGraph& g = sc.graph;
  EXPECT_GE(g.find_op("w15/conv1.pull.ps_rpc"), 0);
  EXPECT_DOUBLE_EQ(g.ops[g.find_op("w0/conv1.pull.ps_rpc")].duration, 0.5e-3);
  EXPECT_GE(g.find_device("n1_cpu0"), 0);
  try {
    load_scenario(dir + "/s.yaml", {"strategy.ps.policy=largest"});
    ADD_FAILURE() << "an unknown policy was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("strategy.ps.policy"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("round_robin"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace orrery
