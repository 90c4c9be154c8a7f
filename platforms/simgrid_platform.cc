#include "platforms/simgrid_platform.h"

#include <simgrid/s4u.hpp>
#include <unordered_map>

#include "common/errors.h"
#include "common/input_limits.h"
#include "platforms/simgrid_links.h"
#include "platforms/simgrid_xml_load.h"

namespace sg4 = simgrid::s4u;

namespace orrery {

void apply_network_config() {
  // CM02 is the plain max-min model; LV08's hidden 13.01x latency and 0.97x bandwidth factors
  // would blur the link classes we calibrate explicitly (docs/design.md, SimGrid fact 4).
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/TCP-gamma:0");
  sg4::Engine::set_config("network/crosstraffic:0");
  sg4::Engine::set_config("network/latency-factor:1");
  sg4::Engine::set_config("network/bandwidth-factor:1");
  sg4::Engine::set_config("network/weight-S:0");
  // SimGrid 3.32's default lazy update mis-rates flows on some routes: three concurrent
  // host-to-GPU copies on pai-nvlink gave one of them 117 GB/s through 10 GB/s PCIe links
  // (tests/replay_regression_test.cc). Full updates solve every step and are exact.
  sg4::Engine::set_config("network/optim:Full");
  // The replay polls activities at each time advance (engine/replay.cc), before SimGrid
  // processes the ones that just ended; lazy CPU updates abort on those ("updating an action
  // that is not running"), full updates keep plain remaining work.
  sg4::Engine::set_config("cpu/optim:Full");
}

namespace {

class ZoneBuilder {
 public:
  explicit ZoneBuilder(const Topology& topo) : topo_(topo) {
    zone_ = sg4::create_dijkstra_zone(topo.name.empty() ? "orrery" : topo.name, true);
  }

  void build() {
    for (const auto& h : topo_.hosts) {
      auto* host = zone_->create_host(h.name, h.speed);
      host->set_core_count(h.cores);
      for (const auto& [k, v] : h.properties) host->set_property(k, v);
      host->seal();
      points_[h.name] = host->get_netpoint();
    }
    for (const auto& r : topo_.routers) points_[r] = zone_->create_router(r);
    for (const auto& l : topo_.links) {
      spec_[l.name] = &l;
      for (const auto& s : simgrid_links_of(l)) {
        sg4::Link* link = zone_->create_link(s.name, s.bandwidth);
        link->set_latency(s.latency);
        link->set_property("class", l.link_class);
        link->seal();
        made_[s.name] = link;
      }
    }
    if (topo_.routes.empty() && topo_.route_graph.empty()) {
      for (const auto& e : topo_.edges) {
        step(e.a, e.b, {{e.link, false}});
        step(e.b, e.a, {{e.link, true}});
      }
    } else {
      for (const auto& s : topo_.route_graph) step(s.src, s.dst, s.hops);
      // Bypass routes win over the Dijkstra graph for their host pair.
      for (const auto& r : topo_.routes)
        zone_->add_bypass_route(points_[r.src], points_[r.dst], nullptr, nullptr, expand(r.hops));
    }
    zone_->seal();
  }

 private:
  std::vector<sg4::LinkInRoute> expand(const std::vector<TopoHop>& hops) {
    std::vector<sg4::LinkInRoute> out;
    for (const auto& h : hops)
      for (const auto& name : simgrid_hop(*spec_.at(h.link), h.reverse))
        out.emplace_back(made_.at(name));
    return out;
  }

  void step(const std::string& a, const std::string& b, const std::vector<TopoHop>& hops) {
    zone_->add_route(points_[a], points_[b], nullptr, nullptr, expand(hops), false);
  }

  const Topology& topo_;
  sg4::NetZone* zone_ = nullptr;
  std::unordered_map<std::string, simgrid::kernel::routing::NetPoint*> points_;
  std::unordered_map<std::string, const TopoLink*> spec_;
  std::unordered_map<std::string, sg4::Link*> made_;
};

}  // namespace

void build_simgrid_platform(const Topology& topo) {
  check_topology(topo, "platform " + topo.name);
  ZoneBuilder(topo).build();
}

namespace {

// A SimGrid XML file never went through Orrery's readers: its rates get the same ranges as a
// platform spec's (common/input_limits.h), or a link of 1e-300 B/s would stall the replay.
void check_xml_magnitudes(const std::string& file) {
  auto* engine = sg4::Engine::get_instance();
  for (const sg4::Link* l : engine->get_all_links()) {
    const std::string what = file + ": link \"" + l->get_name() + "\": ";
    if (!limits::kBandwidth.contains(l->get_bandwidth()))
      throw InputError(what + "bandwidth " + out_of_range(l->get_bandwidth(), limits::kBandwidth));
    if (!limits::kLatency.contains(l->get_latency()))
      throw InputError(what + "latency " + out_of_range(l->get_latency(), limits::kLatency));
  }
  for (const sg4::Host* h : engine->get_all_hosts())
    if (!limits::kFlopRate.contains(h->get_speed()))
      throw InputError(file + ": host \"" + h->get_name() + "\": speed " +
                       out_of_range(h->get_speed(), limits::kFlopRate));
}

}  // namespace

void load_platform(const PlatformSource& source, std::vector<GraphStep>* xml_steps,
                   bool* xml_complete) {
  auto* engine = sg4::Engine::get_instance();
  if (!source.xml_file.empty()) {
    std::vector<GraphStep> steps = load_xml_platform(*engine, source.xml_file, xml_complete);
    if (xml_steps) *xml_steps = std::move(steps);
    check_xml_magnitudes(source.xml_file);
  } else {
    build_simgrid_platform(source.topology);
  }
  engine->seal_platform();
}

std::unique_ptr<sg4::Engine> start_engine(const PlatformSource& source,
                                          std::vector<GraphStep>* xml_steps, bool* xml_complete) {
  int argc = 2;
  char arg0[] = "orrery";
  char arg1[] = "--log=root.thresh:critical";
  char* argv[] = {arg0, arg1, nullptr};
  auto engine = std::make_unique<sg4::Engine>(&argc, argv);
  apply_network_config();
  try {
    load_platform(source, xml_steps, xml_complete);
  } catch (...) {
    // Tearing down a half-loaded SimGrid engine can abort; the caller's process reports the
    // error and ends (replays run in a forked child).
    (void)engine.release();
    throw;
  }
  return engine;
}

}  // namespace orrery
