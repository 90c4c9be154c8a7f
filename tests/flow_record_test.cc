// The flows a replay records for collectives (engine/flow_record.h), checked against the ring
// algorithm worked out by hand, and carried through the child -> parent pipe
// (engine/run_result_io.h).
#include "engine/flow_record.h"

#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <utility>

#include "engine/replay.h"
#include "engine/run_result_io.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

constexpr double kBandwidth = 10e9;  // bytes/s per link and direction
constexpr double kLatency = 1e-6;
constexpr double kBytes = 4e6;

// Ring all-reduce of kBytes over g0..g3 in ring order 0 -> 2 -> 1 -> 3 -> 0, each block in
// `chunks` chunks, after a 1 ms compute op on g0.
ExecutionGraph ring_allreduce(int chunks) {
  ExecutionGraph g;
  for (int i = 0; i < 4; ++i) {
    std::string name = "g" + std::to_string(i);
    g.devices.push_back({name, name, name, "", {}});
  }
  Op warmup;
  warmup.name = "warmup";
  warmup.device = 0;
  warmup.duration = 1e-3;
  g.ops.push_back(warmup);
  Collective c;
  c.type = CollectiveType::kAllReduce;
  c.algo = CollectiveAlgo::kRing;
  c.ranks = {0, 2, 1, 3};
  c.bytes = kBytes;
  c.chunks = chunks;
  append_collective(g, "allreduce", std::move(c), "comm", {0});
  return g;
}

RunResult replay_recording(const ExecutionGraph& g, int64_t max_flows = 1000000) {
  ReplayOptions opt;
  opt.record_flows = true;
  opt.max_recorded_flows = max_flows;
  opt.link_usage_bins = 64;
  return replay_isolated(testing::star_platform(4, kBandwidth, kLatency), g, opt);
}

TEST(FlowRecord, RingAllReduceRecordsEveryStepOfEveryRank) {
  const int n = 4, chunks = 2;
  ExecutionGraph g = ring_allreduce(chunks);
  RunResult r = replay_recording(g);
  // 2(n - 1) steps, each rank sends every chunk of one block per step: 2 x 3 x 4 x 2 = 48 flows
  // of kBytes / n / chunks = 0.5 MB.
  const size_t want = 2 * (n - 1) * n * chunks;
  ASSERT_EQ(r.flows.size(), want);
  EXPECT_EQ(r.flows_issued, static_cast<int64_t>(want));
  const std::map<int, int> next = {{0, 2}, {2, 1}, {1, 3}, {3, 0}};
  std::map<int, std::vector<uint32_t>> seqs;
  double previous_start = 0;
  for (const FlowRecord& f : r.flows) {
    EXPECT_EQ(f.op, 1);
    EXPECT_EQ(f.dst, next.at(f.src)) << "flow from g" << f.src;
    EXPECT_DOUBLE_EQ(f.bytes, kBytes / n / chunks);
    // Nothing moves before the warm-up op ends; a flow lasts at least its two links' latency
    // plus its bytes at full bandwidth; all end within the collective.
    EXPECT_GE(f.start, 1e-3 - 1e-12);
    EXPECT_GE(f.end - f.start, 2 * kLatency + f.bytes / kBandwidth - 1e-12);
    EXPECT_LE(f.end, r.timeline[1].end + 1e-12);
    EXPECT_GE(f.start, previous_start);  // start order
    previous_start = f.start;
    seqs[f.src].push_back(f.seq);
  }
  ASSERT_EQ(seqs.size(), 4u);
  for (const auto& [src, s] : seqs) {
    ASSERT_EQ(s.size(), want / n) << "g" << src;
    for (size_t k = 0; k < s.size(); ++k) EXPECT_EQ(s[k], k) << "g" << src;
  }
}

TEST(FlowRecord, OneChunkSeqIsTheRingStep) {
  // With one chunk, rank i's step k waits for its step k - 1, so its k-th flow is step k:
  // flows of one step start together and the steps follow one another.
  RunResult r = replay_recording(ring_allreduce(1));
  ASSERT_EQ(r.flows.size(), 24u);
  for (size_t i = 0; i < r.flows.size(); ++i) EXPECT_EQ(r.flows[i].seq, i / 4) << "flow " << i;
}

TEST(FlowRecord, CapKeepsTheFirstFlowsAndCountsThemAll) {
  RunResult all = replay_recording(ring_allreduce(2));
  RunResult capped = replay_recording(ring_allreduce(2), 10);
  ASSERT_EQ(capped.flows.size(), 10u);
  EXPECT_EQ(capped.flows_issued, 48);
  for (size_t i = 0; i < 10; ++i) {
    EXPECT_EQ(capped.flows[i].start, all.flows[i].start);
    EXPECT_EQ(capped.flows[i].end, all.flows[i].end);
    EXPECT_EQ(capped.flows[i].src, all.flows[i].src);
  }
  EXPECT_EQ(capped.makespan, all.makespan);  // recording changes nothing simulated
}

TEST(FlowRecord, OffByDefault) {
  RunResult r = replay_isolated(testing::star_platform(4, kBandwidth, kLatency), ring_allreduce(2),
                                ReplayOptions{});
  EXPECT_TRUE(r.flows.empty());
  EXPECT_EQ(r.flows_issued, 0);
  EXPECT_EQ(r.link_usage_bin_width, 0.0);
  for (const LinkStats& l : r.links) EXPECT_TRUE(l.utilization.empty()) << l.name;
}

TEST(FlowRecord, RecorderNumbersEachSourcesFlowsPerCollective) {
  FlowRecorder rec(true, 100);
  rec.start(0, 7, 1, 2, 10, 0.5);
  rec.start(1, 7, 2, 1, 10, 0.5);
  rec.end(0, 0.75);
  rec.start(0, 7, 1, 2, 20, 0.75);  // slot 0 reused
  rec.start(2, 9, 1, 2, 30, 0.8);   // another collective: numbered from 0 again
  rec.end(1, 1.0);
  rec.end(0, 1.25);
  rec.end(2, 1.5);
  RunResult r;
  rec.finish(0.5, &r);
  ASSERT_EQ(r.flows.size(), 4u);
  EXPECT_EQ(r.flows_issued, 4);
  EXPECT_EQ(r.flows[0].seq, 0u);
  EXPECT_EQ(r.flows[1].seq, 0u);
  EXPECT_EQ(r.flows[2].seq, 1u);
  EXPECT_EQ(r.flows[3].seq, 0u);
  EXPECT_DOUBLE_EQ(r.flows[0].end, 0.25);  // times from t0 = 0.5
  EXPECT_DOUBLE_EQ(r.flows[2].start, 0.25);
  EXPECT_DOUBLE_EQ(r.flows[2].end, 0.75);
  EXPECT_EQ(r.flows[2].bytes, 20);
}

TEST(FlowRecord, RoundTripsThroughRunResultIo) {
  RunResult r = replay_recording(ring_allreduce(2));
  ASSERT_FALSE(r.flows.empty());
  ASSERT_GT(r.link_usage_bin_width, 0.0);
  RunResult back = deserialize_run_result(serialize_run_result(r));
  ASSERT_EQ(back.flows.size(), r.flows.size());
  for (size_t i = 0; i < r.flows.size(); ++i) {
    EXPECT_EQ(back.flows[i].start, r.flows[i].start);
    EXPECT_EQ(back.flows[i].end, r.flows[i].end);
    EXPECT_EQ(back.flows[i].bytes, r.flows[i].bytes);
    EXPECT_EQ(back.flows[i].src, r.flows[i].src);
    EXPECT_EQ(back.flows[i].dst, r.flows[i].dst);
    EXPECT_EQ(back.flows[i].op, r.flows[i].op);
    EXPECT_EQ(back.flows[i].seq, r.flows[i].seq);
  }
  EXPECT_EQ(back.flows_issued, r.flows_issued);
  EXPECT_EQ(back.link_usage_bin_width, r.link_usage_bin_width);
  ASSERT_EQ(back.links.size(), r.links.size());
  for (size_t i = 0; i < r.links.size(); ++i)
    EXPECT_EQ(back.links[i].utilization, r.links[i].utilization) << r.links[i].name;
  // A result cut anywhere inside the new blocks is refused, not misread.
  const std::string bytes = serialize_run_result(r);
  for (size_t cut : {bytes.size() - 1, bytes.size() - 17, bytes.size() - 100})
    EXPECT_THROW(deserialize_run_result(bytes.substr(0, cut)), std::runtime_error) << cut;
}

}  // namespace
}  // namespace orrery
