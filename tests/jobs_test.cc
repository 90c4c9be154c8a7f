// Several jobs on one platform (engine/job_compose.h, strategies/job_placement.h,
// scenario/jobs.h): expectations computed by hand from link bandwidths and GPU counts.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "common/errors.h"
#include "engine/job_compose.h"
#include "engine/replay.h"
#include "platforms/platform_spec.h"
#include "results/h5_store.h"
#include "scenario/gpu_speed.h"
#include "scenario/job_report.h"
#include "scenario/scenario.h"
#include "strategies/job_placement.h"
#include "test_util.h"

namespace orrery {
namespace {

// Two switches joined by one duplex uplink of 1 GB/s; hosts a0, b0 under s0 and a1, b1 under
// s1, each on a link 100 times faster, so the uplink is the only bottleneck.
constexpr double kUplink = 1e9;
PlatformSource two_switches() {
  PlatformSource p;
  Topology& t = p.topology;
  t.name = "two-switches";
  t.routers = {"s0", "s1"};
  t.links.push_back({"uplink", kUplink, 1e-6, true, "ethernet"});
  t.edges.push_back({"s0", "s1", "uplink"});
  for (const char* h : {"a0", "b0", "a1", "b1"}) {
    t.hosts.push_back({h, 1e12, 1, "gpu", {}});
    t.links.push_back({std::string(h) + "_link", 100 * kUplink, 1e-7, true, "pcie"});
    t.edges.push_back({h, h[1] == '0' ? "s0" : "s1", std::string(h) + "_link"});
  }
  return p;
}

// One ring all-reduce of `bytes` between two GPUs (bytes-only: no protocol overheads).
ExecutionGraph allreduce_between(const std::string& h0, const std::string& h1, double bytes) {
  ExecutionGraph g;
  g.devices = {{"r0", h0, h0, h0, {}}, {"r1", h1, h1, h1, {}}};
  Collective c;
  c.type = CollectiveType::kAllReduce;
  c.algo = CollectiveAlgo::kRing;
  c.ranks = {0, 1};
  c.bytes = bytes;
  append_collective(g, "allreduce", std::move(c), "comm", {});
  return g;
}

ReplayOptions timeline() {
  ReplayOptions o;
  o.record_timeline = true;
  return o;
}

double alone_time(const PlatformSource& p, const ExecutionGraph& composed, const JobSpan& s) {
  RunResult r = replay_isolated(p, extract_job(composed, s), timeline());
  return iteration_ends(r, alone_span(s)).back() - s.start;
}

TEST(Jobs, TwoAllReducesOnOneUplinkEachGetHalfItsBandwidth) {
  // A two-rank ring all-reduce of S bytes sends S/2 each way twice (reduce-scatter, then
  // all-gather): S / B alone on a duplex link of B bytes/s; 2 S / B when a second job's
  // identical all-reduce shares the link (latencies, a few microseconds, are within 1e-4).
  const double S = 1e9;
  const PlatformSource p = two_switches();
  std::vector<JobSpan> spans;
  const ExecutionGraph all = compose_jobs({{"a", allreduce_between("a0", "a1", S), 1, 0.0},
                                           {"b", allreduce_between("b0", "b1", S), 1, 0.0}},
                                          &spans);
  const RunResult shared = replay_isolated(p, all, timeline());
  for (const JobSpan& s : spans) {
    EXPECT_NEAR(alone_time(p, all, s), S / kUplink, 1e-4 * S / kUplink) << s.name;
    EXPECT_NEAR(iteration_ends(shared, s).back(), 2 * S / kUplink, 1e-4 * S / kUplink) << s.name;
  }
}

TEST(Jobs, JobsOnDisjointLinksDoNotSlowEachOther) {
  // a0 - b0 under s0 and a1 - b1 under s1: no link in common, the same times to the bit.
  const double S = 1e8;
  const PlatformSource p = two_switches();
  std::vector<JobSpan> spans;
  const ExecutionGraph all = compose_jobs({{"a", allreduce_between("a0", "b0", S), 2, 0.0},
                                           {"b", allreduce_between("a1", "b1", S), 2, 0.0}},
                                          &spans);
  const RunResult shared = replay_isolated(p, all, timeline());
  for (const JobSpan& s : spans) {
    const RunResult alone = replay_isolated(p, extract_job(all, s), timeline());
    EXPECT_EQ(iteration_ends(shared, s), iteration_ends(alone, alone_span(s))) << s.name;
  }
}

TEST(Jobs, IterationsFollowEachOtherPerDeviceAfterTheStartOffset) {
  // Per device: forward (1 ms) then update (2 ms); device 1's forward waits for device 0's.
  ExecutionGraph g;
  g.devices = {{"g0", "a0", "a0", "a0", {}}, {"g1", "a1", "a1", "a1", {}}};
  auto op = [&](const char* name, int device, double duration, std::vector<int> deps) {
    Op o;
    o.name = name;
    o.device = device;
    o.duration = duration;
    o.deps = std::move(deps);
    g.ops.push_back(o);
  };
  op("f0", 0, 1e-3, {});
  op("u0", 0, 2e-3, {0});
  op("f1", 1, 1e-3, {0});
  op("u1", 1, 2e-3, {2});
  std::vector<JobSpan> spans;
  const ExecutionGraph all = compose_jobs({{"j", g, 3, 0.5}}, &spans);
  ASSERT_EQ(spans.size(), 1u);
  const JobSpan& s = spans[0];
  ASSERT_EQ(all.ops.size(), 1u + 3 * 4);
  EXPECT_EQ(all.ops[0].name, "j/start");
  EXPECT_EQ(all.ops[0].duration, 0.5);
  EXPECT_EQ(all.devices[1].name, "j/g1");
  EXPECT_EQ(all.ops[s.iteration_op(0)].deps, std::vector<int>{0});  // f0 waits for the start
  EXPECT_EQ(all.ops[s.iteration_op(1)].name, "j/it1/f0");
  // Iteration 1's f0 (no dependency of its own) waits for iteration 0's last op on device 0.
  EXPECT_EQ(all.ops[s.iteration_op(1)].deps, std::vector<int>{s.iteration_op(0) + 1});
  // f1 keeps its own dependency, rebased to iteration 1.
  EXPECT_EQ(all.ops[s.iteration_op(1) + 2].deps, std::vector<int>{s.iteration_op(1)});
  // Device 0: 3 ms per iteration; device 1 ends 1 ms after (f0 1 ms, then f1 1 ms, u1 2 ms),
  // and its next forward waits for device 0's f0 anyway: iteration k ends at 0.5 + 3k + 4 ms.
  const RunResult r = replay_isolated(two_switches(), all, timeline());
  const std::vector<double> ends = iteration_ends(r, s);
  ASSERT_EQ(ends.size(), 3u);
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(ends[k], 0.5 + 3e-3 * k + 4e-3, 1e-12) << k;
  // The job alone is the same graph renumbered from 0.
  const ExecutionGraph alone = extract_job(all, s);
  ASSERT_EQ(alone.ops.size(), all.ops.size());
  EXPECT_EQ(alone.ops[5].deps, all.ops[5].deps);
}

TEST(Jobs, ASecondJobAloneKeepsItsMirrorsOwnDevices) {
  // Device 1 mirrors device 0 (Device::mirrors): the second job's copy of it, device 3 of the
  // composition, mirrors device 2 there and device 0 again alone (the runs of each job alone
  // had replayed it with mirror 3 of a two-device graph).
  ExecutionGraph g = allreduce_between("a0", "a1", 8);
  g.devices[0].mirrors = {1};
  std::vector<JobSpan> spans;
  const ExecutionGraph all = compose_jobs({{"a", g, 1, 0}, {"b", g, 1, 0}}, &spans);
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_EQ(all.devices[2].mirrors, std::vector<int>{3});
  const ExecutionGraph alone = extract_job(all, spans[1]);
  ASSERT_EQ(alone.devices.size(), 2u);
  EXPECT_EQ(alone.devices[0].mirrors, std::vector<int>{1});
  EXPECT_TRUE(alone.devices[1].mirrors.empty());
}

TEST(Jobs, ComposeRefusesBadJobs) {
  ExecutionGraph g = allreduce_between("a0", "a1", 8);
  std::vector<JobSpan> spans;
  EXPECT_NE(testing::input_error_of([&] {
              compose_jobs({{"a", g, 1, 0}, {"a", g, 1, 0}}, &spans);
            }).find("job \"a\": a second job of that name"),
            std::string::npos);
  EXPECT_NE(testing::input_error_of([&] {
              compose_jobs({{"a", g, 0, 0}}, &spans);
            }).find("iterations must be at least 1"),
            std::string::npos);
  EXPECT_NE(testing::input_error_of([&] {
              compose_jobs({{"a", g, 1, -1}}, &spans);
            }).find("start offset"),
            std::string::npos);
}

// `servers` servers of 4 GPUs (GPU i on server i / 4, n<S>_gpu<k>), each with one CPU socket
// n<S>_cpu0; servers_per_domain consecutive servers share a switch domain.
ClusterLayout servers_of_four(int servers, int servers_per_domain) {
  ClusterLayout l;
  for (int s = 0; s < servers; ++s) {
    l.servers.push_back({{}, {"n" + std::to_string(s) + "_cpu0"}, {8}, s / servers_per_domain});
    for (int i = 0; i < 4; ++i) {
      l.servers[s].gpus.push_back(static_cast<int>(l.gpus.size()));
      const std::string h = "n" + std::to_string(s) + "_gpu" + std::to_string(i);
      l.gpus.push_back({h, "n" + std::to_string(s) + "_cpu0", s});
    }
  }
  return l;
}

PlacementRequest wants(const char* job, int gpus, PlacementPolicy p, uint64_t seed = 1) {
  PlacementRequest r;
  r.job = job;
  r.gpus = gpus;
  r.policy = p;
  r.seed = seed;
  return r;
}

TEST(JobPlacement, PackedFillsServersAndSpreadAlternates) {
  const ClusterLayout l = servers_of_four(2, 2);
  Placement p = place_jobs(
      l, {wants("a", 3, PlacementPolicy::kPacked), wants("b", 4, PlacementPolicy::kSpread)});
  EXPECT_EQ(p.gpus[0], (std::vector<int>{0, 1, 2}));
  // Free: 3 on server 0, 4..7 on server 1; one from each in turn.
  EXPECT_EQ(p.gpus[1], (std::vector<int>{3, 4, 5, 6}));
  EXPECT_EQ(p.free_gpus, 1);
  EXPECT_EQ(p.fragmented_gpus, 0);
  EXPECT_TRUE(p.unplaced.empty());
  // The sub-layout keeps the servers the job spans, renumbered.
  const ClusterLayout sub = sub_layout(l, p.gpus[1]);
  ASSERT_EQ(sub.servers.size(), 2u);
  EXPECT_EQ(sub.servers[0].gpus, std::vector<int>{0});
  EXPECT_EQ(sub.servers[1].gpus, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(sub.gpus[1].host, "n1_gpu0");
}

TEST(JobPlacement, FragmentationCountedByHand) {
  // 6 packed take server 0 and half of server 1; a job of 4 then waits with 2 GPUs free; a job
  // of 1 still fits after it. One GPU is left, idle while the job of 4 waits.
  const ClusterLayout l = servers_of_four(2, 2);
  Placement p = place_jobs(
      l, {wants("a", 6, PlacementPolicy::kPacked), wants("b", 4, PlacementPolicy::kPacked),
          wants("c", 1, PlacementPolicy::kSpread)});
  EXPECT_EQ(p.gpus[0], (std::vector<int>{0, 1, 2, 3, 4, 5}));
  EXPECT_TRUE(p.gpus[1].empty());
  EXPECT_EQ(p.gpus[2], std::vector<int>{6});
  ASSERT_EQ(p.unplaced.size(), 1u);
  EXPECT_EQ(p.unplaced[0], "b: needs 4 GPUs, 2 free");
  EXPECT_EQ(p.free_gpus, 1);
  EXPECT_EQ(p.fragmented_gpus, 1);
}

TEST(JobPlacement, RandomIsSeededAndExplicitListsMayNotOverlap) {
  const ClusterLayout l = servers_of_four(2, 2);
  const Placement a = place_jobs(l, {wants("r", 5, PlacementPolicy::kRandom, 7)});
  const Placement b = place_jobs(l, {wants("r", 5, PlacementPolicy::kRandom, 7)});
  EXPECT_EQ(a.gpus[0], b.gpus[0]);
  EXPECT_EQ(std::set<int>(a.gpus[0].begin(), a.gpus[0].end()).size(), 5u);
  // Over seeds, every GPU gets drawn: not a fixed subset.
  std::set<int> seen;
  for (uint64_t seed = 0; seed < 50; ++seed) {
    const Placement one = place_jobs(l, {wants("r", 1, PlacementPolicy::kRandom, seed)});
    seen.insert(one.gpus[0].begin(), one.gpus[0].end());
  }
  EXPECT_EQ(seen.size(), 8u);
  PlacementRequest x;
  x.job = "x";
  x.policy = PlacementPolicy::kExplicit;
  x.explicit_gpus = {1, 5};
  PlacementRequest y = x;
  y.job = "y";
  y.explicit_gpus = {5};
  EXPECT_NE(testing::input_error_of([&] {
              place_jobs(l, {x, y});
            }).find("job \"y\": GPU 5 (n1_gpu1) is already another job's"),
            std::string::npos);
  EXPECT_NE(testing::input_error_of([&] {
              place_jobs(l, {wants("z", 9, PlacementPolicy::kPacked)});
            }).find("needs 9 GPUs; the cluster has 8"),
            std::string::npos);
}

TEST(JobPlacement, TopologyAwareKeepsJobsInAServerThenInADomain) {
  // 4 servers of 4 GPUs; servers 0-1 on one leaf switch, 2-3 on another.
  const ClusterLayout l = servers_of_four(4, 2);
  const PlacementPolicy t = PlacementPolicy::kTopology;
  const Placement p = place_jobs(l, {wants("a", 2, t), wants("b", 3, t), wants("c", 2, t),
                                     wants("d", 6, t), wants("e", 3, t)});
  EXPECT_EQ(p.gpus[0], (std::vector<int>{0, 1}));     // all servers free: the first
  EXPECT_EQ(p.gpus[1], (std::vector<int>{4, 5, 6}));  // server 0 has 2 left: the next
  EXPECT_EQ(p.gpus[2], (std::vector<int>{2, 3}));     // the fullest server that holds 2
  // 6 fit no server; leaf 1 has 8 free: server 2 whole, then 2 from server 3's first GPUs.
  EXPECT_EQ(p.gpus[3], (std::vector<int>{8, 9, 10, 11, 12, 13}));
  // 3 free GPUs are left, in no one server or leaf: packed over the cluster.
  EXPECT_EQ(p.gpus[4], (std::vector<int>{7, 14, 15}));
  EXPECT_EQ(p.free_gpus, 0);
}

TEST(JobPlacement, ServerPolicyKeepsAJobInOneServerOrLetsItWait) {
  // 2 servers of 4: 3 + 3 take one server each; 2 more find 1 free in each and wait, with
  // the 2 free GPUs counted as fragmentation.
  const ClusterLayout l = servers_of_four(2, 2);
  const PlacementPolicy kServer = PlacementPolicy::kServer;
  const Placement p =
      place_jobs(l, {wants("a", 3, kServer), wants("b", 3, kServer), wants("c", 2, kServer)});
  EXPECT_EQ(p.gpus[0], (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(p.gpus[1], (std::vector<int>{4, 5, 6}));
  EXPECT_TRUE(p.gpus[2].empty());
  ASSERT_EQ(p.unplaced.size(), 1u);
  EXPECT_NE(p.unplaced[0].find("in one server, at most 1 free"), std::string::npos);
  EXPECT_EQ(p.free_gpus, 2);
  EXPECT_EQ(p.fragmented_gpus, 2);
  EXPECT_NE(testing::input_error_of([&] {
              place_jobs(l, {wants("big", 5, kServer)});
            }).find("the largest server has 4"),
            std::string::npos);
  for (const char* name : {"packed", "spread", "topology", "server", "random"}) {
    PlacementPolicy policy;
    ASSERT_TRUE(parse_placement_policy(name, &policy)) << name;
    EXPECT_EQ(std::string(placement_policy_name(policy)), name);
  }
}

TEST(JobPlacement, DomainsAreTheLeafSwitchesOfThePlatform) {
  // dgx-a100 puts 2 servers on each fat-tree leaf.
  const YAML::Node spec = YAML::Load("{preset: dgx-a100, servers: 5}");
  const ClusterLayout l = cluster_layout(build_topology(parse_platform_spec(spec, "test")));
  std::vector<int> domains;
  for (const auto& s : l.servers) domains.push_back(s.domain);
  EXPECT_EQ(domains, (std::vector<int>{0, 0, 1, 1, 2}));
}

// A scenario of one two-GPU data-parallel job placed `policy` on two 8-GPU servers.
Scenario dp_job(const std::string& policy) {
  const std::string dir = testing::make_temp_dir("jobs");
  const std::string path = dir + "/s.yaml";
  testing::write_file(path, R"(name: placement
platform: {preset: ethernet-cluster, servers: 2}
jobs:
  - name: dp
    gpus: 2
    placement: )" + policy + R"(
    workload: {type: synthetic-dp, layers: 2, forward_time: 1ms, gradient_bytes: 8MiB, protocol: ideal}
)");
  return load_scenario(path);
}

double link_bytes(const RunResult& r, const std::string& name) {
  for (const LinkStats& l : r.links)
    if (l.name == name) return l.bytes;
  return 0.0;
}

TEST(Jobs, PackedKeepsAllReducesInsideAServerAndSpreadSendsThemAcross) {
  // Two ranks, two layers of 8 MiB gradients: a two-rank ring all-reduce sends half its buffer
  // each way twice, so each direction carries 2 x 8 MiB. Spread puts the ranks on two servers:
  // all of it crosses server 0's NIC port; packed keeps both on server 0: none does.
  const Scenario spread = dp_job("spread");
  ASSERT_TRUE(spread.jobs);
  EXPECT_EQ(spread.jobs->jobs[0].gpus, (std::vector<std::string>{"n0_gpu0", "n1_gpu0"}));
  const RunResult rs = replay_isolated(spread.platform, spread.graph, timeline());
  EXPECT_DOUBLE_EQ(link_bytes(rs, "n0_nic0_port_UP"), 2 * 8 * 1048576.0);
  const Scenario packed = dp_job("packed");
  EXPECT_EQ(packed.jobs->jobs[0].gpus, (std::vector<std::string>{"n0_gpu0", "n0_gpu1"}));
  const RunResult rp = replay_isolated(packed.platform, packed.graph, timeline());
  EXPECT_EQ(link_bytes(rp, "n0_nic0_port_UP"), 0.0);
}

TEST(Jobs, ScenarioReportsSlowdownAndSharedLinks) {
  const std::string dir = testing::make_temp_dir("jobs");
  const std::string path = dir + "/s.yaml";
  // Two identical jobs spread over the same two servers: their all-reduces meet on both NICs.
  std::string job = R"(
    gpus: 2
    placement: spread
    iterations: 2
    workload: {type: synthetic-dp, layers: 2, forward_time: 1ms, gradient_bytes: 64MiB, protocol: ideal})";
  testing::write_file(path, "platform: {preset: ethernet-cluster, servers: 2}\njobs:\n  - name: a" +
                                job + "\n  - name: b" + job + "\n");
  const Scenario sc = load_scenario(path);
  const RunResult shared = replay_isolated(sc.platform, sc.graph, timeline());
  const JobsOutcome o = job_outcomes(sc, shared, replay_jobs_alone(sc, timeline()));
  ASSERT_EQ(o.jobs.size(), 2u);
  for (const JobRecord& j : o.jobs) {
    EXPECT_EQ(j.iteration_times.size(), 2u);
    // Communication-bound on the NIC: close to twice as slow, never faster.
    EXPECT_GT(j.slowdown, 1.5) << j.name;
    EXPECT_LE(j.slowdown, 2.0 + 1e-9) << j.name;
  }
  ASSERT_FALSE(o.shared.empty());
  EXPECT_EQ(o.shared[0].jobs, (std::vector<std::string>{"a", "b"}));
}

// Slowdown and placement cost are two questions: sharing compares the job with itself alone on
// the same GPUs; placement compares those GPUs with the best ones, the job alone packed on an
// empty platform, which is exactly the one-job scenario with placement: packed.
TEST(Jobs, PlacementCostIsAloneHereOverAlonePackedOnAnEmptyPlatform) {
  const std::string dir = testing::make_temp_dir("jobs");
  const std::string job = R"(
    gpus: 2
    iterations: 2
    workload: {type: synthetic-dp, layers: 2, forward_time: 1ms, gradient_bytes: 64MiB, protocol: ideal})";
  auto scenario = [&](const std::string& name, const std::string& jobs) {
    testing::write_file(dir + "/" + name,
                        "platform: {preset: ethernet-cluster, servers: 2}\njobs:" + jobs + "\n");
    return load_scenario(dir + "/" + name);
  };
  const Scenario spread = scenario("spread.yaml", "\n  - name: a\n    placement: spread" + job);
  const Scenario packed = scenario("packed.yaml", "\n  - name: a\n    placement: packed" + job);
  ASSERT_EQ(spread.jobs->best_placement.size(), 1u);  // other GPUs: built
  EXPECT_EQ(spread.jobs->best_of, std::vector<int>{0});
  EXPECT_TRUE(packed.jobs->best_placement.empty());  // its own: not built again
  EXPECT_EQ(packed.jobs->best_of, std::vector<int>{-1});
  // Three like jobs packed one after the other: the first has the best GPUs, the other two
  // share one run there.
  const Scenario three =
      scenario("three.yaml", "\n  - name: a" + job + "\n  - name: b" + job + "\n  - name: c" + job);
  EXPECT_EQ(three.jobs->best_placement.size(), 1u);
  EXPECT_EQ(three.jobs->best_of, (std::vector<int>{-1, 0, 0}));
  auto outcome = [](const Scenario& sc) {
    const RunResult shared = replay_isolated(sc.platform, sc.graph, timeline());
    return job_outcomes(sc, shared, replay_jobs_alone(sc, timeline())).jobs.at(0);
  };
  const JobRecord s = outcome(spread), p = outcome(packed);
  // Alone on its cluster, no one shares: no slowdown either way.
  EXPECT_NEAR(s.slowdown, 1.0, 1e-9);
  EXPECT_NEAR(p.slowdown, 1.0, 1e-9);
  // Packed, its all-reduces stay on the server's PCIe; spread, 64 MiB crosses the NICs.
  EXPECT_EQ(p.placement_cost, 1.0);
  EXPECT_EQ(p.best_mean, p.alone_mean);
  EXPECT_EQ(s.best_mean, p.alone_mean);
  EXPECT_GT(s.placement_cost, 1.5);
  EXPECT_EQ(s.placement_cost, s.alone_mean / p.alone_mean);
}

TEST(Jobs, ScenarioErrorsNameTheJobAndKey) {
  const std::string dir = testing::make_temp_dir("jobs");
  auto error = [&](const std::string& jobs) {
    const std::string path = dir + "/e.yaml";
    testing::write_file(path, "platform: {preset: ethernet-cluster, servers: 1}\n" + jobs);
    return testing::input_error_of([&] { load_scenario(path); });
  };
  EXPECT_NE(error("jobs: []\n").find("expected a list of jobs"), std::string::npos);
  EXPECT_NE(error("jobs:\n  - workload: {type: synthetic-dp}\n").find("gpus: is required"),
            std::string::npos);
  EXPECT_NE(error("jobs:\n  - {gpus: 2, placement: tight, workload: {type: synthetic-dp}}\n")
                .find("expected packed, spread, topology, server or random, got \"tight\""),
            std::string::npos);
  EXPECT_NE(error("jobs:\n  - {gpus: [n0_gpu0, n9_gpu0], workload: {type: synthetic-dp}}\n")
                .find("\"n9_gpu0\" is neither a GPU host of the platform"),
            std::string::npos);
  EXPECT_NE(
      error("jobs:\n  - {gpus: 2, colour: red, workload: {type: synthetic-dp}}\n").find("colour"),
      std::string::npos);
  EXPECT_NE(
      error(
          "workload: {type: synthetic-dp}\njobs:\n  - {gpus: 2, workload: {type: synthetic-dp}}\n")
          .find("either one workload or a list of jobs"),
      std::string::npos);
}

// A two-GPU data-parallel step on one server: 2 layers of 10 ms forward and 20 ms backward, a
// 1 KiB gradient per layer (microseconds on NVLink-less PCIe), no update.
double dp_iteration(const std::string& speeds) {
  const std::string dir = testing::make_temp_dir("jobs");
  const std::string path = dir + "/s.yaml";
  testing::write_file(path, R"(platform: {preset: ethernet-cluster, servers: 1}
workload: {type: synthetic-dp, gpus: 2, layers: 2, forward_time: 10ms, gradient_bytes: 1KiB,
           update_time: 0s, protocol: ideal}
)" + speeds);
  const Scenario sc = load_scenario(path);
  return replay_isolated(sc.platform, sc.graph, timeline()).makespan;
}

TEST(GpuSpeed, ADataParallelJobRunsAtItsSlowestGpusPace) {
  // 60 ms of compute per GPU at full speed; at half speed 120 ms. Every all-reduce waits for
  // the slow rank's gradient, so one slow GPU makes the whole step as long as two slow ones.
  const double fast = dp_iteration("");
  const double one_slow = dp_iteration("gpu_speeds: {n0_gpu1: 0.5}\n");
  const double both_slow = dp_iteration("gpu_speeds: {n0_gpu0: 0.5, n0_gpu1: 0.5}\n");
  EXPECT_NEAR(fast, 60e-3, 1e-3);
  EXPECT_NEAR(one_slow, 120e-3, 1e-3);
  EXPECT_NEAR(one_slow, both_slow, 1e-6);
}

TEST(GpuSpeed, VariationIsSeededAndExplicitFactorsWin) {
  const std::vector<std::string> hosts = {"g0", "g1", "g2", "g3"};
  auto speeds = [&](const std::string& yaml) {
    return read_gpu_speeds(YamlMap(YAML::Load(yaml), "test"), hosts);
  };
  const auto a = speeds("gpu_speed_variation: {stdev: 0.1, seed: 4}");
  EXPECT_EQ(a, speeds("gpu_speed_variation: {stdev: 0.1, seed: 4}"));
  EXPECT_NE(a, speeds("gpu_speed_variation: {stdev: 0.1, seed: 5}"));
  ASSERT_EQ(a.size(), 4u);
  for (const auto& [h, f] : a) EXPECT_TRUE(f >= 0.05 && f <= 2.0 && f != 1.0) << h;
  const auto b = speeds("{gpu_speed_variation: {stdev: 0.1, seed: 4}, gpu_speeds: {g2: 0.25}}");
  EXPECT_EQ(b.at("g2"), 0.25);
  EXPECT_EQ(b.at("g1"), a.at("g1"));
  EXPECT_NE(testing::input_error_of([&] {
              speeds("gpu_speeds: {g9: 0.5}");
            }).find("is not a GPU host of the platform"),
            std::string::npos);
  EXPECT_NE(testing::input_error_of([&] {
              speeds("gpu_speeds: {g1: 0}");
            }).find("above 0 and at most 10"),
            std::string::npos);
}

TEST(Jobs, ALanguageModelJobAloneTakesWhatItsOneWorkloadScenarioTakes) {
  // The same tensor-parallel plan on one DGX H100, as a scenario of its own and as a job on the
  // first server of two (beside a data-parallel job on the second, whose traffic stays in its
  // server): the same iteration, within float rounding.
  const std::string dir = testing::make_temp_dir("jobs");
  const std::string workload =
      "workload: {type: llm, model: llama2_7b, seq_len: 1024, global_batch: 8, micro_batch: 1}\n";
  const std::string strategy = "strategy: {tp: 8, pp: 1}\n";
  testing::write_file(dir + "/one.yaml",
                      "platform: {preset: dgx-h100, servers: 1}\n" + workload + strategy);
  testing::write_file(dir + "/jobs.yaml",
                      "platform: {preset: dgx-h100, servers: 2}\n"
                      "jobs:\n"
                      "  - name: llm\n"
                      "    gpus: 8\n"
                      "    iterations: 2\n"
                      "    " +
                          workload + "    " + strategy +
                          "  - name: dp\n"
                          "    gpus: 8\n"
                          "    workload: {type: synthetic-dp, layers: 4, gradient_bytes: 64MiB}\n");
  const Scenario one = load_scenario(dir + "/one.yaml");
  const Scenario jobs = load_scenario(dir + "/jobs.yaml");
  ASSERT_TRUE(jobs.jobs);
  EXPECT_EQ(jobs.jobs->jobs[0].gpus.front(), "n0_gpu0");
  const double alone = replay_isolated(one.platform, one.graph, timeline()).makespan;
  const RunResult shared = replay_isolated(jobs.platform, jobs.graph, timeline());
  const JobsOutcome o = job_outcomes(jobs, shared, replay_jobs_alone(jobs, timeline()));
  ASSERT_EQ(o.jobs[0].iteration_times.size(), 2u);
  for (double t : o.jobs[0].iteration_times) EXPECT_NEAR(t, alone, 1e-9 * alone);
  EXPECT_NEAR(o.jobs[0].slowdown, 1.0, 1e-9);
}

TEST(Jobs, ShippedScenarioRunsAndPrintsEachJob) {
  if (testing::orrery_bin().empty()) GTEST_SKIP() << "ORRERY_BIN not set (run through ctest)";
  const Scenario sc = load_scenario(testing::source_path("scenarios/shared-cluster.yaml"));
  ASSERT_TRUE(sc.jobs);
  ASSERT_EQ(sc.jobs->jobs.size(), 2u);
  EXPECT_EQ(sc.jobs->jobs[0].gpus.size(), 8u);  // spread: 4 on each server
  EXPECT_EQ(sc.jobs->jobs[1].gpus,
            (std::vector<std::string>{"n0_gpu4", "n0_gpu5", "n1_gpu4", "n1_gpu5"}));
  EXPECT_EQ(sc.jobs->free_gpus, 4);
  const std::string dir = testing::make_temp_dir("jobs");
  const testing::ShellResult r =
      testing::run_shell("cd " + dir + " && " + testing::orrery_bin() + " run " +
                         testing::source_path("scenarios/shared-cluster.yaml") + " -o s.h5 2>&1");
  ASSERT_EQ(r.status, 0) << r.output;
  for (const char* line : {"All jobs done", "Jobs (2 placed on 16 GPUs; 4 free)", "resnet50",
                           "synthetic", "slowdown", "links shared by jobs"})
    EXPECT_NE(r.output.find(line), std::string::npos) << line << "\n" << r.output;
  // The results file keeps each job's iterations and slowdown; `orrery report` shows them.
  const LoadedResults stored = read_results_h5(dir + "/s.h5");
  ASSERT_EQ(stored.meta.jobs.size(), 2u);
  for (const JobRecord& j : stored.meta.jobs) {
    ASSERT_EQ(j.iteration_times.size(), 3u) << j.name;
    double sum = 0;
    for (double t : j.iteration_times) sum += t;
    EXPECT_DOUBLE_EQ(j.mean, sum / 3) << j.name;
    EXPECT_DOUBLE_EQ(j.slowdown, j.mean / j.alone_mean) << j.name;
    EXPECT_GE(j.slowdown, 1.0) << j.name;
  }
  EXPECT_EQ(stored.meta.jobs[1].placement, "explicit");
  EXPECT_EQ(stored.meta.jobs[1].gpus, 4);
  const testing::ShellResult report =
      testing::run_shell(testing::orrery_bin() + " report " + dir + "/s.h5 2>&1");
  ASSERT_EQ(report.status, 0) << report.output;
  EXPECT_NE(report.output.find("synthetic        explicit"), std::string::npos) << report.output;
}

}  // namespace
}  // namespace orrery
