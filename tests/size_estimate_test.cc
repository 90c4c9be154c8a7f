// Size guards (engine/size_estimate.h and its per-layer estimates): counts worked out by hand
// for small cases, and huge scenarios refused before anything is built (the refusals below
// allocate nothing in proportion to their size, so they return at once).
#include "engine/size_estimate.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/errors.h"
#include "common/input_limits.h"
#include "engine/collective_algos.h"
#include "platforms/platform_spec.h"
#include "strategies/size_estimate.h"
#include "strategies/strategy.h"
#include "tiny_model_graph.h"
#include "workloads/synthetic_dp.h"

namespace orrery {
namespace {

#define EXPECT_CONTAINS(haystack, needle) \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos) << (haystack)

template <typename F>
std::string error_of(F f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// Counts the flows a collective's state machine says it will move.
struct NullIssuer : FlowIssuer {
  void issue(int, int, double, int64_t, int, bool) override {}
};

TEST(SizeEstimate, CollectiveFlowsByHand) {
  using T = CollectiveType;
  using A = CollectiveAlgo;
  // Ring all-reduce of 4 ranks in 2 chunks: 2 x 3 steps x 4 ranks x 2 chunks.
  EXPECT_EQ(collective_flows(T::kAllReduce, A::kRing, 4, 1, 2), 48);
  EXPECT_EQ(collective_flows(T::kAllGather, A::kRing, 4, 1, 1), 12);  // 3 steps x 4
  EXPECT_EQ(collective_flows(T::kBroadcast, A::kRing, 4, 1, 3), 9);   // a chain: 3 hops x 3
  EXPECT_EQ(collective_flows(T::kAllReduce, A::kTree, 8, 1, 1), 14);  // 7 edges, up and down
  EXPECT_EQ(collective_flows(T::kAllToAll, A::kDirect, 4, 1, 1), 12);
  // Hierarchical, 2 nodes of 4: rings of 4 inside each node twice (2 x 2 x 3 x 4 = 48) and
  // 4 rings of 2 across (4 x 2 x 1 x 2 = 16).
  EXPECT_EQ(collective_flows(T::kAllReduce, A::kHierarchical, 8, 2, 1), 64);
  EXPECT_EQ(collective_flows(T::kAllReduce, A::kRing, 1, 1, 1), 0);
  // A long ring groups its steps: 64 flows per rank, not 2 x 255 (2 x 255 steps of 256 ranks).
  EXPECT_EQ(collective_flows(T::kAllReduce, A::kRing, 256, 1, 1), 64 * 256);
  EXPECT_EQ(collective_flows(T::kAllGather, A::kRing, 65, 1, 1), 64 * 65);
  EXPECT_EQ(collective_flows(T::kAllGather, A::kRing, 66, 1, 1), 33 * 66);  // 65 steps, 2 a flow
  // Far past int64 products, still a finite double to compare with a limit.
  EXPECT_GT(collective_flows(T::kAllReduce, A::kRing, 1e9, 1, 65536), 4e15);
}

TEST(SizeEstimate, CollectiveFlowsMatchTheStateMachines) {
  NullIssuer issuer;
  Collective c;
  c.ranks = {0, 1, 2, 3, 4, 5, 6, 7};
  c.bytes = 8e6;
  c.chunks = 2;
  const std::vector<int> node_of(8, 0);
  // (Hierarchical runs count their flows phase by phase, as they start.)
  for (CollectiveType type : {CollectiveType::kAllReduce, CollectiveType::kAllGather})
    for (CollectiveAlgo algo : {CollectiveAlgo::kRing, CollectiveAlgo::kTree}) {
      c.type = type;
      if (algo == CollectiveAlgo::kTree && type != CollectiveType::kAllReduce) continue;
      CollectiveTopology topo;
      topo.node_of = node_of;
      RingSearch rings_of = [](const std::vector<int>&) -> const std::vector<std::vector<int>>& {
        static const std::vector<std::vector<int>> none;
        return none;
      };
      auto run = make_collective_run(
          c, plan_collective(c, algo, CollectiveProtocol::kIdeal, topo, rings_of), issuer);
      EXPECT_EQ(static_cast<double>(run->flows_total()),
                collective_flows(c.type, algo, 8, 1, c.chunks))
          << collective_type_name(type) << " " << collective_algo_name(algo);
    }
}

TEST(SizeEstimate, GraphByHand) {
  // Two GPUs on two hosts; three compute ops and a ring all-reduce of the two.
  ExecutionGraph g;
  g.devices = {{"gpu0", "h0", "h0", "", {}}, {"gpu1", "h1", "h1", "", {}}};
  for (int i = 0; i < 3; ++i) {
    Op op;
    op.name = "op" + std::to_string(i);
    op.device = i % 2;
    op.duration = 1e-3;
    if (i > 0) op.deps = {i - 1};
    g.ops.push_back(op);
  }
  Collective c;
  c.algo = CollectiveAlgo::kRing;
  c.ranks = {0, 1};
  c.bytes = 1e6;
  append_collective(g, "ar", c, "comm", {2});
  SizeEstimate e = estimate_graph_size(g);
  EXPECT_EQ(e.ops, 4);
  // 3 execs, and 2 x 1 step x 2 ranks flows for the collective.
  EXPECT_EQ(e.activities, 3 + 4);
  EXPECT_EQ(e.memory_bytes, 4 * kBytesPerOp + 3 * kBytesPerDep);  // deps: op1, op2, ar
}

TEST(SizeEstimate, SyntheticDataParallelByHand) {
  // The quickstart scenario: 4 GPUs, 16 layers, an input copy each. Ops: 4 x (16 forward +
  // 16 backward + 1 update) + 4 copies + 16 all-reduces = 152; flows: 16 x 2 x 3 x 4 = 384;
  // activities: 152 - 16 + 384 = 520 (what `orrery run scenarios/quickstart.yaml` reports).
  DataParallelPattern p;
  p.input_bytes = 19.3e6;
  SizeEstimate e = estimate_data_parallel_size(p, 4);
  EXPECT_EQ(e.ops, 152);
  EXPECT_EQ(e.activities, 520);
}

TEST(SizeEstimate, StrategyByHand) {
  StrategySizeInputs in;
  in.replicas = 4;
  in.ops_per_replica = 100;
  in.gradient_ops = 10;
  in.gradient_bytes = 100e6;  // 4 buckets of 25 MiB
  SizeEstimate e = estimate_strategy_size(in);
  EXPECT_EQ(e.ops, 4 * 100 + 4 + 4);              // placed ops, input copies, buckets
  EXPECT_EQ(e.activities, 4 * 100 + 4 + 4 * 24);  // a 4-rank ring all-reduce is 24 flows
  EXPECT_EQ(e.memory_bytes, 408 * kBytesPerOp + (2 * 408 + 4 * 10) * kBytesPerDep);
}

TEST(SizeEstimate, ReplicasThatMirrorAnotherAddNoOps) {
  // 2 servers of 8 GPUs, four on each of two CPU sockets: an all-reduce builds the first
  // replica of each socket (4) and mirrors the other 12 on it. The estimate counts those 4
  // replicas' 3 ops and input copies and the one bucket: 17 ops, as the graph has; all 16 take
  // part in the all-reduce, and its flows are the 16-rank all-reduce's.
  ModelGraph m = testing::tiny_model_graph();
  ClusterLayout layout;
  layout.servers.resize(2);
  for (int i = 0; i < 16; ++i) {
    const std::string server = "n" + std::to_string(i / 8);
    layout.gpus.push_back({server + "_gpu" + std::to_string(i % 8),
                           server + "_cpu" + std::to_string(i % 8 / 4), i / 8});
    layout.servers[i / 8].gpus.push_back(i);
  }
  for (auto& server : layout.servers) server.cpus = {"cpu0", "cpu1"};
  PricedReplica r{&m, std::vector<double>(m.ops.size(), 1e-3), nullptr};
  StrategyOptions opt;
  const ExecutionGraph g = build_strategy(r, layout, opt);
  StrategySizeInputs in;
  in.replicas = 16;
  in.built_replicas = 4;
  in.nodes = 2;
  in.ops_per_replica = 3;
  in.gradient_ops = 1;
  in.gradient_bytes = 1280 * 4;
  const SizeEstimate e = estimate_strategy_size(in);
  EXPECT_EQ(e.ops, 4 * 3 + 4 + 1);
  EXPECT_EQ(e.ops, static_cast<double>(g.ops.size()));
  EXPECT_CONTAINS(e.basis, "16 replicas (4 built, the others mirror them) x 3 ops");
  in.built_replicas = 0;  // as before mirrors: every replica built
  EXPECT_EQ(estimate_strategy_size(in).ops, 16 * 3 + 16 + 1);
}

TEST(SizeEstimate, PlatformByHand) {
  // The default server: 8 GPUs with 6 NVLinks each, one socket with one PCIe switch, one NIC.
  PlatformSpec spec;
  SizeEstimate e = estimate_platform_size(spec);
  // Hosts 8 + 1; links 8 x 7 + 2 + 3 + 1 + 0.5 + 1 = 63.5; routes 9 x 9.
  EXPECT_EQ(e.memory_bytes,
            9 * kBytesPerHost + 63.5 * kBytesPerLink + 81 * kBytesPerRoute + 1 * kBytesPerLink);
  EXPECT_CONTAINS(e.basis, "1 servers x (9 hosts, about 64 links, 81 routes)");
}

TEST(SizeEstimate, CheckNamesTheEstimateTheLimitAndTheFlag) {
  SizeEstimate e;
  e.ops = 3e7;
  e.basis = "a test";
  std::string msg = error_of([&] { check_size(e, "scenario.yaml", "this run"); });
  EXPECT_EQ(msg,
            "scenario.yaml: this run would need about 3e+07 ops (a test), over the limit of "
            "2e+07 ops; lift it with --max-ops N or --no-size-limit");
  e.ops = 10;
  e.activities = 2e8;
  EXPECT_CONTAINS(error_of([&] { check_size(e, "s", "x"); }), "--max-flows N");
  e.activities = 10;
  e.memory_bytes = 20.0 * (1 << 30);
  EXPECT_CONTAINS(error_of([&] { check_size(e, "s", "x"); }),
                  "about 20 GiB of memory (a test), over the limit of 16 GiB; lift it with "
                  "--max-memory SIZE");
  e.memory_bytes = 1;
  EXPECT_EQ(error_of([&] { check_size(e, "s", "x"); }), "");
}

TEST(SizeEstimate, NoSizeLimitLiftsAllButTheIndexLimit) {
  RunLimits saved = run_limits();
  run_limits().size_limits = false;
  SizeEstimate e;
  e.ops = 1e9;
  e.activities = 1e15;
  e.memory_bytes = 1e15;
  std::string lifted = error_of([&] { check_size(e, "s", "x"); });
  e.ops = 3e9;  // op indices are 32-bit
  std::string beyond = error_of([&] { check_size(e, "s", "x"); });
  run_limits() = saved;
  EXPECT_EQ(lifted, "");
  EXPECT_CONTAINS(beyond, "more than the 2^31 - 1 ops a graph can index");
}

TEST(SizeEstimate, HugeSyntheticWorkloadIsRefusedBeforeBuilding) {
  DataParallelPattern p;
  p.layers = 1000000000;
  std::vector<GpuPlacement> gpus(4, GpuPlacement{"h", "c"});
  for (int i = 0; i < 4; ++i) gpus[i].host = "h" + std::to_string(i);
  std::string msg = error_of([&] { make_data_parallel(p, gpus); });
  EXPECT_CONTAINS(msg, "workload: the synthetic data-parallel workload would need about 9e+09 ops");
  EXPECT_CONTAINS(msg, "(4 GPUs x 1000000000 layers");
}

TEST(SizeEstimate, HugeStrategyIsRefusedBeforeBuilding) {
  // 200,000 GPUs x 3 ops is within the op limit, but a ring all-reduce over them in 100 chunks
  // is 64 flows (grouped steps) x 100 chunks x 200,000 ranks, 1.3e9.
  ModelGraph m = testing::tiny_model_graph();
  ClusterLayout layout;
  const int n = 200000;
  layout.gpus.resize(n);
  layout.servers.resize(n / 8);
  for (int i = 0; i < n; ++i) {
    layout.gpus[i] = {"n" + std::to_string(i / 8) + "_gpu" + std::to_string(i % 8), "cpu", i / 8};
    layout.servers[i / 8].gpus.push_back(i);
  }
  PricedReplica r{&m, std::vector<double>(m.ops.size(), 1e-3), nullptr};
  StrategyOptions opt;
  opt.collectives.algo = CollectiveAlgo::kRing;
  opt.collectives.chunks = 100;
  std::string msg = error_of([&] { build_strategy(r, layout, opt); });
  EXPECT_CONTAINS(msg,
                  "strategy allreduce: this workload would need about 1.28e+09 simulated "
                  "activities");
  EXPECT_CONTAINS(msg, "lift it with --max-flows N or --no-size-limit");
}

TEST(SizeEstimate, HugePlatformIsRefusedBeforeBuilding) {
  PlatformSpec spec;
  spec.servers = 120000;  // 960,000 GPUs: within the GPU range, about 23 GiB to build
  std::string msg = error_of([&] { build_topology(spec); });
  EXPECT_CONTAINS(msg, "platform: building this platform would need about");
  EXPECT_CONTAINS(msg, "GiB of memory (120000 servers x (9 hosts");
  EXPECT_CONTAINS(msg, "--max-memory SIZE or --no-size-limit");
}

}  // namespace
}  // namespace orrery
