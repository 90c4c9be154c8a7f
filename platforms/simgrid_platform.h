// Turning a Topology into a SimGrid platform, in this process's Engine or as SimGrid XML.
#pragma once

#include <memory>
#include <simgrid/s4u/Engine.hpp>
#include <string>

#include "platforms/topology.h"

namespace orrery {

// Where the replay gets its platform: a generated topology, or a SimGrid XML file.
struct PlatformSource {
  Topology topology;     // used when xml_file is empty
  std::string xml_file;  // a SimGrid platform file, loaded as is
};

// One step of a Dijkstra-routed zone's route graph: from src to dst over SimGrid links (their
// names, in route order).
struct GraphStep {
  std::string src, dst;
  std::vector<std::string> links;
};

// Network settings every Orrery run uses (docs/design.md, SimGrid fact 4): CM02 without
// TCP window cap or cross-traffic, latency and bandwidth factors 1, so a link delivers exactly
// its configured bandwidth and latency. Must be called after the Engine exists, before loading.
void apply_network_config();

// Creates the topology's hosts, routers, links (simgrid_links.h) and routes in the current
// Engine, under one Dijkstra-routed zone: Topology::routes become bypass routes, the route graph
// (or, without routes, the edges in both directions) the Dijkstra graph.
void build_simgrid_platform(const Topology& topo);

// Loads `source` into the current Engine (generated or from XML) and seals the platform. For an
// XML file, `xml_steps` (when given) receives its route graph when the whole platform is one
// Dijkstra zone without bypass routes (load_xml_platform), and stays empty otherwise;
// `xml_complete` says which (an empty graph may be the whole of one: a zone without routes).
void load_platform(const PlatformSource& source, std::vector<GraphStep>* xml_steps = nullptr,
                   bool* xml_complete = nullptr);

// Creates this process's SimGrid Engine (quiet logs), applies the network settings and loads
// `source` (xml_steps, xml_complete: as load_platform). SimGrid allows one Engine per process:
// call it once (common/child_process.h runs further simulations in children).
std::unique_ptr<simgrid::s4u::Engine> start_engine(const PlatformSource& source,
                                                   std::vector<GraphStep>* xml_steps = nullptr,
                                                   bool* xml_complete = nullptr);

// A SimGrid XML (platform DTD 4.1) equivalent of build_simgrid_platform's result.
std::string topology_to_simgrid_xml(const Topology& topo);

// Checks names are unique, edges and routes name existing nodes and links, bandwidth > 0,
// latency >= 0. Throws InputError naming `origin` and the offending item.
void check_topology(const Topology& topo, const std::string& origin);

}  // namespace orrery
