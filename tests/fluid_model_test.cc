// The fluid model's rates and dates, by hand and against SimGrid 3.32's own solver.
#include "engine/fluid_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <simgrid/s4u.hpp>
#include <sstream>

#include "common/child_process.h"
#include "platforms/simgrid_platform.h"

namespace orrery {
namespace {

constexpr double kNone = FluidModel::kUnbounded;

// Runs the model to its end: tag -> date it ended.
std::map<uint64_t, double> run_all(FluidModel& m) {
  std::map<uint64_t, double> ends;
  std::vector<uint64_t> ended;
  while (m.advance(1e9, &ended)) {
    for (uint64_t t : ended) ends[t] = m.now();
    ended.clear();
  }
  return ends;
}

TEST(FluidModel, ActivitiesOnOneLinkShareItEquallyAndEndTogether) {
  FluidModel m;
  const int link = m.add_resource(10);
  m.start(10, {link}, 0, 1, kNone, 1);
  m.start(10, {link}, 0, 1, kNone, 2);
  std::vector<uint64_t> ended;
  ASSERT_TRUE(m.advance(1e9, &ended));
  EXPECT_DOUBLE_EQ(m.now(), 2.0);  // 5 units/s each
  EXPECT_EQ(ended, (std::vector<uint64_t>{1, 2}));
  ended.clear();
  EXPECT_FALSE(m.advance(1e9, &ended));
  EXPECT_EQ(m.running(), 0);
}

TEST(FluidModel, ShareIsInverseToThePenalty) {
  // Penalties 1 and 3 on 8 units/s: rates 6 and 2. The first ends at 1 with 4 left to the
  // second, which then has the link alone: 4 / 8 more.
  FluidModel m;
  const int link = m.add_resource(8);
  m.start(6, {link}, 0, 1, kNone, 1);
  m.start(6, {link}, 0, 3, kNone, 2);
  auto ends = run_all(m);
  EXPECT_DOUBLE_EQ(ends[1], 1.0);
  EXPECT_DOUBLE_EQ(ends[2], 1.5);
}

TEST(FluidModel, MaxMinGivesWhatABottleneckedFlowCannotUseToTheOthers) {
  // Link a (10/s): flows 1 and 2. Link b (4/s): flows 2 and 3. b saturates first at 2 each;
  // flow 1 takes the 8 that flow 2 leaves on a.
  FluidModel m;
  const int a = m.add_resource(10);
  const int b = m.add_resource(4);
  m.start(16, {a}, 0, 1, kNone, 1);
  m.start(4, {a, b}, 0, 1, kNone, 2);
  m.start(100, {b}, 0, 1, kNone, 3);
  auto ends = run_all(m);
  EXPECT_DOUBLE_EQ(ends[1], 2.0);  // 16 at 8/s
  EXPECT_DOUBLE_EQ(ends[2], 2.0);  // 4 at 2/s
  // Flow 3: 4 units by t = 2, then b alone: 96 / 4 more.
  EXPECT_DOUBLE_EQ(ends[3], 2.0 + 96.0 / 4);
}

TEST(FluidModel, BoundsAreCoresOfAHost) {
  // A 4-core host of 1 unit/s per core (capacity 4): two execs run at one core each; six share
  // the four cores at 2/3 each.
  for (int n : {2, 6}) {
    FluidModel m;
    const int host = m.add_resource(4);
    for (int k = 0; k < n; ++k) m.start(1, {host}, 0, 1, 1.0, k);
    auto ends = run_all(m);
    ASSERT_EQ(ends.size(), static_cast<size_t>(n));
    for (auto [tag, date] : ends) EXPECT_DOUBLE_EQ(date, n <= 4 ? 1.0 : n / 4.0) << n;
  }
}

TEST(FluidModel, LatencyUsesNoBandwidth) {
  // Flow 1 starts at once, flow 2 after 1 s of latency: flow 1 has the link alone until then.
  // A delay (no resources) and a zero-byte flow end when their latency has passed.
  FluidModel m;
  const int link = m.add_resource(10);
  m.start(10, {link}, 0, 1, kNone, 1);
  m.start(10, {link}, 1.0, 1, kNone, 2);
  m.start(0, {}, 0.25, 1, kNone, 3);
  m.start(0, {link}, 0.5, 1, kNone, 4);
  auto ends = run_all(m);
  EXPECT_DOUBLE_EQ(ends[1], 1.0);
  EXPECT_DOUBLE_EQ(ends[2], 2.0);
  EXPECT_DOUBLE_EQ(ends[3], 0.25);
  EXPECT_DOUBLE_EQ(ends[4], 0.5);
}

TEST(FluidModel, FatPipeGivesEveryUserItsCapacity) {
  FluidModel m;
  const int pipe = m.add_resource(10, FluidModel::Sharing::kFatpipe);
  const int shared = m.add_resource(10);
  m.start(10, {pipe}, 0, 1, kNone, 1);
  m.start(10, {pipe}, 0, 1, kNone, 2);
  m.start(10, {pipe, shared}, 0, 1, kNone, 3);
  m.start(10, {shared}, 0, 1, kNone, 4);
  auto ends = run_all(m);
  EXPECT_DOUBLE_EQ(ends[1], 1.0);
  EXPECT_DOUBLE_EQ(ends[2], 1.0);
  EXPECT_DOUBLE_EQ(ends[3], 2.0);  // the shared link halves it
  EXPECT_DOUBLE_EQ(ends[4], 2.0);
}

TEST(FluidModel, CancelGivesTheShareBack) {
  FluidModel m;
  const int link = m.add_resource(10);
  const int forever = m.start(1e300, {link}, 0, 1, kNone, 1);
  m.start(0, {}, 1.0, 1, kNone, 2);  // a timer at t = 1
  m.start(10, {link}, 0, 1, kNone, 3);
  std::vector<uint64_t> ended;
  ASSERT_TRUE(m.advance(1e9, &ended));
  EXPECT_EQ(ended, (std::vector<uint64_t>{2}));
  m.cancel(forever);  // flow 3 has 5 left, now at 10/s
  auto ends = run_all(m);
  EXPECT_EQ(ends.count(1), 0u);
  EXPECT_DOUBLE_EQ(ends[3], 1.5);
  EXPECT_THROW(m.cancel(forever), std::invalid_argument);
}

TEST(FluidModel, AnEventReSolvesOnlyWhatItIsConnectedTo) {
  // A long flow on link a; ten flows one after another on link b. After the first solve (both
  // links), each end on b re-solves b's component alone: 2 + 9 activities visited. Re-solving
  // everything would visit the long flow again at each of the nine.
  FluidModel m;
  const int a = m.add_resource(1);
  const int b = m.add_resource(1);
  m.start(1000, {a}, 0, 1, kNone, 100);
  m.start(1, {b}, 0, 1, kNone, 0);
  std::vector<uint64_t> ended;
  int started = 1;
  while (m.advance(1e9, &ended)) {
    for (uint64_t t : ended)
      if (t < 100 && started < 10) m.start(1, {b}, 0, 1, kNone, started++);
    ended.clear();
  }
  EXPECT_DOUBLE_EQ(m.now(), 1000.0);
  EXPECT_EQ(m.solved_activities(), 2 + 9);
}

TEST(FluidModel, AResourceThatCannotSaturateJoinsNothing) {
  // Two flows, each on a link of its own (1/s), both across a spine of 10/s that their own links
  // keep below capacity: the spine couples nothing, so the short flow's end does not re-solve
  // the long one (1 + 1 activities, then none: the long flow keeps its rate).
  FluidModel m;
  const int a = m.add_resource(1), b = m.add_resource(1), spine = m.add_resource(10);
  m.start(100, {a, spine}, 0, 1, kNone, 1);
  m.start(1, {b, spine}, 0, 1, kNone, 2);
  auto ends = run_all(m);
  EXPECT_DOUBLE_EQ(ends[1], 100.0);
  EXPECT_DOUBLE_EQ(ends[2], 1.0);
  EXPECT_EQ(m.solved_activities(), 2);
}

TEST(FluidModel, ASpineBindsOnlyWhileItsFlowsCouldFillIt) {
  // Three flows on links of 1/s each share a spine of 2.5/s: the spine binds (5/6 each). When
  // the short one ends at 1.2 (1 unit at 5/6), the two left could move 2/s in all: each runs
  // at its own link's 1/s again. A bounded exec alone on a large host runs at its bound.
  FluidModel m;
  const int spine = m.add_resource(2.5);
  std::vector<int> own;
  for (int k = 0; k < 3; ++k) own.push_back(m.add_resource(1));
  m.start(1, {own[0], spine}, 0, 1, kNone, 1);
  m.start(3, {own[1], spine}, 0, 1, kNone, 2);
  m.start(3, {own[2], spine}, 0, 1, kNone, 3);
  const int host = m.add_resource(4);
  m.start(0.9, {host}, 0, 1, 0.3, 4);
  auto ends = run_all(m);
  EXPECT_DOUBLE_EQ(ends[1], 1.2);
  EXPECT_DOUBLE_EQ(ends[2], 1.2 + (3 - 1.0) / 1.0);  // 1 unit moved by 1.2, 2 left at 1/s
  EXPECT_DOUBLE_EQ(ends[3], ends[2]);
  EXPECT_DOUBLE_EQ(ends[4], 3.0);
}

TEST(FluidModel, ALinkItsUsersNarrowerLinksCapJoinsNothing) {
  // A NIC's PCIe link (2.5/s, both ways) under its up and down ports (1/s each): two flows up,
  // one down. Their reach (3) could fill it, but together they move at most what the two ports
  // do (2): it never binds. The flows up share their port (0.5 each) and the one down has its
  // own; its end re-solves nothing (2 + 1 activities in all, where the PCIe link joining them
  // would have made 3 + 2).
  FluidModel m;
  const int pcie = m.add_resource(2.5), up = m.add_resource(1), down = m.add_resource(1);
  m.start(100, {pcie, up}, 0, 1, kNone, 1);
  m.start(100, {pcie, up}, 0, 1, kNone, 2);
  m.start(1, {pcie, down}, 0, 1, kNone, 3);
  auto ends = run_all(m);
  EXPECT_DOUBLE_EQ(ends[1], 200.0);
  EXPECT_DOUBLE_EQ(ends[2], 200.0);
  EXPECT_DOUBLE_EQ(ends[3], 1.0);
  EXPECT_EQ(m.solved_activities(), 3);
}

TEST(FluidModel, AUserCrossingALinkMoreOftenThanItsNarrowestIsNotCoveredByIt) {
  // As above, but the flow up crosses the PCIe link twice (listed twice, or counted twice) and
  // its port once: it loads the link with twice its rate, which its port does not cap. With
  // the flow down the link binds: 2.5 / (2 + 1) = 5/6 each, both end at 12. Covered by its
  // port, the flow up would have run at 1 and ended at 10.
  for (bool counted : {false, true}) {
    FluidModel m;
    const int pcie = m.add_resource(2.5), up = m.add_resource(1), down = m.add_resource(1);
    if (counted)
      m.start(10, {pcie, up}, {2, 1}, 0, 1, kNone, 1);
    else
      m.start(10, {pcie, pcie, up}, 0, 1, kNone, 1);
    m.start(10, {pcie, down}, 0, 1, kNone, 2);
    auto ends = run_all(m);
    EXPECT_DOUBLE_EQ(ends[1], 12.0) << (counted ? "counted" : "listed twice");
    EXPECT_DOUBLE_EQ(ends[2], 12.0) << (counted ? "counted" : "listed twice");
  }
}

TEST(FluidModel, AFlowAcrossMoreResourcesThanItsMaskHoldsSharesTheLastOnesToo) {
  // 70 links of 10/s, then a link of 1/s at position 70 (past the 64 uses whose binding an
  // activity keeps as bits) that two more flows share.
  FluidModel m;
  std::vector<int> route;
  for (int k = 0; k < 70; ++k) route.push_back(m.add_resource(10));
  const int narrow = m.add_resource(1);
  route.push_back(narrow);
  m.start(1, route, 0, 1, kNone, 1);
  m.start(1, {narrow}, 0, 1, kNone, 2);
  m.start(3, {narrow, route[3]}, 0, 1, kNone, 3);
  auto ends = run_all(m);
  // Three on the narrow link: 1/3 each until 3 (the first two's 1 unit), then 1/s for the
  // third's last 2 units.
  EXPECT_DOUBLE_EQ(ends[1], 3.0);
  EXPECT_DOUBLE_EQ(ends[2], 3.0);
  EXPECT_DOUBLE_EQ(ends[3], 5.0);
}

TEST(FluidModel, SimultaneousEndsComeOutByActivityWhateverTheirLatencies) {
  // At date 2 a flow ends (activity 0), a delay of 2 started at 0 (activity 1) and one of 1
  // started at 1 (activity 2, the slot the first delay of 1 freed): by activity, whether the
  // event waited in the heap or behind its latency.
  FluidModel m;
  const int link = m.add_resource(1);
  m.start(2, {link}, 0, 1, kNone, 30);
  m.start(0, {}, 2.0, 1, kNone, 20);
  m.start(0, {}, 1.0, 1, kNone, 5);
  std::vector<uint64_t> ended;
  ASSERT_TRUE(m.advance(1e9, &ended));
  EXPECT_EQ(m.now(), 1.0);
  EXPECT_EQ(ended, (std::vector<uint64_t>{5}));
  ended.clear();
  m.start(0, {}, 1.0, 1, kNone, 10);
  ASSERT_TRUE(m.advance(1e9, &ended));
  EXPECT_EQ(m.now(), 2.0);
  EXPECT_EQ(ended, (std::vector<uint64_t>{30, 20, 10}));
}

TEST(FluidModel, StopsBeforeTheLimitAndKeepsItsTime) {
  FluidModel m;
  const int link = m.add_resource(1);
  m.start(10, {link}, 0, 1, kNone, 1);
  std::vector<uint64_t> ended;
  EXPECT_FALSE(m.advance(5.0, &ended));
  EXPECT_EQ(m.now(), 0.0);
  EXPECT_EQ(m.running(), 1);
  EXPECT_TRUE(m.advance(10.0, &ended));
  EXPECT_EQ(ended, (std::vector<uint64_t>{1}));
}

TEST(FluidModel, ReportsEachLinksRateOverTime) {
  // 10/s link: one flow alone for 1 s (10/s), then joined by a penalty-1 flow: still 10/s in
  // all; then alone again. Intervals are reported when the total changes, and at the end.
  FluidModel m;
  const int link = m.add_resource(10);
  double carried = 0;
  m.on_usage = [&](int r, double from, double to, double rate) {
    EXPECT_EQ(r, link);
    carried += rate * (to - from);
  };
  m.start(20, {link}, 0, 1, kNone, 1);
  m.start(5, {link}, 1.0, 1, kNone, 2);
  run_all(m);
  m.finish_usage();
  EXPECT_NEAR(carried, 25.0, 1e-12);
}

TEST(FluidModel, ACountedActivityGetsTheRateOfEachOfTheAlikeOnesItStandsFor) {
  // Four flows from four NICs (10/s each) through one shared uplink (20/s), beside a flow of
  // penalty 2 on the uplink alone: expanded, and as one flow counted 4 times on the uplink
  // and once on its NIC (the NICs are alike). Max-min: the uplink's level L solves
  // 4 L + L / 2 = 20, L = 40/9, under the NICs' 10; the same dates either way.
  auto run = [](bool counted) {
    FluidModel m;
    const int uplink = m.add_resource(20);
    std::vector<int> nics;
    for (int k = 0; k < 4; ++k) nics.push_back(m.add_resource(10));
    if (counted) {
      m.start(40, {nics[0], uplink}, {1, 4}, 0, 1, kNone, 1);
    } else {
      for (int k = 0; k < 4; ++k) m.start(40, {nics[k], uplink}, 0, 1, kNone, 1 + k);
    }
    m.start(30, {uplink}, 0, 2, kNone, 9);
    return run_all(m);
  };
  const auto expanded = run(false), counted = run(true);
  // Phase 1: the four at 40/9 each and the other at 20/9, until the four end at 9 s (each
  // moved 40). Then the other alone: 30 - 20 = 10 units at 20/s, 0.5 s more.
  EXPECT_DOUBLE_EQ(counted.at(1), 9.0);
  EXPECT_DOUBLE_EQ(counted.at(9), 9.5);
  for (int k = 0; k < 4; ++k) EXPECT_EQ(expanded.at(1 + k), counted.at(1));  // bit for bit
  EXPECT_EQ(expanded.at(9), counted.at(9));
}

TEST(FluidModel, ALoneActivityTakesItsLeastShareOrItsBound) {
  // One activity alone (its own component, filled in closed form): on a shared 10/s link it
  // crosses as 2 alike copies (5/s each) and a shared 8/s link, 5/s; with a 4/s fat pipe too,
  // 4/s; bounded at 2/s, 2/s. 10 units each.
  auto end_of = [](bool fatpipe, double bound) {
    FluidModel m;
    std::vector<int> res{m.add_resource(10), m.add_resource(8)};
    std::vector<int> counts{2, 1};
    if (fatpipe) {
      res.push_back(m.add_resource(4, FluidModel::Sharing::kFatpipe));
      counts.push_back(1);
    }
    m.start(10, res, counts, 0, 3, bound, 1);  // penalty 3: alone, it changes nothing
    return run_all(m).at(1);
  };
  EXPECT_DOUBLE_EQ(end_of(false, kNone), 2.0);
  EXPECT_DOUBLE_EQ(end_of(true, kNone), 2.5);
  EXPECT_DOUBLE_EQ(end_of(true, 2.0), 5.0);
  EXPECT_DOUBLE_EQ(end_of(false, 6.0), 2.0);  // a bound above its share does nothing
}

TEST(FluidModel, CountsMustBeOnePerResourceAndPositive) {
  FluidModel m;
  const int link = m.add_resource(10);
  EXPECT_THROW(m.start(1, {link}, {1, 2}, 0, 1, kNone, 1), std::invalid_argument);
  EXPECT_THROW(m.start(1, {link}, {0}, 0, 1, kNone, 1), std::invalid_argument);
}

// Random workloads on a star, in SimGrid 3.32 (CM02 as Orrery configures it, Cas01 CPUs) and in
// the model with the same routes, penalties and bounds as the replay gives them: every end date
// within 1e-10 (relative). SimGrid runs here with its time precision (surf/precision) at 1e-13
// s: at its default of 1e-9 s it moves a date that close to another onto it, and such roundings
// add up to a few ns over 40 activities (9 ns in 70 ms in this test).
struct Job {
  double start;
  int src, dst;  // dst < 0: an exec on src
  double amount;
};

// Link 0 is a FATPIPE link when `fatpipe0`.
std::vector<double> simgrid_dates(const std::vector<double>& bw, const std::vector<double>& lat,
                                  const std::vector<int>& cores, bool fatpipe0,
                                  const std::vector<Job>& jobs) {
  std::string out = run_in_child(
      [&] {
        namespace sg4 = simgrid::s4u;
        int argc = 1;
        char name[] = "fluid_model_test";
        char* argv[] = {name, nullptr};
        sg4::Engine e(&argc, argv);
        apply_network_config();
        sg4::Engine::set_config("surf/precision:1e-13");
        auto* zone = sg4::create_full_zone("star");
        std::vector<sg4::Host*> hosts;
        std::vector<sg4::Link*> links;
        for (size_t i = 0; i < bw.size(); ++i) {
          hosts.push_back(zone->create_host("h" + std::to_string(i), 1e9));
          hosts.back()->set_core_count(cores[i])->seal();
          links.push_back(zone->create_link("l" + std::to_string(i), bw[i]));
          links.back()->set_latency(lat[i]);
          if (i == 0 && fatpipe0)
            links.back()->set_sharing_policy(sg4::Link::SharingPolicy::FATPIPE);
          links.back()->seal();
        }
        for (size_t i = 0; i < bw.size(); ++i)
          for (size_t j = 0; j < bw.size(); ++j)
            if (i < j)
              zone->add_route(hosts[i]->get_netpoint(), hosts[j]->get_netpoint(), nullptr, nullptr,
                              {sg4::LinkInRoute(links[i]), sg4::LinkInRoute(links[j])}, true);
        zone->seal();
        std::vector<double> dates(jobs.size(), -1);
        sg4::Actor::create("driver", hosts[0], [&] {
          std::vector<sg4::ActivityPtr> acts;
          for (const Job& j : jobs) {
            sg4::this_actor::sleep_until(j.start);
            if (j.dst < 0)
              acts.push_back(
                  sg4::Exec::init()->set_flops_amount(j.amount)->set_host(hosts[j.src])->start());
            else
              acts.push_back(sg4::Comm::sendto_async(hosts[j.src], hosts[j.dst],
                                                     static_cast<uint64_t>(j.amount)));
          }
          for (size_t k = 0; k < acts.size(); ++k) {
            acts[k]->wait();
            dates[k] = acts[k]->get_finish_time();
          }
        });
        e.run();
        std::ostringstream s;
        s.precision(17);
        for (double d : dates) s << d << " ";
        return s.str();
      },
      "SimGrid reference");
  std::istringstream s(out);
  std::vector<double> dates;
  for (double d; s >> d;) dates.push_back(d);
  return dates;
}

// `twins`: each link i gets a twin of twins[i] times its bandwidth right after it on every
// route, carrying its flows in the same order, as a PCIe link before a NIC does (none: empty).
std::vector<double> model_dates(const std::vector<double>& bw, const std::vector<double>& lat,
                                const std::vector<int>& cores, bool fatpipe0,
                                const std::vector<Job>& jobs,
                                const std::vector<double>& twins = {}) {
  FluidModel m;
  std::vector<int> link, host, twin;
  for (size_t i = 0; i < bw.size(); ++i)
    link.push_back(m.add_resource(
        bw[i], i == 0 && fatpipe0 ? FluidModel::Sharing::kFatpipe : FluidModel::Sharing::kShared));
  for (size_t i = 0; i < bw.size(); ++i) host.push_back(m.add_resource(1e9 * cores[i]));
  for (size_t i = 0; i < twins.size(); ++i) twin.push_back(m.add_resource(bw[i] * twins[i]));
  auto route = [&](int src, int dst) {
    if (twins.empty()) return std::vector<int>{link[src], link[dst]};
    return std::vector<int>{link[src], twin[src], link[dst], twin[dst]};
  };
  std::vector<double> dates(jobs.size(), -1);
  constexpr uint64_t kTimer = 1u << 30;
  std::vector<uint64_t> ended;
  auto run_until = [&](double t) {
    if (t > m.now()) m.start(0, {}, t - m.now(), 1, kNone, kTimer);
    bool timer_done = !(t > m.now());
    while (!timer_done && m.advance(1e9, &ended)) {
      for (uint64_t tag : ended) {
        if (tag == kTimer)
          timer_done = true;
        else
          dates[tag] = m.now();
      }
      ended.clear();
    }
  };
  for (size_t k = 0; k < jobs.size(); ++k) {
    const Job& j = jobs[k];
    run_until(j.start);
    if (j.dst < 0) {
      m.start(j.amount, {host[j.src]}, 0, 1, 1e9, k);
    } else {
      // As the replay starts flows: penalty = route latency; without latency, bounded by the
      // slowest link.
      const double latency = lat[j.src] + lat[j.dst];
      m.start(j.amount, route(j.src, j.dst), latency, latency > 0 ? latency : 1,
              latency > 0 ? kNone : std::min(bw[j.src], bw[j.dst]), k);
    }
  }
  while (m.advance(1e9, &ended)) {
    for (uint64_t tag : ended) dates[tag] = m.now();
    ended.clear();
  }
  return dates;
}

TEST(FluidModel, AgreesWithSimGridOnRandomWorkloads) {
  std::mt19937_64 rng(20261125);
  std::uniform_real_distribution<double> u(0, 1);
  for (int trial = 0; trial < 8; ++trial) {
    const int n = 3 + trial % 4;
    std::vector<double> bw, lat;
    std::vector<int> cores;
    for (int i = 0; i < n; ++i) {
      bw.push_back(1e9 * (1 + 9 * u(rng)));
      lat.push_back(u(rng) < 0.2 ? 0.0 : 1e-6 * (1 + 20 * u(rng)));
      cores.push_back(1 + static_cast<int>(3 * u(rng)));
    }
    std::vector<Job> jobs;
    double t = 0;
    for (int k = 0; k < 40; ++k) {
      t += u(rng) < 0.3 ? 0.0 : 2e-3 * u(rng);  // some start together
      const int src = static_cast<int>(n * u(rng)) % n;
      int dst = static_cast<int>(n * u(rng)) % n;
      if (dst == src || u(rng) < 0.25) dst = -1;
      const double amount = std::round(1e6 * (1 + 20 * u(rng)));
      jobs.push_back({t, src, dst, amount});
    }
    const bool fatpipe0 = trial % 2 == 1;
    auto want = simgrid_dates(bw, lat, cores, fatpipe0, jobs);
    auto got = model_dates(bw, lat, cores, fatpipe0, jobs);
    ASSERT_EQ(want.size(), jobs.size());
    for (size_t k = 0; k < jobs.size(); ++k)
      EXPECT_NEAR(got[k], want[k], 1e-10 * want[k]) << "trial " << trial << " job " << k;
    // Links with twins of more bandwidth (or as much: the twin has the higher id) that carry
    // the same flows in the same order never come first in a filling: the same dates to the
    // bit, whether the filling leaves the twins out or not.
    if (fatpipe0) continue;
    std::vector<double> twins;
    for (int i = 0; i < n; ++i) twins.push_back(i % 2 ? 1.0 : 1.5);
    const auto with_twins = model_dates(bw, lat, cores, false, jobs, twins);
    for (size_t k = 0; k < jobs.size(); ++k)
      EXPECT_EQ(with_twins[k], got[k]) << "trial " << trial << " job " << k;
  }
}

}  // namespace
}  // namespace orrery
