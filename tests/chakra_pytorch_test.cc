// Chakra traces as PyTorch writes them and Chakra's PyTorch converter turns them into Chakra's
// format: the process-group table in a "## process_group:init ##" METADATA_NODE (inputs.values is
// Python's repr of the execution trace's input list, whose one string is the JSON of
// torch.distributed's pg_config_info), pg_name on collectives, sends and receives without
// comm_dst / comm_src, CPU ops marked is_cpu_op. The traces here are written field by field the
// way that converter lays them out, for 8 ranks of Megatron-style TP=2 x PP=2 x DP=2.
#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "common/errors.h"
#include "tests/chakra_encoding.h"
#include "tests/test_util.h"
#include "workloads/chakra/chakra_import.h"
#include "workloads/chakra/chakra_process_groups.h"
#include "workloads/chakra/chakra_show.h"

namespace orrery {
namespace {

using namespace chakra_encoding;

// Megatron's layout for world 8, TP 2, PP 2, DP 2: TP groups are consecutive ranks, PP groups
// stride world / PP, DP groups stride TP inside one pipeline stage.
struct Layout {
  std::vector<std::pair<std::string, std::vector<int>>> groups;        // pg_name "0" = all ranks
  std::string tp(int r) const { return "1" + std::to_string(r / 2); }  // "10".."13"
  std::string pp(int r) const { return "2" + std::to_string(r % 4); }  // "20".."23"
  std::string dp(int r) const { return "3" + std::to_string((r / 4) * 2 + r % 2); }  // "30".."33"
  Layout() {
    groups.push_back({"0", {}});
    for (int g = 0; g < 4; ++g) groups.push_back({"1" + std::to_string(g), {2 * g, 2 * g + 1}});
    for (int g = 0; g < 4; ++g) groups.push_back({"2" + std::to_string(g), {g, g + 4}});
    for (int g = 0; g < 4; ++g) {
      const int first = (g / 2) * 4 + g % 2;
      groups.push_back({"3" + std::to_string(g), {first, first + 2}});
    }
  }
};

// Rank r's table as pg_config_info writes it: the groups r belongs to ("ranks": [] for all).
std::string table_json(const Layout& l, int r) {
  std::string s = "[";
  bool first = true;
  for (const auto& [name, ranks] : l.groups) {
    if (!ranks.empty() && ranks[0] != r && ranks[1] != r) continue;
    std::string list;
    for (int x : ranks) list += (list.empty() ? "" : ", ") + std::to_string(x);
    s += std::string(first ? "" : ", ") + "{\"pg_name\": \"" + name +
         "\", \"pg_desc\": \"undefined\", \"backend_config\": \"cuda:nccl\", \"ranks\": [" + list +
         "], \"group_size\": " + std::to_string(ranks.empty() ? 8 : 2) + ", \"group_count\": 13}";
    first = false;
  }
  return s + "]";
}

// str(["<json>"]) in Python: the JSON holds double quotes only, so the repr quotes with '.
std::string python_repr_list(const std::string& json) { return "['" + json + "']"; }

// GlobalMetadata with the attribute the converter copies from the execution trace.
std::string converter_metadata(bool with_schema) {
  std::string m = bytes_field(1, "0.0.4");
  if (with_schema)
    m += bytes_field(2, bytes_field(1, "schema") + bytes_field(29, "1.1.1-chakra.0.0.4"));
  return length_prefixed(m);
}

// One training step's skeleton on rank r as the converter lays it out: ctrl_deps are PyTorch's
// call tree (every CPU op under the thread node 2, kernels under their launcher; the process
// node 1 the thread hangs from was dropped as dangling), data_deps the execution order. A CPU
// op, a kernel, the TP all-reduce, the activation sent to (stage 0) or received from (stage 1)
// the other pipeline stage, then the DP gradient all-reduce.
std::string rank_trace(const Layout& l, int r, bool with_schema = true) {
  const bool stage0 = r < 4;
  const std::string cpu = attr_bool("is_cpu_op", true);
  const std::string gpu = attr_bool("is_cpu_op", false);
  const std::vector<N> nodes = {
      {2, "[pytorch|profiler|execution_trace|thread]", chakra::kCompNode, {}, {1}, 0, cpu},
      {3,
       kProcessGroupInitNode,
       chakra::kMetadataNode,
       {2},
       {2},
       0,
       cpu + inputs_values(python_repr_list(table_json(l, r)))},
      {4, "aten::linear", chakra::kCompNode, {3}, {2}, 5, cpu},
      {5, "sm90_xmma_gemm", chakra::kCompNode, {4}, {4}, 100, gpu},
      {6, "record_param_comms", chakra::kCompNode, {4}, {2}, 1, cpu},
      {7,
       "ncclDevKernel_AllReduce_Sum_bf16_RING_LL",
       chakra::kCommCollNode,
       {6},
       {6},
       40,
       gpu + coll(chakra::kAllReduce, 1 << 20, l.tp(r))},
      {8, stage0 ? "nccl:send" : "nccl:recv", chakra::kCompNode, {6}, {2}, 1, cpu},
      {9,
       "ncclDevKernel_SendRecv",
       stage0 ? chakra::kCommSendNode : chakra::kCommRecvNode,
       {8},
       {8},
       20,
       gpu + attr_int("comm_size", 1 << 18) + attr_str("pg_name", l.pp(r))},
      {10, "record_param_comms", chakra::kCompNode, {8}, {2}, 1, cpu},
      {11,
       "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
       chakra::kCommCollNode,
       {10},
       {10},
       80,
       gpu + coll(chakra::kAllReduce, 4 << 20, l.dp(r))},
  };
  std::string out = converter_metadata(with_schema);
  for (const N& n : nodes) out += length_prefixed(encode_node(n));
  return out;
}

std::vector<std::string> megatron_ranks(const Layout& l) {
  std::vector<std::string> ranks;
  for (int r = 0; r < 8; ++r) ranks.push_back(rank_trace(l, r));
  return ranks;
}

std::vector<chakra::Trace> decode(const std::vector<std::string>& ranks) {
  std::vector<chakra::Trace> traces;
  for (size_t r = 0; r < ranks.size(); ++r)
    traces.push_back(chakra::parse_trace(ranks[r], "rank" + std::to_string(r) + ".et"));
  return traces;
}

TEST(ChakraPyTorch, ProcessGroupTablesOfAllRanksMerge) {
  const Layout l;
  auto groups = trace_process_groups(decode(megatron_ranks(l)));
  ASSERT_EQ(groups.size(), 13u);
  EXPECT_EQ(groups["0"], (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));  // "ranks": [] = all
  EXPECT_EQ(groups["12"], (std::vector<int>{4, 5}));                   // TP
  EXPECT_EQ(groups["21"], (std::vector<int>{1, 5}));                   // PP
  EXPECT_EQ(groups["33"], (std::vector<int>{5, 7}));                   // DP, stage 1
  // No table, no groups (ASTRA-sim's traces carry none).
  EXPECT_TRUE(trace_process_groups(decode({encode_trace({{1, "a", chakra::kCompNode}})})).empty());
}

TEST(ChakraPyTorch, ShowListsTheGroups) {
  std::ostringstream out;
  print_chakra_process_groups(trace_process_group_entries(decode(megatron_ranks(Layout()))),
                              "traces", out, 3);
  EXPECT_EQ(out.str(),
            "\nProcess groups (traces): 13\n"
            "  0 (undefined): 8 ranks [0, 1, 2, 3, 4, 5, 6, 7]\n"
            "  10 (undefined): 2 ranks [0, 1]\n"
            "  11 (undefined): 2 ranks [2, 3]\n"
            "  ... 10 more\n");
}

TEST(ChakraPyTorch, CollectivesAndSendsStayInTheirProcessGroups) {
  const Layout l;
  ExecutionGraph g = import(megatron_ranks(l));
  // Per rank: four CPU ops, the thread node and one kernel. TP and DP all-reduces over two ranks:
  // ring of 2 steps (reduce-scatter, all-gather), each 2 flows, per group: 4 groups x 4 flows each.
  // PP: one transfer per stage-0 rank.
  int tp = 0, dp = 0, pp = 0, compute = 0;
  for (const Op& op : g.ops) {
    if (op.kind == OpKind::kCompute) {
      ++compute;
      continue;
    }
    SCOPED_TRACE(op.name);
    // Collective flows are named coll.<pg_name>.<k>:...: TP groups are "1x", DP groups "3x".
    if (op.name.rfind("coll.1", 0) == 0) {
      ++tp;
      EXPECT_EQ(op.src / 2, op.dst / 2);  // one TP pair
    } else if (op.name.rfind("coll.3", 0) == 0) {
      ++dp;
      EXPECT_EQ(op.src / 4, op.dst / 4);  // same stage
      EXPECT_EQ(op.src % 2, op.dst % 2);  // same TP rank
      EXPECT_NE(op.src, op.dst);
    } else {
      ++pp;
      EXPECT_EQ(op.dst, op.src + 4);  // stage 0 -> stage 1, the same position
      EXPECT_DOUBLE_EQ(op.transfer_bytes, 1 << 18);
    }
  }
  EXPECT_EQ(compute, 8 * 6);  // thread, aten::linear, gemm, 3 launchers
  EXPECT_EQ(tp, 16);
  EXPECT_EQ(dp, 16);
  EXPECT_EQ(pp, 4);

  // As engine collectives, each collective's ranks are its group.
  ChakraImportOptions o;
  o.engine_collectives = true;
  ExecutionGraph e = import(megatron_ranks(l), o);
  std::set<std::vector<int>> seen;
  for (const Collective& c : e.collectives) seen.insert(c.ranks);
  EXPECT_EQ(seen, (std::set<std::vector<int>>{
                      {0, 1}, {2, 3}, {4, 5}, {6, 7}, {0, 2}, {1, 3}, {4, 6}, {5, 7}}));
  EXPECT_EQ(e.collectives.size(), 8u);
}

TEST(ChakraPyTorch, CallTreeCtrlDepsAreNotOrder) {
  // The same files without the converter's schema attribute read ctrl_deps as dependencies, and
  // the thread node's parent is missing.
  const Layout l;
  std::vector<std::string> ranks = megatron_ranks(l);
  ranks[3] = rank_trace(l, 3, false);
  const std::string msg = testing::input_error_of([&] { import(ranks); });
  EXPECT_NE(msg.find("rank3.et: node id 2"), std::string::npos) << msg;
  EXPECT_NE(msg.find("depends on node id 1, which is not in the file"), std::string::npos) << msg;
  // With it, the kernel waits for its launcher only through data_deps: the gemm (node 5) starts
  // after aten::linear (node 4) and nothing else.
  ExecutionGraph g = import(megatron_ranks(l));
  int gemms = 0;
  for (const Op& op : g.ops) {
    if (op.device != 0 || op.name.find("sm90_xmma_gemm") == std::string::npos) continue;
    ++gemms;
    ASSERT_EQ(op.deps.size(), 1u);
    EXPECT_NE(g.ops[op.deps[0]].name.find("aten::linear"), std::string::npos);
  }
  EXPECT_EQ(gemms, 1);
}

TEST(ChakraPyTorch, ExplicitCommGroupsOverrideTheTraces) {
  // A comm-group file given by the user wins over the table: this one names only group "10",
  // so the traces' other groups are unknown.
  const Layout l;
  ChakraImportOptions o;
  o.comm_groups = {{"10", {0, 1}}};
  const std::string msg = testing::input_error_of([&] { import(megatron_ranks(l), o); });
  EXPECT_NE(msg.find("is not in the comm groups"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("process group \"10\""), std::string::npos) << msg;
}

TEST(ChakraPyTorch, TableTextInEveryFormThatCarriesIt) {
  const std::string table =
      R"([{"pg_name": "0", "pg_desc": "default_pg", "ranks": [], "group_size": 4},)"
      R"( {"pg_name": "1", "pg_desc": "it's \"dp\"", "ranks": [3, 1], "group_size": 2}])";
  // The converter's repr, with Python's escapes for a quote of each kind and a non-ASCII letter.
  const std::string repr =
      R"(['[{"pg_name": "0", "pg_desc": "default_pg", "ranks": [], "group_size": 4}, )"
      R"({"pg_name": "1", "pg_desc": "it\'s \\"dp\\" \u00e9", "ranks": [3, 1], "group_size": 2}]'])";
  for (const std::string& text : {table, "[" + nlohmann::json(table).dump() + "]", repr}) {
    SCOPED_TRACE(text);
    auto e = parse_process_group_table(text, 4, "t.et");
    ASSERT_EQ(e.size(), 2u);
    EXPECT_EQ(e[0].ranks, (std::vector<int>{0, 1, 2, 3}));
    EXPECT_EQ(e[1].name, "1");
    EXPECT_EQ(e[1].ranks, (std::vector<int>{3, 1}));  // group order kept
  }
  EXPECT_EQ(parse_process_group_table(repr, 4, "t.et")[1].desc, "it's \"dp\" \xc3\xa9");

  struct Case {
    std::string text, expect;
  };
  const std::vector<Case> bad = {
      {"not a list", "neither a JSON list nor a Python list"},
      {"['not json']", "holds no process-group table"},
      {R"([{"pg_desc": "x", "ranks": []}])", "pg_name"},
      {R"([{"pg_name": "1", "ranks": [0, 4]}])", "ranks must be integers from 0 to 3"},
      {R"([{"pg_name": "1", "ranks": [1, 1]}])", "rank 1 is listed twice"},
      {R"([{"pg_name": "1", "ranks": [], "group_size": 8}])",
       "group_size 8 but \"ranks\": [] means all 4 ranks"},
      {R"([{"pg_name": "1", "ranks": "all"}])", "\"ranks\" must be a list"},
  };
  for (const Case& c : bad) {
    SCOPED_TRACE(c.text);
    const std::string msg =
        testing::input_error_of([&] { parse_process_group_table(c.text, 4, "t.et: node 1"); });
    EXPECT_NE(msg.find(c.expect), std::string::npos) << msg;
    EXPECT_EQ(msg.rfind("t.et: node 1", 0), 0u) << msg;  // names the file and node
  }
}

TEST(ChakraPyTorch, RanksThatDisagreeOnAGroupAreNamed) {
  Layout l;
  std::vector<std::string> ranks = megatron_ranks(l);
  Layout other = l;
  other.groups[1].second = {0, 2};  // rank 0 claims TP group "10" is {0, 2}
  ranks[0] = rank_trace(other, 0);
  const std::string msg = testing::input_error_of([&] { import(ranks); });
  EXPECT_NE(msg.find("process group \"10\" has ranks [0, 1] here but [0, 2] in rank0.et"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("rank1.et"), std::string::npos) << msg;
}

TEST(ChakraPyTorch, APeerIsInferredOnlyFromATwoRankGroup) {
  // A send in the 8-rank default group has no single peer.
  auto trace = [](int r) {
    const std::string table =
        python_repr_list(R"([{"pg_name": "0", "ranks": [], "group_size": 2}])");
    return encode_trace(
        {{1, kProcessGroupInitNode, chakra::kMetadataNode, {}, {}, 0, inputs_values(table)},
         {2,
          "ncclDevKernel_SendRecv",
          r == 0 ? chakra::kCommSendNode : chakra::kCommRecvNode,
          {},
          {},
          0,
          attr_int("comm_size", 64) + attr_str("pg_name", "0")}});
  };
  ExecutionGraph g = import({trace(0), trace(1)});
  ASSERT_EQ(g.ops.size(), 1u);
  EXPECT_EQ(g.ops[0].src, 0);
  EXPECT_EQ(g.ops[0].dst, 1);

  ChakraImportOptions o;
  o.comm_groups = {{"0", {0, 1, 2}}};
  const std::string three = encode_trace({{1, "c", chakra::kCompNode, {}, {}, 1}});
  std::string msg = testing::input_error_of([&] { import({trace(0), trace(1), three}, o); });
  EXPECT_NE(msg.find("COMM_SEND_NODE has no comm_dst and its process group \"0\" is [0, 1, 2]"),
            std::string::npos)
      << msg;
  msg = testing::input_error_of([&] {
    import({encode_trace(
                {{ 1,
                   "s",
                   chakra::kCommSendNode,
                   {},
                   {},
                   0,
                   attr_int("comm_size", 8) }}),
            three});
  });
  EXPECT_NE(msg.find("COMM_SEND_NODE needs attribute comm_dst (or a pg_name of a two-rank"),
            std::string::npos)
      << msg;
}

}  // namespace
}  // namespace orrery
