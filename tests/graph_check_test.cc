#include "engine/graph_check.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "common/errors.h"
#include "common/input_limits.h"
#include "engine/execution_graph.h"

namespace orrery {
namespace {

Op compute(const std::string& name, int device, double duration, std::vector<int> deps = {}) {
  Op op;
  op.name = name;
  op.device = device;
  op.duration = duration;
  op.deps = std::move(deps);
  return op;
}

Op transfer(const std::string& name, int src, int dst, double bytes, std::vector<int> deps = {}) {
  Op op;
  op.name = name;
  op.device = src;
  op.stream = Stream{StreamClass::kComm, 0};
  op.kind = OpKind::kTransfer;
  op.src = src;
  op.dst = dst;
  op.transfer_bytes = bytes;
  op.deps = std::move(deps);
  return op;
}

// gpu0, gpu1; fwd -> bwd -> send(gpu0 -> gpu1).
ExecutionGraph small_graph() {
  ExecutionGraph g;
  g.devices = {{"gpu0", "gpu0", "gpu0", "", {}}, {"gpu1", "gpu1", "gpu1", "", {}}};
  g.ops.push_back(compute("fwd", 0, 0.001));
  Op bwd = compute("bwd", 0, -1.0, {0});
  bwd.flops = 2e9;
  g.ops.push_back(bwd);
  g.ops.push_back(transfer("send", 0, 1, 4e6, {1}));
  return g;
}

// The InputError message check_graph throws, or "" when the graph passes.
std::string error_of(const ExecutionGraph& g) {
  try {
    check_graph(g, "graph.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

#define EXPECT_CONTAINS(haystack, needle) \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos) << (haystack)

TEST(GraphCheck, ValidGraphPasses) { EXPECT_EQ(error_of(small_graph()), ""); }

TEST(GraphCheck, EmptyGraphPasses) { EXPECT_EQ(error_of(ExecutionGraph{}), ""); }

TEST(GraphCheck, ZeroDurationComputeOpIsAllowed) {
  ExecutionGraph g = small_graph();
  g.ops[0].duration = 0.0;
  EXPECT_EQ(error_of(g), "");
}

TEST(GraphCheck, BytesAloneIsACost) {
  ExecutionGraph g = small_graph();
  g.ops[1].flops = 0;
  g.ops[1].bytes = 1e6;
  EXPECT_EQ(error_of(g), "");
}

TEST(GraphCheck, MessagesStartWithOrigin) {
  ExecutionGraph g = small_graph();
  g.ops[2].dst = 0;
  std::string msg = error_of(g);
  EXPECT_EQ(msg.rfind("graph.json: ", 0), 0u) << msg;
}

TEST(GraphCheck, DuplicateOpName) {
  ExecutionGraph g = small_graph();
  g.ops[2].name = "fwd";
  std::string msg = error_of(g);
  EXPECT_CONTAINS(msg, "graph.json: ops[2] \"fwd\": duplicate op name");
  EXPECT_CONTAINS(msg, "ops[0]");
}

TEST(GraphCheck, DuplicateDeviceName) {
  ExecutionGraph g = small_graph();
  g.devices[1].name = "gpu0";
  std::string msg = error_of(g);
  EXPECT_CONTAINS(msg, "graph.json: devices[1] \"gpu0\": duplicate device name");
}

TEST(GraphCheck, EmptyNames) {
  ExecutionGraph g = small_graph();
  g.ops[1].name = "";
  EXPECT_CONTAINS(error_of(g), "graph.json: ops[1]: empty op name");
  g = small_graph();
  g.devices[0].name = "";
  EXPECT_CONTAINS(error_of(g), "graph.json: devices[0]: empty device name");
}

TEST(GraphCheck, DependencyOutOfRange) {
  ExecutionGraph g = small_graph();
  g.ops[1].deps = {7};
  std::string msg = error_of(g);
  EXPECT_CONTAINS(msg, "graph.json: ops[1] \"bwd\": dependency index 7 out of range");
  g.ops[1].deps = {-1};
  EXPECT_CONTAINS(error_of(g), "ops[1] \"bwd\": dependency index -1 out of range");
}

TEST(GraphCheck, UnknownDevice) {
  ExecutionGraph g = small_graph();
  g.ops[0].device = 2;
  EXPECT_CONTAINS(error_of(g), "graph.json: ops[0] \"fwd\": unknown device index 2");
  g.ops[0].device = -1;
  EXPECT_CONTAINS(error_of(g), "ops[0] \"fwd\": unknown device index -1");
}

TEST(GraphCheck, TransferEndpointsOutOfRange) {
  ExecutionGraph g = small_graph();
  g.ops[2].src = 5;
  EXPECT_CONTAINS(error_of(g), "graph.json: ops[2] \"send\": transfer src device index 5");
  g = small_graph();
  g.ops[2].dst = -1;
  EXPECT_CONTAINS(error_of(g), "graph.json: ops[2] \"send\": transfer dst device index -1");
}

TEST(GraphCheck, TransferToItself) {
  ExecutionGraph g = small_graph();
  g.ops[2].dst = 0;
  EXPECT_CONTAINS(error_of(g),
                  "graph.json: ops[2] \"send\": transfer src and dst are both device 0 \"gpu0\"");
}

TEST(GraphCheck, BadAmounts) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  struct Case {
    int op;
    double Op::*field;
    double value;
    const char* expect;
  };
  const Case cases[] = {
      {0, &Op::duration, -0.5, "ops[0] \"fwd\": duration -500 ms is outside"},
      {0, &Op::duration, nan, "ops[0] \"fwd\": duration nan s is outside"},
      {1, &Op::flops, inf, "ops[1] \"bwd\": flops inf is outside"},
      {1, &Op::flops, -1.0, "ops[1] \"bwd\": flops -1 is outside"},
      {1, &Op::bytes, -3.0, "ops[1] \"bwd\": bytes -3 B is outside"},
      {2, &Op::transfer_bytes, -1.0, "ops[2] \"send\": transfer_bytes -1 B is outside"},
      {2, &Op::transfer_bytes, nan, "ops[2] \"send\": transfer_bytes nan B is outside"},
      // Finite but absurd: a replay would chase these for hours (issue 15).
      {0, &Op::duration, 1e300,
       "ops[0] \"fwd\": duration 1e+300 s is outside the accepted range, between 0 s and "
       "86400 s (or -1 for unset)"},
      {1, &Op::flops, 2e21,
       "ops[1] \"bwd\": flops 2e+21 is outside the accepted range, "
       "between 0 and 1e+21"},
      {1, &Op::bytes, 1e300,
       "bytes 1e+300 B is outside the accepted range, between 0 B and 1000 TB"},
      {2, &Op::transfer_bytes, 2e15, "ops[2] \"send\": transfer_bytes 2000 TB is outside"},
  };
  for (const Case& c : cases) {
    ExecutionGraph g = small_graph();
    g.ops[c.op].*c.field = c.value;
    std::string msg = error_of(g);
    EXPECT_EQ(msg.rfind("graph.json: ", 0), 0u) << msg;
    EXPECT_CONTAINS(msg, c.expect);
  }
}

TEST(GraphCheck, BoundsOfTheRangesAreAccepted) {
  ExecutionGraph g = small_graph();
  g.ops[0].duration = 86400;  // a day, exactly
  g.ops[1].flops = 1e21;
  g.ops[1].bytes = 1e15;
  g.ops[2].transfer_bytes = 0;
  EXPECT_EQ(error_of(g), "");
}

TEST(GraphCheck, CollectiveAmountsAndChunks) {
  auto with = [](auto change) {
    ExecutionGraph g = small_graph();
    Collective c;
    c.ranks = {0, 1};
    c.bytes = 1e6;
    change(c);
    append_collective(g, "ar", c, "comm", {1});
    return error_of(g);
  };
  EXPECT_EQ(with([](Collective&) {}), "");
  EXPECT_CONTAINS(with([](Collective& c) { c.bytes = 1e300; }),
                  "ops[3] \"ar\": collective bytes 1e+300 B is outside the accepted range");
  EXPECT_CONTAINS(with([](Collective& c) {
                    c.counts = {1e6, 1e200};
                  }),
                  "collective count 1e+200 B is outside");
  EXPECT_CONTAINS(with([](Collective& c) { c.chunks = 0; }),
                  "collective chunks 0 is outside the accepted range, between 1 and 65536");
  EXPECT_CONTAINS(with([](Collective& c) { c.chunks = 1 << 20; }), "collective chunks 1048576");
}

TEST(GraphCheck, SizeGuardNamesTheEstimateAndTheFlag) {
  // 2 devices x 40,000 ops: within the op limit, but a lowered limit refuses it by name.
  ExecutionGraph g;
  g.devices = {{"gpu0", "gpu0", "gpu0", "", {}}, {"gpu1", "gpu1", "gpu1", "", {}}};
  for (int i = 0; i < 80000; ++i) g.ops.push_back(compute("op" + std::to_string(i), i % 2, 1e-6));
  EXPECT_EQ(error_of(g), "");
  RunLimits saved = run_limits();
  run_limits().max_ops = 50000;
  std::string msg = error_of(g);
  run_limits() = saved;
  EXPECT_CONTAINS(msg, "graph.json: replaying this workload would need about 80000 ops");
  EXPECT_CONTAINS(msg, "over the limit of 50000 ops; lift it with --max-ops N or --no-size-limit");
}

TEST(GraphCheck, UnsetDurationNeedsFlopsOrBytes) {
  ExecutionGraph g = small_graph();
  g.ops[1].flops = 0;
  EXPECT_CONTAINS(error_of(g), "graph.json: ops[1] \"bwd\": compute op has no cost");
}

TEST(GraphCheck, SelfDependency) {
  ExecutionGraph g = small_graph();
  g.ops[1].deps = {0, 1};
  EXPECT_CONTAINS(error_of(g), "graph.json: ops[1] \"bwd\": depends on itself");
}

TEST(GraphCheck, CycleListsItsOpsInDependencyOrder) {
  ExecutionGraph g;
  g.devices = {{"gpu0", "gpu0", "gpu0", "", {}}};
  // x is a tail into the cycle, not part of it; y hangs off it.
  g.ops.push_back(compute("x", 0, 1.0));
  g.ops.push_back(compute("a", 0, 1.0, {3, 0}));
  g.ops.push_back(compute("b", 0, 1.0, {1}));
  g.ops.push_back(compute("c", 0, 1.0, {2}));
  g.ops.push_back(compute("y", 0, 1.0, {3}));
  EXPECT_EQ(error_of(g), "graph.json: dependency cycle: a -> b -> c -> a");
  EXPECT_EQ(find_dependency_cycle(g), (std::vector<int>{1, 2, 3}));
}

TEST(GraphCheck, CycleStartsAtItsLowestIndex) {
  ExecutionGraph g;
  g.devices = {{"gpu0", "gpu0", "gpu0", "", {}}};
  g.ops.push_back(compute("c", 0, 1.0, {1}));  // c needs b
  g.ops.push_back(compute("b", 0, 1.0, {2}));  // b needs a
  g.ops.push_back(compute("a", 0, 1.0, {0}));  // a needs c
  EXPECT_EQ(error_of(g), "graph.json: dependency cycle: c -> a -> b -> c");
}

TEST(GraphCheck, CycleThroughATransfer) {
  ExecutionGraph g = small_graph();
  g.ops[0].deps = {2};
  EXPECT_EQ(error_of(g), "graph.json: dependency cycle: fwd -> bwd -> send -> fwd");
}

TEST(GraphCheck, NoCycleInADag) { EXPECT_TRUE(find_dependency_cycle(small_graph()).empty()); }

TEST(GraphCheck, TopologicalOrderPutsDepsFirst) {
  ExecutionGraph g;
  g.devices = {{"gpu0", "gpu0", "gpu0", "", {}}};
  std::mt19937 rng(7);
  const int n = 2000;
  for (int i = 0; i < n; ++i) g.ops.push_back(compute("op" + std::to_string(i), 0, 1.0));
  // Random edges from higher to lower indices, then shuffle the ops so order != index.
  for (int i = 1; i < n; ++i) {
    for (int k = 0; k < 3; ++k) g.ops[i].deps.push_back(static_cast<int>(rng() % i));
  }
  std::vector<int> perm(n);
  for (int i = 0; i < n; ++i) perm[i] = i;
  std::shuffle(perm.begin(), perm.end(), rng);
  ExecutionGraph shuffled;
  shuffled.devices = g.devices;
  shuffled.ops.resize(n);
  for (int i = 0; i < n; ++i) {
    Op op = g.ops[i];
    for (int& d : op.deps) d = perm[d];
    shuffled.ops[perm[i]] = op;
  }
  ASSERT_EQ(error_of(shuffled), "");
  std::vector<int> order = topological_order(shuffled);
  ASSERT_EQ(order.size(), static_cast<std::size_t>(n));
  std::vector<int> position(n, -1);
  for (int k = 0; k < n; ++k) position[order[k]] = k;
  for (int i = 0; i < n; ++i) {
    ASSERT_GE(position[i], 0);
    for (int d : shuffled.ops[i].deps) EXPECT_LT(position[d], position[i]);
  }
}

TEST(GraphCheck, TopologicalOrderRejectsCycle) {
  ExecutionGraph g = small_graph();
  g.ops[0].deps = {2};
  EXPECT_THROW(topological_order(g), std::logic_error);
}

// A million-op chain: deep enough to overflow any recursive DFS.
TEST(GraphCheck, MillionOpChainIsFastAndIterative) {
  const int n = 1000000;
  ExecutionGraph g;
  g.devices = {{"gpu0", "gpu0", "gpu0", "", {}}};
  g.ops.reserve(n);
  for (int i = 0; i < n; ++i) {
    g.ops.push_back(compute("op" + std::to_string(i), 0, 1e-6));
    if (i > 0) g.ops.back().deps.push_back(i - 1);
  }
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(error_of(g), "");
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 10.0);

  g.ops[0].deps.push_back(n - 1);  // close the chain into one huge cycle
  std::string msg = error_of(g);
  EXPECT_EQ(msg.rfind("graph.json: dependency cycle: op0 -> op1 -> ", 0), 0u) << msg.substr(0, 200);
  EXPECT_CONTAINS(msg, "more) -> op999999 -> op0");
  EXPECT_LT(msg.size(), 400u);
}

}  // namespace
}  // namespace orrery
