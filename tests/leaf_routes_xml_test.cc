// Leaf routes on a SimGrid XML platform: the route graph SimGrid built while loading the file
// (symmetrical routes stored both ways, split-duplex links by their other half going back)
// gives SimGrid's own routes, link for link and latency bit for bit; files whose routes leaf
// routes cannot stand for give no graph. This process owns its one SimGrid engine.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "common/child_process.h"
#include "engine/leaf_routes.h"
#include "platforms/simgrid_platform.h"
#include "tests/leaf_routes_check.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

// Two servers of four GPUs, each GPU on its switch by a split-duplex link (latencies differ),
// both switches on two spines (equal-cost paths), a third switch on one spine only (a chain of
// two) with two GPUs on one shared link each, and a CPU on two switches (it hangs off
// nothing). Routes are symmetrical unless said otherwise; one GPU link is declared DOWN-first.
// One <link> and one <route> element of SimGrid's platform XML.
std::string link(const std::string& id, const std::string& bandwidth, const std::string& latency,
                 const std::string& attrs = "") {
  return "<link id=\"" + id + "\" bandwidth=\"" + bandwidth + "\" latency=\"" + latency + "\"" +
         attrs + "/>\n";
}
std::string route(const std::string& src, const std::string& dst, const std::string& link_id,
                  const std::string& attrs = "", const std::string& direction = "") {
  return "<route src=\"" + src + "\" dst=\"" + dst + "\"" + attrs + "><link_ctn id=\"" + link_id +
         "\"" + (direction.empty() ? "" : " direction=\"" + direction + "\"") + "/></route>\n";
}

std::string spines_xml(const std::string& routing, const std::string& extra) {
  std::string x =
      "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
      "<platform version=\"4.1\">\n<zone id=\"spines\" routing=\"" +
      routing + "\">\n";
  auto gpu = [](int s, int g) { return "s" + std::to_string(s) + "g" + std::to_string(g); };
  auto uplink = [](int s, int p) { return "sw" + std::to_string(s) + "_up" + std::to_string(p); };
  for (int s = 0; s < 2; ++s)
    for (int g = 0; g < 4; ++g) x += "<host id=\"" + gpu(s, g) + "\" speed=\"1Tf\"/>\n";
  x += "<host id=\"s2g0\" speed=\"1Tf\"/>\n<host id=\"s2g1\" speed=\"1Tf\"/>\n";
  x += "<host id=\"cpu\" speed=\"10Gf\"/>\n";
  for (const char* r : {"sw0", "sw1", "sw2", "spine0", "spine1"})
    x += std::string("<router id=\"") + r + "\"/>\n";
  for (int s = 0; s < 2; ++s) {
    for (int g = 0; g < 4; ++g)
      x += link(gpu(s, g) + "_l", "300GBps", std::to_string(1 + g) + "us",
                " sharing_policy=\"SPLITDUPLEX\"");
    for (int p = 0; p < 2; ++p) x += link(uplink(s, p), "50GBps", "2us");
  }
  x += link("sw2_up", "25GBps", "2us");
  x += link("s2g0_l", "100GBps", "0.5us");
  x += link("s2g1_l", "100GBps", "0.7us");
  x += link("cpu_a", "10GBps", "3us");
  x += link("cpu_b", "10GBps", "3us");
  for (int s = 0; s < 2; ++s) {
    const std::string sw = "sw" + std::to_string(s);
    for (int g = 0; g < 4; ++g) {
      if (s == 1 && g == 3)  // declared from the switch: DOWN first
        x += route(sw, gpu(s, g), gpu(s, g) + "_l", "", "DOWN");
      else
        x += route(gpu(s, g), sw, gpu(s, g) + "_l", "", "UP");
    }
    for (int p = 0; p < 2; ++p) x += route(sw, "spine" + std::to_string(p), uplink(s, p));
  }
  x += route("sw2", "spine0", "sw2_up");
  x += route("s2g0", "sw2", "s2g0_l");
  // One direction declared each way, over the same shared link.
  x += route("s2g1", "sw2", "s2g1_l", " symmetrical=\"NO\"");
  x += route("sw2", "s2g1", "s2g1_l", " symmetrical=\"NO\"");
  x += route("cpu", "sw0", "cpu_a");
  x += route("cpu", "sw1", "cpu_b");
  return x + extra + "</zone>\n</platform>\n";
}

std::string write_xml(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

// The number of steps loading `text` yields, in a child (one engine per process).
size_t steps_of(const std::string& name, const std::string& text) {
  const std::string path = write_xml(name, text);
  return std::stoul(run_in_child(
      [&] {
        std::vector<GraphStep> steps;
        auto engine = start_engine(PlatformSource{{}, path}, &steps);
        return std::to_string(steps.size());
      },
      "loading " + name));
}

// First: its files load in children, which must not inherit the next test's engine.
TEST(LeafRoutesXml, NoGraphWhereLeafRoutesDoNotHold) {
  EXPECT_GT(steps_of("cache.xml", spines_xml("DijkstraCache", "")), 0u);
  // Full and Floyd zones take their declared routes, not shortest paths.
  EXPECT_EQ(steps_of("full.xml", spines_xml("Floyd", "")), 0u);
  // A bypass route wins over the graph for its pair.
  EXPECT_EQ(steps_of("bypass.xml",
                     spines_xml("Dijkstra",
                                "<bypassRoute src=\"s0g0\" dst=\"s1g0\"><link_ctn id=\"cpu_a\"/>"
                                "</bypassRoute>\n")),
            0u);
}

TEST(LeafRoutesXml, EveryPairIsSimGridsOwnRoute) {
  const std::string path = write_xml("spines.xml", spines_xml("Dijkstra", ""));
  std::vector<GraphStep> steps;
  auto engine = start_engine(PlatformSource{{}, path}, &steps);
  // 8 split-duplex GPU routes, 4 switch-spine routes, sw2's uplink, s2g0, cpu's two: both ways;
  // s2g1's two one-way routes.
  ASSERT_EQ(steps.size(), 2u * (8 + 4 + 1 + 1 + 2) + 2);
  LeafRoutes leaves(steps, {});
  std::vector<std::string> hosts;
  for (const auto* h : engine->get_all_hosts()) hosts.push_back(h->get_name());
  const auto count = testing::compare_leaf_routes_with_simgrid(leaves, hosts);
  // Only pairs of one host with itself are refused (the CPU hangs off nothing, but the GPUs
  // it talks to do).
  EXPECT_EQ(count.refused, static_cast<int>(hosts.size()));
  EXPECT_EQ(count.found, static_cast<int>(hosts.size() * (hosts.size() - 1)));
}

}  // namespace
}  // namespace orrery
