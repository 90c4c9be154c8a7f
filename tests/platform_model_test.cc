// The replay's two readings of a platform (engine/platform_model.h): a generated topology read
// directly must give SimGrid's own answers for every host pair (links by name and order,
// latency bit for bit) and every host and link, on every preset (all are one tree); a graph
// with several tops goes to SimGrid.
#include "engine/platform_model.h"

#include <gtest/gtest.h>

#include <cctype>
#include <simgrid/s4u.hpp>

#include "common/child_process.h"
#include "platforms/platform_spec.h"
#include "tests/topology_lookup.h"

namespace orrery {
namespace {

// In a child (one SimGrid engine per process): every difference between the two models on
// `topo`, one per line, and the pairs compared.
std::string differences(const Topology& topo) {
  return run_in_child(
      [&] {
        PlatformSource source;
        source.topology = topo;
        auto direct = topology_model(source.topology);
        if (!direct) return std::string("not one tree\n");
        std::vector<GraphStep> steps;
        bool complete = false;
        auto engine = start_engine(source, &steps, &complete);
        auto sg = simgrid_model(source, steps, complete);
        std::string out;
        int pairs = 0;
        for (const TopoHost& a : topo.hosts) {
          const int da = direct->host(a.name), sa = sg->host(a.name);
          if (direct->speed(da) != sg->speed(sa) || direct->cores(da) != sg->cores(sa))
            out += a.name + ": speed or cores\n";
          for (const auto& [key, value] : a.properties) {
            const char* p = sg->property(sa, key.c_str());
            if (!p || value != p || direct->property(da, key.c_str()) != value)
              out += a.name + ": property " + key + "\n";
          }
          for (const TopoHost& b : topo.hosts) {
            if (a.name == b.name) continue;
            std::vector<int> mine, theirs;
            double my_latency = -1, latency = -2;
            const bool found = direct->route(da, direct->host(b.name), &mine, &my_latency);
            // An in-network endpoint has routes to some hosts only (SimGrid would crash looking
            // for the others); GPUs and CPUs reach every GPU and CPU.
            const auto computes = [](const TopoHost& h) {
              return h.role == "gpu" || h.role == "cpu";
            };
            if (!found && !(computes(a) && computes(b))) continue;
            if (found) sg->route(sa, sg->host(b.name), &theirs, &latency);
            ++pairs;
            bool same = found && mine.size() == theirs.size() && my_latency == latency;
            for (size_t i = 0; same && i < mine.size(); ++i) {
              const ModelLink &x = direct->link(mine[i]), &y = sg->link(theirs[i]);
              same = x.name == y.name && x.bandwidth == y.bandwidth && x.latency == y.latency &&
                     x.sharing == y.sharing && x.link_class == y.link_class;
            }
            if (!same) out += a.name + " -> " + b.name + "\n";
          }
        }
        (void)engine.release();
        return out + std::to_string(pairs) + " pairs\n";
      },
      "platform model comparison");
}

void expect_same(const Topology& topo) {
  const std::string diff = differences(topo);
  EXPECT_NE(diff, "not one tree\n");
  // Nothing but the count of pairs: no host, property or route differs.
  EXPECT_TRUE(!diff.empty() && std::isdigit(static_cast<unsigned char>(diff[0])))
      << diff.substr(0, 2000);
}

TEST(PlatformModel, EveryPresetIsOneTreeRoutedAsSimGridRoutesIt) {
  for (const std::string& name : platform_preset_names()) {
    SCOPED_TRACE(name);
    // Two servers where the preset allows more than one (a fabric between them).
    Topology topo;
    try {
      topo = testing::preset(name, "servers: 2\n");
    } catch (const std::exception&) {
      topo = testing::preset(name);
    }
    expect_same(topo);
  }
}

TEST(PlatformModel, FabricsOfSeveralLeavesRouteAsSimGridRoutesThem) {
  // A leaf (or a unit's rail switches) per server: every route between servers crosses the
  // spine, up one chain and down another.
  for (const char* fabric : {"{topology: fat-tree, servers_per_leaf: 1, oversubscription: 2}",
                             "{topology: rail-optimized, servers_per_leaf: 1}"}) {
    SCOPED_TRACE(fabric);
    expect_same(testing::preset("dgx-h100", std::string("servers: 3\nfabric: ") + fabric + "\n"));
    expect_same(testing::preset("dgx-a100", std::string("servers: 3\nfabric: ") + fabric + "\n"));
  }
}

TEST(PlatformModel, TwoTopsAreLeftToSimGrid) {
  // Three switches in a ring, a host on each: no switch hangs off another (each has two ways
  // out), and SimGrid's Dijkstra must choose the way between them.
  Topology t;
  t.hosts = {{"a", 1e9, 1, "gpu", {}}, {"b", 1e9, 1, "gpu", {}}, {"c", 1e9, 1, "gpu", {}}};
  t.routers = {"s1", "s2", "s3"};
  auto link = [](const char* name) {
    TopoLink l;
    l.name = name;
    l.bandwidth = 1e9;
    l.latency = 1e-6;
    return l;
  };
  t.links = {link("la"), link("lb"), link("lc"), link("x"), link("y"), link("z")};
  t.edges = {{"a", "s1", "la"}, {"b", "s2", "lb"}, {"c", "s3", "lc"},
             {"s1", "s2", "x"}, {"s2", "s3", "y"}, {"s3", "s1", "z"}};
  EXPECT_EQ(topology_model(t), nullptr);
  // Two switches under a third make one tree.
  t.hosts.pop_back();
  t.routers = {"s1", "s2", "top"};
  t.links = {link("la"), link("lb"), link("u1"), link("u2")};
  t.edges = {{"a", "s1", "la"}, {"b", "s2", "lb"}, {"s1", "top", "u1"}, {"s2", "top", "u2"}};
  auto m = topology_model(t);
  ASSERT_NE(m, nullptr);
  std::vector<int> links;
  double latency = 0;
  ASSERT_TRUE(m->route(m->host("a"), m->host("b"), &links, &latency));
  std::vector<std::string> names;
  for (int l : links) names.push_back(m->link(l).name);
  EXPECT_EQ(names, (std::vector<std::string>{"la_UP", "u1_UP", "u2_DOWN", "lb_DOWN"}));
  EXPECT_DOUBLE_EQ(latency, 4e-6);
}

}  // namespace
}  // namespace orrery
