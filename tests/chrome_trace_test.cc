#include "results/chrome_trace.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <string>

#include "common/errors.h"
#include "engine/replay.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

ExecutionGraph sample_graph() {
  ExecutionGraph g;
  g.devices = {{"gpu0", "gpu0", "gpu0", "", {}}, {"gpu1", "gpu1", "gpu1", "", {}}};
  auto add = [&](const std::string& name, int device, Stream stream, const std::string& phase) {
    Op op;
    op.name = name;
    op.device = device;
    op.stream = stream;
    op.phase = phase;
    op.duration = 1e-3;
    g.ops.push_back(op);
    return g.ops.size() - 1;
  };
  add("fwd/matmul \"q\"\n\\", 0, {StreamClass::kCompute, 0}, "forward");
  size_t t = add("send_grad", 0, {StreamClass::kComm, 1}, "comm");
  g.ops[t].kind = OpKind::kTransfer;
  g.ops[t].src = 0;
  g.ops[t].dst = 1;
  g.ops[t].transfer_bytes = 4194304;
  size_t c = add("bwd/matmul", 1, {StreamClass::kCompute, 0}, "backward");
  g.ops[c].duration = -1;  // priced by a cost model
  g.ops[c].flops = 2e12;
  g.ops[c].bytes = 1.5e8;
  add("launch", 1, {StreamClass::kHost, 0}, "host");
  return g;
}

RunResult sample_result() {
  RunResult r;
  r.makespan = 0.004;
  r.timeline = {{0.0, 0.0015}, {0.0015, 0.0025}, {0.0025, 0.004}, {0.000001, 0.0000015}};
  return r;
}

json read_json(const std::string& path) { return json::parse(testing::read_file(path)); }

TEST(ChromeTrace, IsValidJsonWithOneEventPerOpAndNamedProcessesAndThreads) {
  std::string dir = testing::make_temp_dir("trace");
  std::string path = dir + "/trace.json";
  ExecutionGraph g = sample_graph();
  RunResult r = sample_result();
  write_chrome_trace(path, g, r);

  json trace = read_json(path);
  ASSERT_TRUE(trace["traceEvents"].is_array());
  std::map<int, std::string> process_names;
  std::map<std::pair<int, int>, std::string> thread_names;
  int complete = 0, metadata = 0;
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] == "X") {
      ++complete;
    } else {
      ASSERT_EQ(e["ph"], "M");
      ++metadata;
      if (e["name"] == "process_name") process_names[e["pid"]] = e["args"]["name"];
      if (e["name"] == "thread_name") thread_names[{e["pid"], e["tid"]}] = e["args"]["name"];
    }
  }
  EXPECT_EQ(complete, 4);
  // Per device: process name and sort index; per used (device, stream): thread name and index.
  EXPECT_EQ(metadata, 2 * 2 + 4 * 2);
  EXPECT_EQ(process_names, (std::map<int, std::string>{{1, "gpu0"}, {2, "gpu1"}}));
  EXPECT_EQ(thread_names.size(), 4u);

  size_t i = 0;
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] != "X") continue;
    const Op& op = g.ops[i];
    SCOPED_TRACE(op.name);
    EXPECT_EQ(e["name"], op.name);  // escaping survived the round trip
    EXPECT_EQ(e["cat"], op.phase);
    EXPECT_EQ(process_names[e["pid"]], g.devices[op.device].name);
    EXPECT_EQ((thread_names[{e["pid"], e["tid"]}]), stream_name(op.stream));
    EXPECT_NEAR(e["ts"].get<double>(), r.timeline[i].start * 1e6, 1e-3);
    EXPECT_NEAR(e["dur"].get<double>(), (r.timeline[i].end - r.timeline[i].start) * 1e6, 1e-3);
    ++i;
  }
  const json& send = trace["traceEvents"][trace["traceEvents"].size() - 3];
  EXPECT_EQ(send["name"], "send_grad");
  EXPECT_EQ(send["args"]["kind"], "transfer");
  EXPECT_EQ(send["args"]["bytes"], 4194304);
  EXPECT_EQ(send["args"]["src"], "gpu0");
  EXPECT_EQ(send["args"]["dst"], "gpu1");
  EXPECT_EQ(send["ts"], 1500.0);
  EXPECT_EQ(send["dur"], 1000.0);
  const json& bwd = trace["traceEvents"][trace["traceEvents"].size() - 2];
  EXPECT_EQ(bwd["args"]["kind"], "compute");
  EXPECT_EQ(bwd["args"]["flops"], 2e12);
  EXPECT_EQ(bwd["args"]["bytes"], 1.5e8);
  EXPECT_FALSE(trace["traceEvents"].back()["args"].contains("flops"));  // unpriced: no sizes
  EXPECT_EQ(trace["traceEvents"].back()["ts"], 1.0);
  EXPECT_EQ(trace["traceEvents"].back()["dur"], 0.5);
}

TEST(ChromeTrace, SameStreamHasSameThreadIdOnEveryDevice) {
  std::string dir = testing::make_temp_dir("trace");
  std::string path = dir + "/trace.json";
  write_chrome_trace(path, sample_graph(), sample_result());
  json trace = read_json(path);
  std::map<std::string, std::set<int>> tids;
  for (const json& e : trace["traceEvents"]) {
    if (e["name"] == "thread_name") tids[e["args"]["name"]].insert(e["tid"].get<int>());
  }
  EXPECT_EQ(tids["compute"].size(), 1u);
  EXPECT_EQ(tids.size(), 3u);  // compute, comm:1, host
}

TEST(ChromeTrace, SkipsOpsThatNeverRan) {
  std::string dir = testing::make_temp_dir("trace");
  std::string path = dir + "/trace.json";
  RunResult r = sample_result();
  r.timeline[1].start = std::numeric_limits<double>::quiet_NaN();
  r.timeline[2].end = std::numeric_limits<double>::infinity();
  write_chrome_trace(path, sample_graph(), r);
  json trace = read_json(path);
  int complete = 0;
  for (const json& e : trace["traceEvents"]) complete += e["ph"] == "X";
  EXPECT_EQ(complete, 2);
}

TEST(ChromeTrace, EmptyGraphIsAValidTrace) {
  std::string dir = testing::make_temp_dir("trace");
  std::string path = dir + "/trace.json";
  write_chrome_trace(path, ExecutionGraph{}, RunResult{});
  EXPECT_TRUE(read_json(path)["traceEvents"].empty());
}

TEST(ChromeTrace, LeavesNoTempFile) {
  std::string dir = testing::make_temp_dir("trace");
  write_chrome_trace(dir + "/trace.json", sample_graph(), sample_result());
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename());
  EXPECT_EQ(names, std::vector<std::string>{"trace.json"});
}

TEST(ChromeTrace, RejectsBadDestinationAndMismatchedTimeline) {
  std::string dir = testing::make_temp_dir("trace");
  std::string missing = dir + "/nope/trace.json";
  EXPECT_THROW(write_chrome_trace(missing, sample_graph(), sample_result()), InputError);
  EXPECT_FALSE(fs::exists(missing));
  RunResult r = sample_result();
  r.timeline.pop_back();
  EXPECT_THROW(write_chrome_trace(dir + "/trace.json", sample_graph(), r), std::invalid_argument);
  EXPECT_FALSE(fs::exists(dir + "/trace.json"));
}

TEST(ChromeTrace, CollectiveShowsOnEveryRanksTrack) {
  ExecutionGraph g;
  g.devices = {{"gpu0", "gpu0", "gpu0", "", {}},
               {"gpu1", "gpu1", "gpu1", "", {}},
               {"gpu2", "gpu2", "gpu2", "", {}}};
  Collective c;
  c.type = CollectiveType::kAllReduce;
  c.ranks = {2, 0, 1};
  c.bytes = 8e6;
  append_collective(g, "allreduce.grad", c, "comm", {});
  ASSERT_EQ(g.ops.size(), 1u);
  ASSERT_EQ(g.ops[0].device, 2);  // queued on the group's first rank only
  RunResult r;
  r.timeline = {{0.001, 0.003}};
  std::string path = testing::make_temp_dir("trace") + "/trace.json";
  write_chrome_trace(path, g, r);

  const json trace = read_json(path);
  std::set<int> pids;
  std::set<std::pair<int, int>> named_threads;
  for (const json& e : trace["traceEvents"]) {
    const std::pair<int, int> track{e["pid"].get<int>(), e["tid"].get<int>()};
    if (e["name"] == "thread_name") named_threads.insert(track);
    if (e["ph"] != "X") continue;
    pids.insert(e["pid"].get<int>());
    EXPECT_EQ(e["name"], "allreduce.grad");
    EXPECT_EQ(e["ts"], 1000.0);
    EXPECT_EQ(e["dur"], 2000.0);
    EXPECT_EQ(e["args"]["kind"], "collective");
    EXPECT_EQ(e["args"]["collective"], collective_type_name(CollectiveType::kAllReduce));
    EXPECT_EQ(e["args"]["bytes"], 8e6);
    EXPECT_EQ(e["args"]["ranks"], 3);
    EXPECT_TRUE(named_threads.count(track)) << "event on an unnamed track";
  }
  EXPECT_EQ(pids, (std::set<int>{1, 2, 3}));  // every rank's process, not only gpu2's
}

TEST(ChromeTrace, ManyOpsStreamQuickly) {
  ExecutionGraph g;
  g.devices = {{"gpu0", "gpu0", "gpu0", "", {}}, {"gpu1", "gpu1", "gpu1", "", {}}};
  RunResult r;
  const size_t n = 200000;
  for (size_t i = 0; i < n; ++i) {
    Op op;
    op.name = "op" + std::to_string(i);
    op.device = static_cast<int>(i % 2);
    op.phase = "forward";
    g.ops.push_back(op);
    r.timeline.push_back({i * 1e-6, i * 1e-6 + 1e-6});
  }
  std::string dir = testing::make_temp_dir("trace");
  std::string path = dir + "/big.json";
  write_chrome_trace(path, g, r);
  json trace = read_json(path);
  EXPECT_EQ(trace["traceEvents"].size(), n + 2 * 2 + 2 * 2);
  EXPECT_EQ(trace["traceEvents"].back()["ts"], static_cast<double>(n - 1));
}

// g0..g3 and a ring all-reduce of 4 MB in ring order 0 -> 2 -> 1 -> 3, two chunks per block.
ExecutionGraph ring_graph() {
  ExecutionGraph g;
  for (int i = 0; i < 4; ++i) {
    std::string name = "g" + std::to_string(i);
    g.devices.push_back({name, name, name, "", {}});
  }
  Collective c;
  c.type = CollectiveType::kAllReduce;
  c.algo = CollectiveAlgo::kRing;
  c.ranks = {0, 2, 1, 3};
  c.bytes = 4e6;
  c.chunks = 2;
  append_collective(g, "allreduce.grad", std::move(c), "comm", {});
  return g;
}

// Events of one thread must not overlap: viewers only nest complete events.
void expect_no_overlap(std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> by) {
  for (auto& [track, spans] : by) {
    std::sort(spans.begin(), spans.end());
    for (size_t i = 1; i < spans.size(); ++i)
      EXPECT_GE(spans[i].first, spans[i - 1].second)
          << "pid " << track.first << " tid " << track.second;
  }
}

TEST(ChromeTrace, EachRanksFlowsShowOnItsOwnTrack) {
  ExecutionGraph g = ring_graph();
  ReplayOptions opt;
  opt.record_flows = true;
  RunResult r = replay_isolated(testing::star_platform(4, 10e9, 1e-6), g, opt);
  ASSERT_EQ(r.flows.size(), 48u);  // 2 (n - 1) steps x n ranks x 2 chunks
  std::string path = testing::make_temp_dir("trace") + "/trace.json";
  write_chrome_trace(path, g, r);

  const json trace = read_json(path);
  EXPECT_EQ(trace["otherData"]["comm_steps_recorded"], 48);
  EXPECT_EQ(trace["otherData"]["comm_steps_issued"], 48);
  EXPECT_FALSE(trace["otherData"].contains("comm_steps_left_out"));
  std::map<std::pair<int, int>, std::string> thread_names;
  for (const json& e : trace["traceEvents"])
    if (e["name"] == "thread_name") thread_names[{e["pid"], e["tid"]}] = e["args"]["name"];
  const std::map<int, std::string> next = {{1, "g2"}, {3, "g1"}, {2, "g3"}, {4, "g0"}};  // by pid
  std::map<int, int> per_pid;
  int collective_events = 0;
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> spans;
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] != "X") continue;
    if (e["args"]["kind"] == "collective") {
      ++collective_events;
      continue;
    }
    ASSERT_EQ(e["cat"], "comm_step");
    const int pid = e["pid"];
    const std::pair<int, int> track{pid, e["tid"].get<int>()};
    ++per_pid[pid];
    EXPECT_EQ(thread_names[track].rfind("comm steps", 0), 0u) << thread_names[track];
    EXPECT_EQ(e["name"], "allreduce to " + next.at(pid));
    EXPECT_EQ(e["args"]["kind"], "flow");
    EXPECT_EQ(e["args"]["collective"], "allreduce");
    EXPECT_EQ(e["args"]["op"], "allreduce.grad");
    EXPECT_EQ(e["args"]["peer"], next.at(pid));
    EXPECT_EQ(e["args"]["bytes"], 0.5e6);  // 4 MB / 4 blocks / 2 chunks
    spans[track].push_back({e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>()});
  }
  EXPECT_EQ(collective_events, 4);  // the per-op events stay: the collective on every rank
  EXPECT_EQ(per_pid, (std::map<int, int>{{1, 12}, {2, 12}, {3, 12}, {4, 12}}));
  expect_no_overlap(spans);
}

TEST(ChromeTrace, OverlappingFlowsOfARankTakeSeparateLanes) {
  ExecutionGraph g = ring_graph();
  RunResult r;
  r.timeline = {{0.0, 4e-3}};
  // g0 sends three flows: [0, 2], [1, 3] and [2, 4] ms. The first and third share a lane.
  r.flows = {{0.0, 2e-3, 1, 0, 2, 0, 0}, {1e-3, 3e-3, 1, 0, 2, 0, 1}, {2e-3, 4e-3, 1, 0, 2, 0, 2}};
  r.flows_issued = 3;
  std::string path = testing::make_temp_dir("trace") + "/trace.json";
  write_chrome_trace(path, g, r);
  const json trace = read_json(path);
  std::map<int, std::string> lanes;  // tid -> thread name on g0
  for (const json& e : trace["traceEvents"])
    if (e["name"] == "thread_name" && e["pid"] == 1) lanes[e["tid"]] = e["args"]["name"];
  std::vector<std::string> lane_of;
  for (const json& e : trace["traceEvents"])
    if (e["ph"] == "X" && e["cat"] == "comm_step") lane_of.push_back(lanes[e["tid"]]);
  EXPECT_EQ(lane_of, (std::vector<std::string>{"comm steps", "comm steps:1", "comm steps"}));
}

TEST(ChromeTrace, FlowsOutOfStartOrderStillGetLanesByStart) {
  ExecutionGraph g = ring_graph();
  RunResult r;
  r.timeline = {{0.0, 4e-3}};
  // Listed [0, 3], [0, 1], [2, 2.5], [4, 5], [2.1, 2.2] ms. Taken in that order, lane 1 would
  // be free again after [2, 2.5] ended "before" [4, 5], and [2.1, 2.2] would land on it.
  auto flow = [](double from, double to) { return FlowRecord{from, to, 1, 0, 2, 0, 0}; };
  r.flows = {flow(0, 3e-3), flow(0, 1e-3), flow(2e-3, 2.5e-3), flow(4e-3, 5e-3),
             flow(2.1e-3, 2.2e-3)};
  r.flows_issued = 5;
  std::string path = testing::make_temp_dir("trace") + "/trace.json";
  write_chrome_trace(path, g, r);
  const json trace = read_json(path);
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> spans;
  for (const json& e : trace["traceEvents"])
    if (e["ph"] == "X" && e["cat"] == "comm_step")
      spans[{e["pid"], e["tid"]}].push_back(
          {e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>()});
  EXPECT_EQ(spans.size(), 3u);  // three flows overlap at 2.1 ms
  expect_no_overlap(spans);
}

TEST(ChromeTrace, FlowsLeftOutAreSaidInTheMetadataAndWhereTheyBegin) {
  ExecutionGraph g = ring_graph();
  RunResult r;
  r.timeline = {{0.0, 4e-3}};
  r.flows = {{0.0, 1e-3, 1, 0, 2, 0, 0}, {1e-3, 2e-3, 1, 2, 1, 0, 0}};
  r.flows_issued = 5;  // the replay's cap kept the first two
  std::string path = testing::make_temp_dir("trace") + "/trace.json";
  write_chrome_trace(path, g, r);
  const json trace = read_json(path);
  const std::string note = trace["otherData"]["comm_steps_left_out"];
  EXPECT_NE(note.find("3 of 5 collective flows left out"), std::string::npos) << note;
  int marks = 0;
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] != "i") continue;
    ++marks;
    EXPECT_EQ(e["name"], note);
    EXPECT_EQ(e["s"], "g");
    EXPECT_EQ(e["ts"], 1000.0);  // the last recorded flow's start: the rest start after it
  }
  EXPECT_EQ(marks, 1);
}

TEST(ChromeTrace, RejectsAFlowOfAnUnknownDeviceOrOp) {
  ExecutionGraph g = ring_graph();
  RunResult r;
  r.timeline = {{0.0, 4e-3}};
  r.flows = {{0.0, 1e-3, 1, 0, 9, 0, 0}};
  std::string dir = testing::make_temp_dir("trace");
  EXPECT_THROW(write_chrome_trace(dir + "/a.json", g, r), std::invalid_argument);
  r.flows = {{0.0, 1e-3, 1, 0, 2, 5, 0}};
  EXPECT_THROW(write_chrome_trace(dir + "/b.json", g, r), std::invalid_argument);
  EXPECT_FALSE(fs::exists(dir + "/a.json"));
}

}  // namespace
}  // namespace orrery
