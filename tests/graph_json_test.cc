#include "workloads/graph_json.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <sstream>
#include <string>

#include "common/errors.h"
#include "engine/execution_graph.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

#define EXPECT_CONTAINS(haystack, needle) \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos) << (haystack)

const char* kExample = R"({
  "format": "orrery-graph", "version": 1,
  "devices": [
    {"name": "gpu0", "host": "node0_gpu0", "launch_host": "node0_cpu"},
    {"name": "gpu1"}
  ],
  "ops": [
    {"name": "fwd0", "device": "gpu0", "stream": "compute", "duration": 0.001, "phase": "forward"},
    {"name": "fwd1", "device": "gpu0", "flops": 2.0e9, "bytes": 1.0e6, "deps": ["fwd0"]},
    {"name": "send", "device": "gpu0", "stream": "comm", "kind": "transfer", "src": "gpu0",
     "dst": "gpu1", "bytes": 4.0e6, "deps": ["fwd1"]},
    {"name": "recv_done", "device": "gpu1", "stream": "host", "duration": 0, "deps": ["send"]}
  ]
})";

// Wraps op lines into a file with devices gpu0 and gpu1.
std::string with_ops(const std::string& ops) {
  return R"({"format": "orrery-graph", "version": 1,
  "devices": [{"name": "gpu0"}, {"name": "gpu1"}],
  "ops": [)" +
         ops + "]}";
}

// The InputError message parse_graph_json throws for `text` (origin "g.json"), or "".
std::string error_of(const std::string& text) {
  try {
    parse_graph_json(text, "g.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// The same for load_graph_json of the file `path`.
std::string error_of_load(const std::string& path) {
  try {
    load_graph_json(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

void expect_equal(const ExecutionGraph& a, const ExecutionGraph& b) {
  ASSERT_EQ(a.devices.size(), b.devices.size());
  for (std::size_t i = 0; i < a.devices.size(); ++i) {
    EXPECT_EQ(a.devices[i].name, b.devices[i].name);
    EXPECT_EQ(a.devices[i].host, b.devices[i].host);
    EXPECT_EQ(a.devices[i].launch_host, b.devices[i].launch_host);
  }
  ASSERT_EQ(a.ops.size(), b.ops.size());
  for (std::size_t i = 0; i < a.ops.size(); ++i) {
    const Op& x = a.ops[i];
    const Op& y = b.ops[i];
    SCOPED_TRACE(x.name);
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.device, y.device);
    EXPECT_TRUE(x.stream == y.stream);
    EXPECT_EQ(x.kind, y.kind);
    EXPECT_EQ(x.duration, y.duration);
    EXPECT_EQ(x.flops, y.flops);
    EXPECT_EQ(x.bytes, y.bytes);
    EXPECT_EQ(x.src, y.src);
    EXPECT_EQ(x.dst, y.dst);
    EXPECT_EQ(x.transfer_bytes, y.transfer_bytes);
    EXPECT_EQ(x.phase, y.phase);
    EXPECT_EQ(x.deps, y.deps);
  }
}

TEST(GraphJson, ParsesExampleAndAppliesDefaults) {
  ExecutionGraph g = parse_graph_json(kExample, "g.json");
  ASSERT_EQ(g.devices.size(), 2u);
  EXPECT_EQ(g.devices[0].host, "node0_gpu0");
  EXPECT_EQ(g.devices[0].launch_host, "node0_cpu");
  EXPECT_EQ(g.devices[1].host, "gpu1");  // host defaults to name
  EXPECT_EQ(g.devices[1].launch_host, "gpu1");

  ASSERT_EQ(g.ops.size(), 4u);
  const Op& fwd0 = g.ops[0];
  EXPECT_EQ(fwd0.device, 0);
  EXPECT_EQ(fwd0.kind, OpKind::kCompute);
  EXPECT_EQ(fwd0.duration, 0.001);
  EXPECT_EQ(fwd0.phase, "forward");
  EXPECT_TRUE(fwd0.deps.empty());

  const Op& fwd1 = g.ops[1];
  EXPECT_TRUE(fwd1.stream == (Stream{StreamClass::kCompute, 0}));  // default stream
  EXPECT_EQ(fwd1.duration, -1.0);                                  // unset: priced by a model
  EXPECT_EQ(fwd1.flops, 2e9);
  EXPECT_EQ(fwd1.bytes, 1e6);
  EXPECT_EQ(fwd1.phase, "");
  EXPECT_EQ(fwd1.deps, std::vector<int>{0});

  const Op& send = g.ops[2];
  EXPECT_EQ(send.kind, OpKind::kTransfer);
  EXPECT_TRUE(send.stream == (Stream{StreamClass::kComm, 0}));
  EXPECT_EQ(send.src, 0);
  EXPECT_EQ(send.dst, 1);
  EXPECT_EQ(send.transfer_bytes, 4e6);
  EXPECT_EQ(send.bytes, 0.0);  // "bytes" of a transfer is its payload, not memory traffic

  const Op& recv = g.ops[3];
  EXPECT_EQ(recv.device, 1);
  EXPECT_TRUE(recv.stream == (Stream{StreamClass::kHost, 0}));
  EXPECT_EQ(recv.duration, 0.0);
}

TEST(GraphJson, DepsMayReferToLaterOpsAndSrcDefaultsToDevice) {
  ExecutionGraph g = parse_graph_json(with_ops(R"(
    {"name": "late", "device": "gpu1", "duration": 1, "deps": ["early"]},
    {"name": "early", "device": "gpu1", "kind": "transfer", "dst": "gpu0", "bytes": 8}
  )"),
                                      "g.json");
  EXPECT_EQ(g.ops[0].deps, std::vector<int>{1});
  EXPECT_EQ(g.ops[1].src, 1);
  EXPECT_EQ(g.ops[1].dst, 0);
}

TEST(GraphJson, IndexedStreams) {
  ExecutionGraph g = parse_graph_json(
      with_ops(R"({"name": "a", "device": "gpu0", "stream": "comm:2", "duration": 1})"), "g.json");
  EXPECT_TRUE(g.ops[0].stream == (Stream{StreamClass::kComm, 2}));
}

TEST(GraphJson, EmptyGraph) {
  ExecutionGraph g = parse_graph_json(
      R"({"format": "orrery-graph", "version": 1, "devices": [], "ops": []})", "e");
  EXPECT_TRUE(g.devices.empty());
  EXPECT_TRUE(g.ops.empty());
}

TEST(GraphJson, RoundTrip) {
  ExecutionGraph g;
  g.devices = {{"gpu0", "node0_gpu0", "node0_cpu", "", {}},
               {"gpu1", "gpu1", "gpu1", "", {}},
               {"gpu2", "h2", "h2", "", {}}};
  auto add = [&](const std::string& name, int device) -> Op& {
    g.ops.emplace_back();
    g.ops.back().name = name;
    g.ops.back().device = device;
    return g.ops.back();
  };
  Op& a = add("fwd \"quoted\" \\ name", 0);
  a.duration = 0.1 + 0.2;  // not representable in few digits
  a.phase = "forward";
  a.deps = {3};
  Op& b = add("model", 1);
  b.flops = 1.2345678901234567e12;
  b.bytes = 3e6;
  b.stream = {StreamClass::kCopyH2D, 1};
  Op& c = add("send", 0);
  c.kind = OpKind::kTransfer;
  c.stream = {StreamClass::kComm, 3};
  c.src = 2;  // differs from the op's device
  c.dst = 1;
  c.transfer_bytes = 0;
  c.deps = {0, 1};
  Op& d = add("noop", 2);
  d.duration = 0;
  d.stream = {StreamClass::kHost, 0};

  std::string dir = testing::make_temp_dir("graph_json");
  std::string path = dir + "/g.json";
  write_graph_json(g, path);
  ExecutionGraph loaded = load_graph_json(path);
  expect_equal(g, loaded);

  // Writing is deterministic, so a second round trip reproduces the file byte for byte.
  std::ostringstream again;
  write_graph_json(loaded, again);
  EXPECT_EQ(again.str(), testing::read_file(path));
}

TEST(GraphJson, RoundTripEmptyGraph) {
  std::ostringstream out;
  write_graph_json(ExecutionGraph{}, out);
  ExecutionGraph g = parse_graph_json(out.str(), "empty");
  EXPECT_TRUE(g.ops.empty());
}

TEST(GraphJson, LoadErrorsNameTheFile) {
  std::string dir = testing::make_temp_dir("graph_json");
  std::string path = dir + "/bad.json";
  testing::write_file(path, with_ops(R"({"name": "x", "device": "gpu9", "duration": 1})"));
  try {
    load_graph_json(path);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), path +
                                         ": ops[0] \"x\": unknown device \"gpu9\" (expected a "
                                         "name from \"devices\")");
  }
  EXPECT_THROW(load_graph_json(dir + "/missing.json"), InputError);
  EXPECT_THROW(load_graph_json(dir), InputError);
}

TEST(GraphJson, SyntaxErrorReportsLineAndColumn) {
  // The stray comma closes nothing: the '}' at line 4, column 1 is unexpected.
  std::string text =
      "{\"format\": \"orrery-graph\", \"version\": 1,\n"
      "  \"devices\": [],\n"
      "  \"ops\": [],\n"
      "}\n";
  std::string msg = error_of(text);
  EXPECT_EQ(msg.rfind("g.json: line 4, column 1: invalid JSON: syntax error", 0), 0u) << msg;

  msg = error_of("{\n  \"format\": \"orrery-graph\",\n  \"version\": 1x\n}");
  EXPECT_EQ(msg.rfind("g.json: line 3, column 15: invalid JSON", 0), 0u) << msg;

  msg = error_of("{\"format\": \"orrery-graph\",\n");
  EXPECT_EQ(msg.rfind("g.json: line 2, column 1: invalid JSON", 0), 0u) << msg;
}

struct BadCase {
  const char* ops;
  const char* expect;
};

TEST(GraphJson, BadOpsNameTheOp) {
  const BadCase cases[] = {
      {R"({"name": "a", "device": "gpu0", "duration": 1},
          {"name": "b", "device": "gpu9", "duration": 1})",
       R"(g.json: ops[1] "b": unknown device "gpu9")"},
      {R"({"name": "a", "device": "gpu0", "duration": 1, "deps": ["zz"]})",
       R"(g.json: ops[0] "a": unknown dependency "zz")"},
      {R"({"name": "a", "device": "gpu0", "duration": 1}, {"name": "a", "device": "gpu1", "duration": 1})",
       R"(g.json: ops[1] "a": duplicate op name)"},
      {R"({"name": "a", "device": "gpu0", "kind": "transfer", "dst": "gpu0", "bytes": 1})",
       R"(g.json: ops[0] "a": transfer src and dst are both device 0 "gpu0")"},
      {R"({"name": "a", "device": "gpu0", "kind": "transfer", "dst": "gpu7", "bytes": 1})",
       R"(g.json: ops[0] "a": unknown dst device "gpu7")"},
      {R"({"name": "a", "device": "gpu0", "kind": "transfer", "src": "x", "dst": "gpu1", "bytes": 1})",
       R"(g.json: ops[0] "a": unknown src device "x")"},
      {R"({"name": "a", "device": "gpu0", "duration": -1})",
       R"(g.json: ops[0] "a": "duration" must be a number >= 0 (seconds), got number -1)"},
      {R"({"name": "a", "device": "gpu0", "flops": "lots"})",
       R"(g.json: ops[0] "a": "flops" must be a number >= 0 (flop), got string "lots")"},
      {R"({"name": "a", "device": "gpu0", "bytes": -2})",
       R"(g.json: ops[0] "a": "bytes" must be a number >= 0 (bytes), got number -2)"},
      {R"({"name": "a", "device": "gpu0", "kind": "transfer", "dst": "gpu1", "bytes": null})",
       R"(g.json: ops[0] "a": "bytes" must be a number >= 0 (bytes), got null)"},
      {R"({"name": "a", "device": "gpu0"})", R"(g.json: ops[0] "a": compute op has no cost)"},
      {R"({"name": "a", "device": "gpu0", "duration": 1, "deps": ["a"]})",
       R"(g.json: ops[0] "a": depends on itself)"},
      {R"({"name": "a", "device": "gpu0", "duration": 1, "deps": ["b"]},
          {"name": "b", "device": "gpu0", "duration": 1, "deps": ["a"]})",
       "g.json: dependency cycle: a -> b -> a"},
      {R"({"name": "a", "device": "gpu0", "duration": 1, "flop": 3})",
       R"(g.json: ops[0] "a": unknown key "flop" (did you mean "flops"?) (expected one of: name, device, stream)"},
      {R"({"device": "gpu0", "duration": 1})", R"(g.json: ops[0]: missing required key "name")"},
      {R"({"name": "a", "duration": 1})", R"(g.json: ops[0] "a": missing required key "device")"},
      {R"({"name": 3, "device": "gpu0"})",
       R"(g.json: ops[0]: "name" must be a string, got number 3)"},
      {R"({"name": "", "device": "gpu0"})", R"(g.json: ops[0]: "name" must not be empty)"},
      {R"({"name": "a", "device": "gpu0", "kind": "transfer", "bytes": 1})",
       R"(g.json: ops[0] "a": missing required key "dst")"},
      {R"({"name": "a", "device": "gpu0", "kind": "transfer", "dst": "gpu1"})",
       R"(g.json: ops[0] "a": transfer op needs "bytes")"},
      {R"({"name": "a", "device": "gpu0", "stream": "dma", "duration": 1})",
       R"(g.json: ops[0] "a": unknown stream "dma")"},
      {R"({"name": "a", "device": "gpu0", "stream": "comm:x", "duration": 1})",
       R"(g.json: ops[0] "a": unknown stream "comm:x")"},
      {R"({"name": "a", "device": "gpu0", "kind": "allreduce", "duration": 1})",
       R"(g.json: ops[0] "a": unknown kind "allreduce")"},
      {R"({"name": "a", "device": "gpu0", "kind": "collective", "ranks": ["gpu0"], "bytes": 1})",
       R"(g.json: ops[0] "a": missing required key "collective")"},
      {R"({"name": "a", "device": "gpu0", "kind": "collective", "collective": "gossip", "ranks": ["gpu0"], "bytes": 1})",
       R"(g.json: ops[0] "a": unknown collective "gossip")"},
      {R"({"name": "a", "device": "gpu0", "kind": "collective", "collective": "allreduce", "bytes": 1})",
       R"(g.json: ops[0] "a": collective op needs "ranks")"},
      {R"({"name": "a", "device": "gpu0", "kind": "collective", "collective": "allreduce", "ranks": ["gpu0", "gpu7"], "bytes": 1})",
       R"(g.json: ops[0] "a": unknown rank "gpu7")"},
      {R"({"name": "a", "device": "gpu0", "kind": "collective", "collective": "broadcast", "ranks": ["gpu0"], "root": "gpu1", "bytes": 1})",
       R"(g.json: ops[0] "a": root "gpu1" is not one of the ranks)"},
      {R"({"name": "a", "device": "gpu0", "kind": "collective", "collective": "allreduce", "ranks": ["gpu0", "gpu0"], "bytes": 1})",
       R"(appears twice in the collective)"},
      {R"({"name": "a", "device": "gpu0", "kind": "collective", "collective": "allreduce", "ranks": ["gpu0"], "bytes": 1, "chunks": 0})",
       R"(g.json: ops[0] "a": "chunks" must be an integer >= 1)"},
      {R"({"name": "a", "device": "gpu0", "duration": 1, "ranks": ["gpu0"]})",
       R"(g.json: ops[0] "a": "ranks" is only allowed on a collective op)"},
      {R"({"name": "a", "device": "gpu0", "duration": 1, "dst": "gpu1"})",
       R"(g.json: ops[0] "a": "dst" is only allowed on a transfer op)"},
      {R"({"name": "a", "device": "gpu0", "kind": "transfer", "dst": "gpu1", "bytes": 1, "duration": 2})",
       R"(g.json: ops[0] "a": "duration" is not allowed on a transfer op)"},
      {R"({"name": "a", "device": "gpu0", "duration": 1, "deps": "b"})",
       R"(g.json: ops[0] "a": "deps" must be an array of op names, got string "b")"},
      {R"({"name": "a", "device": "gpu0", "duration": 1, "deps": [0]})",
       R"(g.json: ops[0] "a": "deps" entries must be op names (strings), got number 0)"},
      {R"({"name": "a", "device": "gpu0", "duration": 1, "phase": 2})",
       R"(g.json: ops[0] "a": "phase" must be a string, got number 2)"},
      {R"({"name": "a", "device": "gpu0", "duration": 1}, "b")",
       R"(g.json: ops[1]: must be an object, got string "b")"},
      {R"({"name": "a", "device": "gpu0", "duration": 1},
          {"name": "b", "device": "gpu0", "duration": 1, "duration": 2})",
       R"(g.json: ops[1]: duplicate key "duration")"},
  };
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.ops);
    EXPECT_CONTAINS(error_of(with_ops(c.ops)), c.expect);
  }
}

TEST(GraphJson, CollectiveOpsRoundTrip) {
  auto g = parse_graph_json(R"({"format": "orrery-graph", "version": 1,
    "devices": [{"name": "gpu0", "node": "s0"}, {"name": "gpu1", "node": "s0"}, {"name": "gpu2", "node": "s1"}],
    "ops": [
      {"name": "k", "device": "gpu0", "duration": 0.001},
      {"name": "ar", "device": "gpu0", "kind": "collective", "collective": "allgather",
       "algo": "ring", "ranks": ["gpu0", "gpu1", "gpu2"], "bytes": 6e6, "counts": [1e6, 2e6, 3e6],
       "chunks": 4, "sm_share": 0.2, "deps": ["k"]},
      {"name": "bc", "device": "gpu1", "kind": "collective", "collective": "broadcast",
       "ranks": ["gpu0", "gpu1"], "root": "gpu1", "bytes": 1e6, "analytical": true}
    ]})",
                            "g.json");
  ASSERT_EQ(g.collectives.size(), 2u);
  const Op& ar = g.ops[1];
  EXPECT_EQ(ar.kind, OpKind::kCollective);
  EXPECT_TRUE(ar.stream == (Stream{StreamClass::kComm, 0}));  // default for communication
  const Collective& c = g.collectives[ar.collective];
  EXPECT_EQ(c.type, CollectiveType::kAllGather);
  EXPECT_EQ(c.algo, CollectiveAlgo::kRing);
  EXPECT_EQ(c.ranks, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(c.counts, (std::vector<double>{1e6, 2e6, 3e6}));
  EXPECT_EQ(c.chunks, 4);
  EXPECT_DOUBLE_EQ(c.sm_share, 0.2);
  const Collective& b = g.collectives[g.ops[2].collective];
  EXPECT_EQ(b.root, 1);
  EXPECT_TRUE(b.analytical);
  EXPECT_EQ(g.devices[2].node, "s1");

  std::ostringstream out;
  write_graph_json(g, out);
  auto back = parse_graph_json(out.str(), "again.json");
  ASSERT_EQ(back.collectives.size(), 2u);
  EXPECT_EQ(back.collectives[0].counts, c.counts);
  EXPECT_EQ(back.collectives[1].root, 1);
  EXPECT_EQ(back.devices[0].node, "s0");
  std::ostringstream again;
  write_graph_json(back, again);
  EXPECT_EQ(out.str(), again.str());
}

TEST(GraphJson, BadDevicesAndHeader) {
  const BadCase cases[] = {
      {R"({"format": "orrery-graph", "version": 1, "devices": [{"name": "gpu0"}, {"name": "gpu0"}], "ops": []})",
       R"(g.json: devices[1] "gpu0": duplicate device name)"},
      {R"({"format": "orrery-graph", "version": 1, "devices": [{"name": "gpu0", "hots": "h"}], "ops": []})",
       R"(g.json: devices[0] "gpu0": unknown key "hots" (did you mean "host"?) (expected one of: name, host, launch_host, node, mirrors))"},
      {R"({"format": "orrery-graph", "version": 1, "devices": [{"host": "h"}], "ops": []})",
       R"(g.json: devices[0]: missing required key "name")"},
      {R"({"format": "orrery-graph", "version": 1, "devices": [{"name": "g", "host": 1}], "ops": []})",
       R"(g.json: devices[0] "g": "host" must be a string, got number 1)"},
      {R"({"format": "orrery-graph", "version": 1, "devices": {}, "ops": []})",
       R"(g.json: "devices" must be an array, got object)"},
      {R"({"format": "orrery-graph", "version": 1, "ops": []})",
       R"(g.json: missing required key "devices")"},
      {R"({"format": "chakra", "version": 1, "devices": [], "ops": []})",
       R"(g.json: "format" is "chakra", expected "orrery-graph")"},
      {R"({"version": 1, "devices": [], "ops": []})", R"(g.json: missing "format")"},
      {R"({"format": "orrery-graph", "version": 2, "devices": [], "ops": []})",
       R"(g.json: unsupported "version" number 2)"},
      {R"({"format": "orrery-graph", "version": 1, "devices": [], "ops": [], "extra": 1})",
       R"(g.json: unknown key "extra")"},
      {R"({"format": "orrery-graph", "format": "orrery-graph", "version": 1, "devices": [], "ops": []})",
       R"(g.json: duplicate key "format")"},
      {R"([1, 2])", "g.json: top level must be a JSON object, got array"},
  };
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.ops);
    EXPECT_CONTAINS(error_of(c.ops), c.expect);
  }
}

TEST(GraphJson, OnlyRegularFilesAndNoStackOverflowOnDeepNesting) {
  const std::string dir = testing::make_temp_dir("graph_json");
  const std::string fifo = dir + "/g.json";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_NE(error_of_load(fifo).find("FIFO"), std::string::npos) << error_of_load(fifo);
  EXPECT_NE(error_of_load(dir).find("a directory"), std::string::npos) << error_of_load(dir);
  // 100,000 nested arrays: nlohmann parses and frees them without recursion.
  const std::string deep = dir + "/deep.json";
  testing::write_file(deep, "{\"format\": \"orrery-graph\", \"version\": 1, \"ops\": " +
                                std::string(100000, '[') + std::string(100000, ']') + "}");
  EXPECT_NE(error_of_load(deep).find(deep + ": "), std::string::npos) << error_of_load(deep);
}

}  // namespace
}  // namespace orrery
