// Chakra execution-trace import: the real ASTRA-sim microbenchmark traces in the shared
// fixtures/chakra folder beside the repository (written by Chakra's own tools, read in place) and
// small traces encoded here, field by field, from et_def.proto. Replay expectations are worked out
// by hand from link bandwidth and latency (network factors are 1: a flow over k links takes k x
// latency + bytes / bandwidth).
#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "common/errors.h"
#include "engine/replay.h"
#include "tests/chakra_encoding.h"
#include "tests/chakra_traces.h"
#include "tests/test_util.h"
#include "workloads/chakra/chakra_import.h"
#include "workloads/chakra/chakra_show.h"
#include "workloads/chakra/chakra_trace.h"

namespace orrery {
namespace {

using namespace chakra_encoding;

std::vector<std::string> hosts(int n) {
  std::vector<std::string> h;
  for (int i = 0; i < n; ++i) h.push_back("g" + std::to_string(i));
  return h;
}

std::string fixture(const std::string& coll_name, int npus) {
  return testing::shared_path("fixtures/chakra/microbenchmarks/" + coll_name + "/" +
                              std::to_string(npus) + "npus_1MB");
}

TEST(Chakra, DecodesAnAstraSimFixture) {
  chakra::Trace t = chakra::read_trace(fixture("all_reduce", 4) + "/all_reduce.2.et");
  EXPECT_EQ(t.version, "0.0.4");
  ASSERT_EQ(t.nodes.size(), 1u);
  const chakra::Node& n = t.nodes[0];
  EXPECT_EQ(n.type, chakra::kCommCollNode);
  EXPECT_EQ(n.name, "all_reduce_4npus_1MB");
  int64_t v = -1;
  ASSERT_NE(n.attr("comm_type"), nullptr);
  EXPECT_TRUE(n.attr("comm_type")->integer(&v));
  EXPECT_EQ(v, chakra::kAllReduce);
  EXPECT_TRUE(n.attr("comm_size")->integer(&v));
  EXPECT_EQ(v, 1048576);  // "1MB" in the file name: 2^20 bytes
  EXPECT_TRUE(n.attr("is_cpu_op")->integer(&v));
  EXPECT_EQ(v, 0);
}

TEST(Chakra, FixturesLoadWithTheExpectedFlows) {
  // Ring all-reduce: 2(n-1) steps of n flows of S/n; all-gather and reduce-scatter: n-1 steps;
  // all-to-all: n-1 rounds of n flows of S/n. S = 1 MiB.
  const double s = 1048576;
  for (const char* c : {"all_reduce", "all_gather", "reduce_scatter", "all_to_all"}) {
    for (int n : {4, 8, 16}) {
      SCOPED_TRACE(std::string(c) + " " + std::to_string(n));
      ExecutionGraph g = load_chakra_traces({fixture(c, n)}, hosts(n));
      ASSERT_EQ(g.devices.size(), static_cast<size_t>(n));
      EXPECT_EQ(g.devices[3].host, "g3");
      const int steps = std::string(c) == "all_reduce" ? 2 * (n - 1) : n - 1;
      ASSERT_EQ(g.ops.size(), static_cast<size_t>(steps * n));
      double bytes = 0;
      for (const auto& op : g.ops) {
        EXPECT_EQ(op.kind, OpKind::kTransfer);
        EXPECT_DOUBLE_EQ(op.transfer_bytes, s / n);
        bytes += op.transfer_bytes;
      }
      EXPECT_NEAR(bytes, steps * s, 1e-6);
    }
  }
}

TEST(Chakra, FixturesReplayInTheRingTime) {
  // Star of 1 GB/s, 1 us links: a flow crosses two links (2 us) and no two flows of a step
  // share a link, so each step takes 2 us + (S/n) / 1 GB/s and steps run back to back.
  const double s = 1048576, bw = 1e9, lat = 1e-6;
  for (const char* c : {"all_reduce", "all_gather", "reduce_scatter", "all_to_all"}) {
    for (int n : {4, 8, 16}) {
      SCOPED_TRACE(std::string(c) + " " + std::to_string(n));
      ExecutionGraph g = load_chakra_traces({fixture(c, n)}, hosts(n));
      RunResult r = replay_isolated(testing::star_platform(n, bw, lat), g, ReplayOptions{});
      const int steps = std::string(c) == "all_reduce" ? 2 * (n - 1) : n - 1;
      const double expected = steps * (2 * lat + s / n / bw);
      EXPECT_NEAR(r.makespan, expected, expected * 1e-9);
    }
  }
}

// --- Golden decode of the shared microbenchmark traces: every node as decoded, and a digest
// of the graph each set imports to (importer flows and engine collectives). Recorded with the
// hand-written wire decoder before the switch to libprotobuf; the decoders must agree exactly.
// Rewrite with ORRERY_UPDATE_GOLDEN=1 only when the format support changes on purpose.
std::string attr_text(const chakra::Attr& a) {
  std::ostringstream s;
  s << a.name << "=" << a.value_name() << ":";
  char buf[32];
  if (!a.is_list) {
    switch (a.kind) {
      case chakra::Attr::Kind::kSigned:
      case chakra::Attr::Kind::kBool:
        s << " " << a.int_value;
        break;
      case chakra::Attr::Kind::kUnsigned:
        s << " " << a.uint_value;
        break;
      case chakra::Attr::Kind::kFloat:
        std::snprintf(buf, sizeof buf, "%.17g", a.float_value);
        s << " " << buf;
        break;
      case chakra::Attr::Kind::kString:
      case chakra::Attr::Kind::kBytes:
        s << " \"" << a.string_value << "\"";
        break;
      case chakra::Attr::Kind::kNone:
        break;
    }
  }
  for (int64_t v : a.ints) s << " " << v;
  for (uint64_t v : a.uints) s << " " << v;
  for (double v : a.floats) {
    std::snprintf(buf, sizeof buf, "%.17g", v);
    s << " " << buf;
  }
  for (const auto& v : a.strings) s << " \"" << v << "\"";
  return s.str();
}

std::string ids_text(const std::vector<uint64_t>& ids) {
  std::string s;
  for (uint64_t id : ids) s += (s.empty() ? "" : ",") + std::to_string(id);
  return "[" + s + "]";
}

// FNV-1a over everything the replay reads from a graph.
std::string graph_digest(const ExecutionGraph& g) {
  std::ostringstream s;
  s.precision(17);
  for (const auto& d : g.devices) s << d.name << "|" << d.host << ";";
  for (const auto& op : g.ops) {
    s << op.name << "|" << op.device << "|" << stream_name(op.stream) << "|"
      << static_cast<int>(op.kind) << "|" << op.duration << "|" << op.flops << "|" << op.bytes
      << "|" << op.src << "|" << op.dst << "|" << op.transfer_bytes << "|" << op.collective << "|"
      << op.phase << "|";
    for (int d : op.deps) s << d << ",";
    s << ";";
  }
  for (const auto& c : g.collectives) {
    s << static_cast<int>(c.type) << "|" << c.bytes << "|";
    for (int r : c.ranks) s << r << ",";
    s << ";";
  }
  uint64_t h = 1469598103934665603ull;
  for (unsigned char ch : s.str()) h = (h ^ ch) * 1099511628211ull;
  char buf[20];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::string golden_text() {
  std::ostringstream out;
  for (const char* c : {"all_gather", "all_reduce", "all_to_all", "reduce_scatter"}) {
    for (int n : {4, 8, 16}) {
      const std::string set = std::string(c) + "/" + std::to_string(n) + "npus_1MB";
      out << "set " << set << "\n";
      for (int r = 0; r < n; ++r) {
        chakra::Trace t =
            chakra::read_trace(fixture(c, n) + "/" + c + "." + std::to_string(r) + ".et");
        out << " rank " << r << " version " << t.version << " metadata " << t.metadata.size()
            << " nodes " << t.nodes.size() << "\n";
        for (const auto& a : t.metadata) out << "  meta " << attr_text(a) << "\n";
        for (const auto& nd : t.nodes) {
          out << "  node " << nd.id << " \"" << nd.name << "\" " << chakra::node_type_name(nd.type)
              << " data " << ids_text(nd.data_deps) << " ctrl " << ids_text(nd.ctrl_deps)
              << " start " << nd.start_time_micros << " dur " << nd.duration_micros << "\n";
          for (const auto& a : nd.attrs) out << "   attr " << attr_text(a) << "\n";
        }
      }
      ExecutionGraph flows = load_chakra_traces({fixture(c, n)}, hosts(n));
      ChakraImportOptions o;
      o.device_hosts = hosts(n);
      o.engine_collectives = true;
      ExecutionGraph engine = load_chakra_traces({fixture(c, n)}, o);
      out << " graph flows ops " << flows.ops.size() << " digest " << graph_digest(flows)
          << "; engine ops " << engine.ops.size() << " collectives " << engine.collectives.size()
          << " digest " << graph_digest(engine) << "\n";
    }
  }
  return out.str();
}

TEST(Chakra, SharedFixturesDecodeAsTheGoldenFile) {
  const std::string path = testing::source_path("tests/golden/chakra_microbenchmarks.txt");
  const std::string text = golden_text();
  if (std::getenv("ORRERY_UPDATE_GOLDEN")) testing::write_file(path, text);
  EXPECT_EQ(text, testing::read_file(path));
}

TEST(Chakra, EngineCollectivesOptionEmitsOneCollectiveOp) {
  ChakraImportOptions o;
  o.engine_collectives = true;
  o.device_hosts = hosts(8);
  ExecutionGraph g = load_chakra_traces({fixture("reduce_scatter", 8)}, o);
  ASSERT_EQ(g.ops.size(), 1u);
  ASSERT_EQ(g.collectives.size(), 1u);
  EXPECT_EQ(g.collectives[0].type, CollectiveType::kReduceScatter);
  EXPECT_DOUBLE_EQ(g.collectives[0].bytes, 1048576);
  EXPECT_EQ(g.collectives[0].ranks, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
}

// Two ranks using every node type and both dependency kinds.
std::vector<std::string> two_rank_program() {
  std::vector<N> r0 = {
      {1, "fwd", chakra::kCompNode, {}, {}, 1000},
      {2, "gemm", chakra::kCompNode, {1}, {}, 0, attr_int("num_ops", 2000000000)},
      {3, "send", chakra::kCommSendNode, {2}, {}, 0, comm("comm_dst", 1, 1000000, 7)},
      {4, "allreduce", chakra::kCommCollNode, {}, {3}, 0, coll(chakra::kAllReduce, 4000000)},
      {5, "store", chakra::kMemStoreNode, {4}, {}, 500, attr_int("tensor_size", 4096)},
      {6, "marker", chakra::kMetadataNode, {5}},
      {7, "cpu", chakra::kCompNode, {}, {6}, 100, attr_bool("is_cpu_op", true)},
  };
  std::vector<N> r1 = {
      {10, "load", chakra::kMemLoadNode, {}, {}, 200, attr_int("tensor_size", 4096)},
      {11, "recv", chakra::kCommRecvNode, {}, {10}, 0, comm("comm_src", 0, 1000000, 7)},
      {12, "bwd", chakra::kCompNode, {11}, {}, 300},
      {13, "allreduce", chakra::kCommCollNode, {12}, {}, 0, coll(chakra::kAllReduce, 4000000)},
  };
  r1[1].packed = false;
  return {encode_trace(r0), encode_trace(r1)};
}

TEST(Chakra, EveryNodeTypeAndBothDependencyKinds) {
  ChakraImportOptions o;
  o.device_hosts = {"g0", "g1"};
  ExecutionGraph g = import(two_rank_program(), o);
  // 6 compute-like ops (fwd, gemm, store, cpu, load, bwd), 1 send/recv transfer, 2-rank ring
  // all-reduce = 2 steps x 2 flows; the metadata node adds nothing.
  ASSERT_EQ(g.ops.size(), 11u);
  const Op& gemm = g.ops[g.find_op("r0.2:gemm")];
  EXPECT_EQ(gemm.duration, -1.0);  // priced from num_ops
  EXPECT_DOUBLE_EQ(gemm.flops, 2e9);
  const Op& cpu = g.ops[g.find_op("r0.7:cpu")];
  EXPECT_EQ(cpu.stream.cls, StreamClass::kHost);
  ASSERT_EQ(cpu.deps.size(), 1u);  // through the metadata node to the store
  EXPECT_EQ(g.ops[cpu.deps[0]].name, "r0.5:store");
  EXPECT_EQ(g.ops[cpu.deps[0]].stream.cls, StreamClass::kCopyD2H);
  EXPECT_EQ(g.ops[g.find_op("r1.10:load")].stream.cls, StreamClass::kCopyH2D);
  const Op& xfer = g.ops[g.find_op("r0.3:send->r1")];
  EXPECT_EQ(xfer.src, 0);
  EXPECT_EQ(xfer.dst, 1);
  EXPECT_DOUBLE_EQ(xfer.transfer_bytes, 1e6);
  // Rendezvous: the transfer waits for the send's data dep (gemm) and the recv's ctrl dep (load).
  std::set<std::string> deps;
  for (int d : xfer.deps) deps.insert(g.ops[d].name);
  EXPECT_EQ(deps, (std::set<std::string>{"r0.2:gemm", "r1.10:load"}));

  // Hand timeline (host 1 Tflop/s, links 1 GB/s, no latency): fwd [0,1] ms, gemm 2e9 flop
  // [1,3], transfer 1 MB [3,4], bwd [4,4.3]; all-reduce of 4 MB over 2 ranks, 2 MB flows:
  // step 0 rank 0 [4,6], rank 1 [4.3,6.3]; step 1 both [6.3,8.3]; store [8.3,8.8]; cpu
  // [8.8,8.9].
  RunResult r = replay_isolated(testing::star_platform(2, 1e9, 0), g, ReplayOptions{});
  EXPECT_NEAR(r.makespan, 8.9e-3, 1e-9);
  EXPECT_NEAR(r.timeline[g.find_op("r1.12:bwd")].start, 4e-3, 1e-9);
  EXPECT_NEAR(r.timeline[g.find_op("r0.5:store")].start, 8.3e-3, 1e-9);
}

TEST(Chakra, ComputeCostFromDurationOrNumOps) {
  // A COMP node with both a measured duration (1 ms) and num_ops (5e9): the duration wins unless
  // prefer_num_ops; a node with neither is a zero-time op.
  const std::vector<std::string> ranks = {
      encode_trace({{1, "k", chakra::kCompNode, {}, {}, 1000, attr_int("num_ops", 5000000000)},
                    {2, "empty", chakra::kCompNode, {1}}})};
  ExecutionGraph measured = import(ranks);
  EXPECT_DOUBLE_EQ(measured.ops[0].duration, 1e-3);
  EXPECT_DOUBLE_EQ(measured.ops[0].flops, 0);
  EXPECT_DOUBLE_EQ(measured.ops[1].duration, 0);
  ChakraImportOptions o;
  o.prefer_num_ops = true;
  ExecutionGraph priced = import(ranks, o);
  EXPECT_DOUBLE_EQ(priced.ops[0].duration, -1);
  EXPECT_DOUBLE_EQ(priced.ops[0].flops, 5e9);
}

TEST(Chakra, IntegerAttributesInAnyIntegerType) {
  // comm_size 1000 (and comm_dst 1) written as each integer member of AttributeProto's oneof.
  auto send_with = [](const std::string& size_attr) {
    std::vector<N> r0 = {{1,
                          "send",
                          chakra::kCommSendNode,
                          {},
                          {},
                          0,
                          attr_int("comm_dst", 1) + bytes_field(10, size_attr)}};
    std::vector<N> r1 = {{1, "recv", chakra::kCommRecvNode, {}, {}, 0, attr_int("comm_src", 0)}};
    return std::vector<std::string>{encode_trace(r0), encode_trace(r1)};
  };
  const std::string name = bytes_field(1, "comm_size");
  const std::vector<std::pair<const char*, std::string>> encodings = {
      {"int32", varint_field(7, 1000)},           {"int64", varint_field(9, 1000)},
      {"uint32", varint_field(11, 1000)},         {"uint64", varint_field(13, 1000)},
      {"sint32", varint_field(15, zigzag(1000))}, {"sint64", varint_field(17, zigzag(1000))},
      {"fixed32", fixed32_field(19, 1000)},       {"fixed64", fixed64_field(21, 1000)},
      {"sfixed32", fixed32_field(23, 1000)},      {"sfixed64", fixed64_field(25, 1000)},
  };
  for (const auto& [type, value] : encodings) {
    SCOPED_TRACE(type);
    ExecutionGraph g = import(send_with(name + value));
    ASSERT_EQ(g.ops.size(), 1u);
    EXPECT_DOUBLE_EQ(g.ops[0].transfer_bytes, 1000);
  }
  // A string where an integer belongs is named in the error.
  EXPECT_NE(testing::input_error_of([&] {
              import(send_with(name + bytes_field(29, "1000")));
            }).find("comm_size must be a finite number >= 0, got string_val"),
            std::string::npos);
  // An infinite double (fixed64 0x7ff0...) is not a size.
  EXPECT_NE(testing::input_error_of([&] {
              import(send_with(name + fixed64_field(3, 0x7ff0000000000000u)));
            }).find("comm_size must be a finite number >= 0, got inf"),
            std::string::npos);
  // Negative sint32 decodes through ZigZag: -5 as comm_dst is not a rank.
  std::vector<N> bad = {
      {1,
       "send",
       chakra::kCommSendNode,
       {},
       {},
       0,
       bytes_field(10, bytes_field(1, "comm_dst") + varint_field(15, zigzag(-5))) +
           attr_int("comm_size", 8)}};
  EXPECT_NE(testing::input_error_of([&] {
              import({encode_trace(bad), encode_trace({})});
            }).find("comm_dst -5 is not a rank"),
            std::string::npos);
}

TEST(Chakra, GzippedFilesAndPrefixes) {
  std::vector<std::string> ranks = two_rank_program();
  std::string dir = testing::make_temp_dir("chakra_gz");
  for (size_t r = 0; r < ranks.size(); ++r) {
    gzFile f = gzopen((dir + "/prog." + std::to_string(r) + ".et.gz").c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(gzwrite(f, ranks[r].data(), static_cast<unsigned>(ranks[r].size())),
              static_cast<int>(ranks[r].size()));
    gzclose(f);
  }
  ExecutionGraph by_prefix = load_chakra_traces({dir + "/prog"}, std::vector<std::string>{});
  ExecutionGraph by_dir = load_chakra_traces({dir}, std::vector<std::string>{});
  ExecutionGraph plain = import(ranks);
  ASSERT_EQ(by_prefix.ops.size(), plain.ops.size());
  ASSERT_EQ(by_dir.ops.size(), plain.ops.size());
  for (size_t i = 0; i < plain.ops.size(); ++i) EXPECT_EQ(by_prefix.ops[i].name, plain.ops[i].name);
  EXPECT_EQ(by_prefix.devices[1].name, "rank1");
  EXPECT_EQ(resolve_chakra_files({dir + "/prog."}).size(), 2u);
  // A gap in the ranks of a directory is an error.
  std::filesystem::rename(dir + "/prog.1.et.gz", dir + "/prog.2.et.gz");
  EXPECT_NE(testing::input_error_of([&] {
              resolve_chakra_files({dir});
            }).find("1 rank file(s) are missing: " + dir + "/prog.1.et"),
            std::string::npos);
  // A truncated gzip stream is reported as such.
  std::string gz = testing::read_file(dir + "/prog.0.et.gz");
  std::ofstream(dir + "/cut.0.et", std::ios::binary) << gz.substr(0, gz.size() / 2);
  EXPECT_NE(testing::input_error_of([&] { chakra::read_trace(dir + "/cut.0.et"); }).find("gzip"),
            std::string::npos);
}

TEST(Chakra, MissingRankFilesAreErrorsNamingThem) {
  std::vector<std::string> ranks;
  for (int r = 0; r < 4; ++r)
    ranks.push_back(encode_trace(
        {{1, "ar", chakra::kCommCollNode, {}, {}, 0, coll(chakra::kAllReduce, 1 << 20)}}));
  const std::string prefix = write_ranks(ranks, "chakra_gap");
  const std::string dir = std::filesystem::path(prefix).parent_path().string();
  ASSERT_EQ(resolve_chakra_files({prefix}).size(), 4u);
  std::filesystem::remove(prefix + ".2.et");
  // The prefix form used to stop at the first gap and run ranks 0 and 1 alone.
  for (const std::string& arg : {prefix, dir}) {
    SCOPED_TRACE(arg);
    const std::string msg = testing::input_error_of([&] { resolve_chakra_files({arg}); });
    EXPECT_NE(msg.find("files up to rank 3 but 1 rank file(s) are missing: " + prefix + ".2.et"),
              std::string::npos)
        << msg;
  }
  // Files given one by one: rank i must be the i-th.
  const std::string listed = testing::input_error_of([&] {
    resolve_chakra_files({prefix + ".0.et", prefix + ".1.et", prefix + ".3.et"});
  });
  EXPECT_NE(listed.find(prefix + ".3.et: is the trace of rank 3 but given as file 2"),
            std::string::npos)
      << listed;
  // One rank's file of a larger set would run alone, its collectives with no peers.
  const std::string single =
      testing::input_error_of([&] { resolve_chakra_files({prefix + ".1.et"}); });
  EXPECT_NE(single.find("is the trace of rank 1 of a set of 4 ranks; give the prefix " + prefix),
            std::string::npos)
      << single;
  // A set declaring its size in the metadata must have that many files.
  const std::string meta = length_prefixed(
      bytes_field(1, "0.0.4") +
      bytes_field(2, bytes_field(1, "world_size") + varint_field(9, 3)));  // attr int64_val
  const std::string prefix2 = write_ranks({meta, meta}, "chakra_world");
  const std::string declared =
      testing::input_error_of([&] { load_chakra_traces({prefix2}, std::vector<std::string>{}); });
  EXPECT_NE(declared.find("world_size = 3, but the trace set has 2 rank file(s): rank files are "
                          "missing"),
            std::string::npos)
      << declared;
}

TEST(Chakra, DamagedFixtureBytesGiveInputErrorsOnly) {
  const std::string bytes = testing::read_file(fixture("all_to_all", 4) + "/all_to_all.0.et");
  ASSERT_GT(bytes.size(), 20u);
  auto parse = [&](const std::string& b) {
    try {
      chakra::parse_trace(b, "x.0.et");
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("x.0.et: ", 0), 0u) << e.what();
    }  // anything else escapes and fails the test
  };
  for (size_t cut = 0; cut < bytes.size(); ++cut) parse(bytes.substr(0, cut));
  for (size_t i = 0; i < bytes.size(); ++i)
    for (unsigned char x : {0x01, 0x80, 0xff}) {
      std::string b = bytes;
      b[i] = static_cast<char>(b[i] ^ x);
      parse(b);
    }
  // Zeros after the metadata: empty messages, refused at the first instead of collected.
  std::string zeros = length_prefixed(bytes_field(1, "0.0.4")) + std::string(1 << 20, '\0');
  try {
    chakra::parse_trace(zeros, "z.0.et");
    ADD_FAILURE() << "parsed a megabyte of zeros";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("z.0.et: node #0 at byte 8: an empty message"),
              std::string::npos)
        << e.what();
  }
  // A gzip that expands a thousand-fold is refused before it is decoded into nodes.
  const std::string dir = testing::make_temp_dir("chakra_bomb");
  std::string node = length_prefixed(encode_node({1, "a", chakra::kCompNode, {}, {}, 10}));
  std::string big = length_prefixed(bytes_field(1, "0.0.4"));
  while (big.size() < (size_t{80} << 20)) big += node;
  gzFile gz = gzopen((dir + "/b.0.et").c_str(), "wb9");
  ASSERT_NE(gz, nullptr);
  ASSERT_EQ(gzwrite(gz, big.data(), static_cast<unsigned>(big.size())),
            static_cast<int>(big.size()));
  gzclose(gz);
  EXPECT_NE(testing::input_error_of([&] {
              chakra::read_trace(dir + "/b.0.et");
            }).find("decompression bomb"),
            std::string::npos);
  // A length near 2^64 and a varint that never ends.
  parse(encode_varint(~uint64_t{0} >> 1) + "abc");
  parse(std::string(12, '\xff'));
}

TEST(Chakra, ShowListsTheNodesOfOneRankFile) {
  const std::string trace = encode_trace(
      {{7, "fwd\x1b[31m", chakra::kCompNode, {}, {}, 1500},
       {8, "ar", chakra::kCommCollNode, {7}, {}, 0, coll(chakra::kAllReduce, 1 << 20, "dp")},
       {9, "s", chakra::kCommSendNode, {}, {8}, 0, comm("comm_dst", 1, 4096)}});
  std::ostringstream out;
  print_chakra_trace(chakra::parse_trace(trace, "t.0.et"), out);
  const std::string text = out.str();
  EXPECT_NE(text.find("Nodes      3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("COMM_COLL_NODE 1  COMM_SEND_NODE 1  COMP_NODE 1"), std::string::npos)
      << text;
  EXPECT_NE(text.find("fwd?[31m"), std::string::npos) << text;  // no escape reaches the terminal
  EXPECT_NE(text.find("1.5 ms"), std::string::npos) << text;
  EXPECT_NE(text.find("ALL_REDUCE, group dp, 1 MiB"), std::string::npos) << text;
  EXPECT_NE(text.find("to rank 1, 4 KiB"), std::string::npos) << text;
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
}

TEST(Chakra, ProcessGroupsConfineCollectives) {
  // Four ranks, two data-parallel groups {0,2} and {1,3}, one all-reduce each.
  std::vector<std::string> ranks;
  for (int r = 0; r < 4; ++r) {
    ranks.push_back(encode_trace({{1,
                                   "ar",
                                   chakra::kCommCollNode,
                                   {},
                                   {},
                                   0,
                                   coll(chakra::kAllReduce, 1 << 20, r % 2 ? "dp1" : "dp0")}}));
  }
  ChakraImportOptions o;
  o.comm_groups = {{"dp0", {0, 2}}, {"dp1", {1, 3}}};
  ExecutionGraph g = import(ranks, o);
  ASSERT_EQ(g.ops.size(), 8u);  // 2 groups x 2 steps x 2 flows
  for (const auto& op : g.ops) EXPECT_EQ(op.src % 2, op.dst % 2) << op.name;
  // The same file from ASTRA-sim's comm-group JSON.
  std::string dir = testing::make_temp_dir("chakra_groups");
  testing::write_file(dir + "/groups.json", R"({"dp0": [0, 2], "dp1": [1, 3]})");
  EXPECT_EQ(load_chakra_comm_groups(dir + "/groups.json"), o.comm_groups);
  // A rank that does not fit an int is an error, not rank 1 (4294967297 wraps to 1).
  testing::write_file(dir + "/wrap.json", R"({"dp0": [0, 4294967297]})");
  EXPECT_NE(testing::input_error_of([&] {
              load_chakra_comm_groups(dir + "/wrap.json");
            }).find("ranks must be integers from 0 to 16777216, got 4294967297"),
            std::string::npos);
  // Without the groups every collective spans all ranks: the two "groups" then differ.
  EXPECT_NE(testing::input_error_of([&] { import(ranks); }).find("process group \"dp0\""),
            std::string::npos);
}

TEST(Chakra, MalformedTracesGiveClearErrors) {
  const std::string ok = encode_trace({{1, "a", chakra::kCompNode, {}, {}, 10}});
  struct Case {
    const char* what;
    std::vector<std::string> ranks;
    const char* expect;
  };
  const std::vector<Case> cases = {
      {"truncated message", {ok.substr(0, ok.size() - 3)}, "truncated file?"},
      {"empty file", {std::string()}, "empty file"},
      {"no metadata",
       {length_prefixed(encode_node({1, "a", chakra::kCompNode, {}, {}, 10}))},
       "not a GlobalMetadata"},
      {"unknown node type", {encode_trace({{1, "a", 42}})}, "unknown node type 42"},
      {"unset node type", {encode_trace({{1, "a", 0}})}, "INVALID_NODE"},
      {"missing dependency",
       {encode_trace({{1, "a", chakra::kCompNode, {99}, {}, 10}})},
       "depends on node id 99, which is not in the file"},
      {"missing control dependency",
       {encode_trace({{1, "a", chakra::kCompNode, {}, {98}, 10}})},
       "depends on node id 98"},
      {"cycle",
       {encode_trace({{1, "a", chakra::kCompNode, {3}, {}, 10},
                      {2, "b", chakra::kCompNode, {1}, {}, 10},
                      {3, "c", chakra::kCompNode, {}, {2}, 10}})},
       "dependency cycle among node ids 1 -> 2 -> 3 -> 1"},
      {"duplicate id",
       {encode_trace({{1, "a", chakra::kCompNode}, {1, "b", chakra::kCompNode}})},
       "node id 1 \"b\": duplicate node id (also node #0)"},
      // Ids far apart (as Orrery's own exports number nodes across ranks) take the sorted index:
      // the same answers as the dense one.
      {"duplicate sparse id",
       {encode_trace({{90000, "a", chakra::kCompNode, {}, {}, 10},
                      {50000, "b", chakra::kCompNode, {90000}, {}, 10},
                      {70000, "c", chakra::kCompNode, {}, {}, 10},
                      {50000, "d", chakra::kCompNode, {}, {}, 10},
                      {90000, "e", chakra::kCompNode, {}, {}, 10}})},
       "node id 50000 \"d\": duplicate node id (also node #1)"},
      {"missing sparse dependency",
       {encode_trace({{90000, "a", chakra::kCompNode, {}, {}, 10},
                      {50000, "b", chakra::kCompNode, {90000, 60000}, {}, 10}})},
       "node id 50000 \"b\": depends on node id 60000, which is not in the file"},
      {"wrong wire type",
       {length_prefixed(bytes_field(1, "0.0.4")) + length_prefixed(bytes_field(1, "x"))},
       "wire type 2"},
      {"unmatched send",
       {encode_trace({{1, "s", chakra::kCommSendNode, {}, {}, 0, comm("comm_dst", 1, 8)}}),
        encode_trace({})},
       "has no matching COMM_RECV_NODE in rank 1's trace"},
      {"collective missing on a rank",
       {encode_trace({{1, "ar", chakra::kCommCollNode, {}, {}, 0, coll(chakra::kAllReduce, 8)}}),
        encode_trace({})},
       "but not of ranks [1]"},
      {"sizes differ across ranks",
       {encode_trace({{1, "ar", chakra::kCommCollNode, {}, {}, 0, coll(chakra::kAllReduce, 8)}}),
        encode_trace({{1, "ar", chakra::kCommCollNode, {}, {}, 0, coll(chakra::kAllReduce, 16)}})},
       "differs across ranks"},
      {"unsupported collective",
       {encode_trace({{1, "bc", chakra::kCommCollNode, {}, {}, 0, coll(chakra::kBroadcast, 8)}}),
        encode_trace({{1, "bc", chakra::kCommCollNode, {}, {}, 0, coll(chakra::kBroadcast, 8)}})},
       "BROADCAST is not supported"},
      {"unknown collective type",
       {encode_trace({{1, "x", chakra::kCommCollNode, {}, {}, 0, coll(77, 8)}}),
        encode_trace({{1, "x", chakra::kCommCollNode, {}, {}, 0, coll(77, 8)}})},
       "unknown comm_type 77"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    std::string msg = testing::input_error_of([&] { import(c.ranks); });
    EXPECT_NE(msg.find(c.expect), std::string::npos) << msg;
    EXPECT_NE(msg.find(".et: "), std::string::npos) << msg;  // names the file
  }
}

TEST(Chakra, MismatchedCollectiveOrderIsADeadlock) {
  // Rank 0 runs group a then b; rank 1 runs b then a (each second depends on its first).
  auto rank = [](const char* first, const char* second) {
    return encode_trace(
        {{1, "c1", chakra::kCommCollNode, {}, {}, 0, coll(chakra::kAllReduce, 8, first)},
         {2, "c2", chakra::kCommCollNode, {1}, {}, 0, coll(chakra::kAllReduce, 8, second)}});
  };
  ChakraImportOptions o;
  o.comm_groups = {{"a", {0, 1}}, {"b", {0, 1}}};
  std::string msg = testing::input_error_of([&] { import({rank("a", "b"), rank("b", "a")}, o); });
  EXPECT_NE(msg.find("deadlocks"), std::string::npos) << msg;
}

TEST(Chakra, TooFewHostsForTheRanks) {
  EXPECT_NE(testing::input_error_of([&] {
              load_chakra_traces({fixture("all_gather", 8)}, hosts(4));
            }).find("8 rank files but only 4 device hosts"),
            std::string::npos);
}

// Rank files are decoded on several threads: the set comes back in rank order, the same every
// time, and of two bad files the error names the first in rank order, as a sequential read did.
TEST(ChakraFiles, RankFilesDecodeInRankOrderAndTheFirstBadFileIsReported) {
  const std::string prefix =
      testing::one_collective_traces(CollectiveType::kAllReduce, 16, 1e6, "chakra_parallel");
  const auto a = read_chakra_traces({prefix});
  const auto b = read_chakra_traces({prefix});
  ASSERT_EQ(a.size(), 16u);
  for (size_t r = 0; r < a.size(); ++r) {
    EXPECT_EQ(a[r].origin, prefix + "." + std::to_string(r) + ".et");
    EXPECT_EQ(a[r].origin, b[r].origin);
    ASSERT_EQ(a[r].nodes.size(), b[r].nodes.size());
    for (size_t k = 0; k < a[r].nodes.size(); ++k) EXPECT_EQ(a[r].nodes[k].id, b[r].nodes[k].id);
  }
  for (int r : {11, 5}) {
    const std::string file = prefix + "." + std::to_string(r) + ".et";
    std::filesystem::resize_file(file, std::filesystem::file_size(file) - 3);
  }
  const std::string error = testing::input_error_of([&] { read_chakra_traces({prefix}); });
  EXPECT_NE(error.find(prefix + ".5.et"), std::string::npos) << error;
  EXPECT_EQ(error.find(prefix + ".11.et"), std::string::npos) << error;
}

}  // namespace
}  // namespace orrery
