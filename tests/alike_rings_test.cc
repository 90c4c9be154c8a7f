// Alike rings run as one (engine/alike_traffic.h): the partition check by hand, and whole runs
// with the aggregation on and off, which must agree bit for bit on every date.
#include <gtest/gtest.h>

#include "engine/alike_traffic.h"
#include "scenario/scenario_run.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

bool all_alike(int, int) { return true; }
bool none_apart(int) { return false; }

// Places of two copies each: routes[t] of place p.
std::vector<AlikePlace> places(const std::vector<std::vector<std::vector<int>>>& routes) {
  std::vector<AlikePlace> out(routes.size());
  for (size_t p = 0; p < routes.size(); ++p)
    for (const auto& r : routes[p]) out[p].routes.push_back(&r);
  return out;
}

TEST(AlikeTraffic, CopiesOnLinksOfTheirOwnEachCountOnce) {
  // Two rails: copy 1 crosses links 10, 11 where ring 0 crosses 0, 1 (and 12, 13 for 2, 3).
  const std::vector<std::vector<std::vector<int>>> r = {{{0, 1}, {10, 11}}, {{2, 3}, {12, 13}}};
  LinkClasses classes;
  std::vector<CountedLinks> out;
  ASSERT_TRUE(aggregate_alike(places(r), all_alike, none_apart, &classes, &out));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].links, (std::vector<int>{0, 1}));
  EXPECT_EQ(out[0].counts, (std::vector<int>{1, 1}));
  EXPECT_EQ(out[1].links, (std::vector<int>{2, 3}));
  EXPECT_EQ(classes.canonical[11], 1);
  EXPECT_EQ(classes.size[1], 2);
  EXPECT_TRUE(classes.merged(13));
  EXPECT_FALSE(classes.merged(5));
  EXPECT_EQ(classes.merged_links, 8);
}

TEST(AlikeTraffic, ALinkTheCopiesShareCountsEveryOne) {
  // Both copies cross uplink 7: its class is itself, with two users at each place.
  const std::vector<std::vector<std::vector<int>>> r = {{{0, 7}, {10, 7}}, {{2, 8}, {12, 8}}};
  LinkClasses classes;
  std::vector<CountedLinks> out;
  ASSERT_TRUE(aggregate_alike(places(r), all_alike, none_apart, &classes, &out));
  EXPECT_EQ(out[0].links, (std::vector<int>{0, 7}));
  EXPECT_EQ(out[0].counts, (std::vector<int>{1, 2}));
  EXPECT_FALSE(classes.merged(7));
  EXPECT_EQ(classes.merged_links, 4);  // {0, 10} and {2, 12}
}

TEST(AlikeTraffic, ALinkCrossedByTwoOfAPlacesFlowsWhereItsClassmateCarriesNoneIsRefused) {
  // Place 0 maps 9 to 9, place 1 maps 9 to 10: one class {9, 10}, but place 0's two flows
  // both cross 9 and none crosses 10, so the copies would not get ring 0's rate.
  const std::vector<std::vector<std::vector<int>>> r = {{{1, 9}, {2, 9}}, {{3, 9}, {4, 10}}};
  LinkClasses classes;
  std::vector<CountedLinks> out;
  EXPECT_FALSE(aggregate_alike(places(r), all_alike, none_apart, &classes, &out));
  EXPECT_TRUE(out.empty());
  for (int c : classes.canonical) EXPECT_EQ(c, -1);
}

TEST(AlikeTraffic, UnlikeLinksOrRoutesAreRefused) {
  LinkClasses classes;
  std::vector<CountedLinks> out;
  const std::vector<std::vector<std::vector<int>>> longer = {{{0, 1}, {10, 11, 12}}};
  EXPECT_FALSE(aggregate_alike(places(longer), all_alike, none_apart, &classes, &out));
  const std::vector<std::vector<std::vector<int>>> r = {{{0, 1}, {10, 11}}};
  auto slower_11 = [](int a, int b) { return a != 11 && b != 11; };
  EXPECT_FALSE(aggregate_alike(places(r), slower_11, none_apart, &classes, &out));
  // The collective's other flows cross 11: it may not be merged with 1.
  auto apart_11 = [](int l) { return l == 11; };
  EXPECT_FALSE(aggregate_alike(places(r), all_alike, apart_11, &classes, &out));
  EXPECT_TRUE(aggregate_alike(places(r), all_alike, none_apart, &classes, &out));
}

TEST(AlikeTraffic, ClassesMustAgreeWithTheOnesMadeBefore) {
  LinkClasses classes;
  std::vector<CountedLinks> out;
  const std::vector<std::vector<std::vector<int>>> first = {{{0}, {10}}};
  ASSERT_TRUE(aggregate_alike(places(first), all_alike, none_apart, &classes, &out));
  // The same classes again (another collective of the same shape): fine, nothing newly merged.
  ASSERT_TRUE(aggregate_alike(places(first), all_alike, none_apart, &classes, &out));
  EXPECT_EQ(classes.merged_links, 2);
  // Link 10 with 20 now: 10's class was {0, 10}.
  const std::vector<std::vector<std::vector<int>>> other = {{{20}, {10}}};
  EXPECT_FALSE(aggregate_alike(places(other), all_alike, none_apart, &classes, &out));
  EXPECT_EQ(classes.canonical[20], -1);
}

struct Both {
  RunResult expanded, aggregated;
};

Both run_both(const Scenario& sc) {
  RunOptions opt;
  opt.isolated = true;
  opt.replay.record_timeline = false;
  opt.replay.link_usage_bins = 64;
  Both b;
  b.aggregated = run_scenario(sc, opt).result;
  opt.replay.aggregate_alike = false;
  b.expanded = run_scenario(sc, opt).result;
  return b;
}

Both run_both(const std::string& yaml) {
  const std::string dir = testing::make_temp_dir("alike");
  testing::write_file(dir + "/s.yaml", yaml);
  return run_both(load_scenario(dir + "/s.yaml", {}));
}

// The same dates to the bit, each link's bytes and usage to its last bits: a link the copies
// share (a GPU's NVLink port, which the chains of every channel cross at different places)
// sums its users' rates in another order.
void expect_same_dates(const Both& b) {
  const RunResult &a = b.expanded, &g = b.aggregated;
  EXPECT_EQ(a.makespan, g.makespan);
  ASSERT_EQ(a.devices.size(), g.devices.size());
  for (size_t d = 0; d < a.devices.size(); ++d)
    for (int c = 0; c < kNumStreamClasses; ++c)
      EXPECT_EQ(a.devices[d].busy[c], g.devices[d].busy[c]) << a.devices[d].name;
  ASSERT_EQ(a.links.size(), g.links.size());
  for (size_t l = 0; l < a.links.size(); ++l) {
    EXPECT_NEAR(a.links[l].bytes, g.links[l].bytes, 1e-12 * a.links[l].bytes);
    ASSERT_EQ(a.links[l].utilization.size(), g.links[l].utilization.size());
    for (size_t j = 0; j < a.links[l].utilization.size(); ++j)
      EXPECT_NEAR(a.links[l].utilization[j], g.links[l].utilization[j], 1e-12)
          << a.links[l].name << " bin " << j;
  }
  EXPECT_LE(g.activities, a.activities);
}

// Every date the same to the bit, every link's bytes to rounding (the copies' bytes are summed
// per route), its usage the same.
void expect_same(const Both& b) {
  expect_same_dates(b);
  const RunResult &a = b.expanded, &g = b.aggregated;
  ASSERT_EQ(a.devices.size(), g.devices.size());
  for (size_t d = 0; d < a.devices.size(); ++d)
    EXPECT_EQ(a.devices[d].exposed_comm, g.devices[d].exposed_comm) << a.devices[d].name;
  ASSERT_EQ(a.links.size(), g.links.size());
  for (size_t l = 0; l < a.links.size(); ++l)
    EXPECT_EQ(a.links[l].utilization, g.links[l].utilization) << a.links[l].name;
}

TEST(AlikeRings, HierarchicalRingsAcrossServersRunAsOneWithTheSameDates) {
  // ResNet-50 data parallel on four DGX A100 (fat tree): eight rings across the servers, one
  // per local rank, each through its own GPU's PCIe switch port and NIC.
  const Both b = run_both(
      "name: alike-hierarchical\n"
      "platform: {preset: dgx-a100, servers: 4}\n"
      "workload: {type: model, model: resnet50, batch: 64}\n"
      "strategy: {type: allreduce, bucket: 25MiB, collectives: {algo: hierarchical}}\n");
  expect_same(b);
  // Seven of the eight rings' flows (and their step delays) are gone; on four servers the rings
  // inside them are most of the rest.
  EXPECT_LT(b.aggregated.activities, b.expanded.activities * 0.85);
}

TEST(AlikeRings, RingChannelsRunAsOneWithTheSameDates) {
  // A ring all-reduce over two DGX H100 in NCCL's channels: channel k enters each server at
  // GPU k, so the channels are the first one turned by k GPUs.
  const Both b = run_both(
      "name: alike-channels\n"
      "platform: {preset: dgx-h100, servers: 2}\n"
      "workload: {type: model, model: resnet50, batch: 64}\n"
      "strategy: {type: allreduce, bucket: 25MiB,\n"
      "           collectives: {algo: ring, protocol: simple}}\n");
  expect_same(b);
  EXPECT_LT(b.aggregated.activities, b.expanded.activities / 2);
}

TEST(AlikeRings, NvlsTreeRingsAcrossServersRunAsOneWithTheSameDates) {
  // NVLS_TREE on four DGX H100: NVLink SHARP inside the servers (fans to the switch, which the
  // check keeps apart from the rings), a ring per local rank across them.
  const Both b = run_both(
      "name: alike-nvls-tree\n"
      "platform: {preset: dgx-h100, servers: 4}\n"
      "workload: {type: model, model: resnet50, batch: 64}\n"
      "strategy: {type: allreduce, bucket: 25MiB,\n"
      "           collectives: {algo: nvls_tree, protocol: simple}}\n");
  expect_same(b);
  EXPECT_LT(b.aggregated.activities, b.expanded.activities);
}

TEST(AlikeRings, TreeChannelsRunAsOneWithTheSameDates) {
  // A tree all-reduce over eight DGX H100 on NCCL's sixteen tree channels: channel k's chains
  // head every server at GPU k and its NIC, channel 8 + k runs the mirrored tree over the same
  // chains. The first chain's two trees stand for all.
  const Both b = run_both(
      "name: alike-trees\n"
      "platform: {preset: dgx-h100, servers: 8}\n"
      "workload: {type: model, model: resnet50, batch: 64}\n"
      "strategy: {type: allreduce, bucket: 25MiB,\n"
      "           collectives: {algo: tree}}\n");
  expect_same_dates(b);
  EXPECT_LT(b.aggregated.activities, b.expanded.activities / 2);
}

TEST(AlikeRings, EveryPresetGivesTheSameDatesWhetherItAggregatesOrNot) {
  // Where the check declines (DGX-1's ring over the hybrid cube mesh, PCIe servers) the runs
  // are the same run; where it aggregates, the same dates to the bit and each link's usage to
  // its last bits (a link several copies share adds one rate times their count).
  // Trees too, across servers (NCCL's channels of a tree all-reduce).
  for (const char* preset : {"dgx-a100", "dgx-b200", "dgx1-v100", "dgx2-v100", "hgx-h100-roce",
                             "pcie-switch-server", "gb200-nvl72"})
    for (const char* algo : {"hierarchical", "ring", "tree"}) {
      SCOPED_TRACE(std::string(preset) + " " + algo);
      const int servers = std::string(preset) == "gb200-nvl72" ? 2 : 4;
      const Both b =
          run_both("name: alike-" + std::string(preset) + "\n" + "platform: {preset: " + preset +
                   ", servers: " + std::to_string(servers) + "}\n" +
                   "workload: {type: model, model: resnet50, batch: 64}\n" +
                   "strategy: {type: allreduce, bucket: 25MiB,\n" +
                   "           collectives: {algo: " + algo + ", protocol: simple}}\n");
      expect_same_dates(b);
      // A GB200 NVL72 rack's ring channels across racks, 24 of its 72 turns (NCCL's limit of
      // 32, spread), still run as one.
      if (std::string(preset) == "gb200-nvl72" && std::string(algo) != "hierarchical")
        EXPECT_LT(b.aggregated.activities, b.expanded.activities / 2) << algo;
    }
}

TEST(AlikeRings, OtherTrafficOnMergedLinksMeansEveryRingRuns) {
  // Mixtral's data-parallel rings across servers would run as one, but its expert all-to-alls
  // cross the same NICs while they are in flight: the replay runs again with every ring, and
  // gives what it gives without aggregating, flows included.
  const Both b =
      run_both(load_scenario(testing::source_path("scenarios/llm/mixtral-8x7b-16xh100.yaml"), {}));
  expect_same(b);
  EXPECT_EQ(b.aggregated.activities, b.expanded.activities);
}

}  // namespace
}  // namespace orrery
