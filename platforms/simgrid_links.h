// How one Topology link becomes SimGrid links. SimGrid 3.32 has no duplex link whose directions
// differ in capacity or slow each other, so a duplex link is built from plain shared links:
//   <name>_UP and <name>_DOWN, one per direction (the names SimGrid gives split-duplex halves);
//   <name>, crossed by both directions, when duplex_overhead > 0: its capacity
//   (up + down) / (1 + duplex_overhead) is what both directions can carry together.
// A half-duplex link is one shared link <name>. Latency sits on the directional links only.
// Every SimGrid link carries the property "class" (TopoLink::link_class).
#pragma once

#include <string>
#include <vector>

#include "platforms/topology.h"

namespace orrery {

struct SimgridLink {
  std::string name;
  double bandwidth = 0.0;  // bytes/s
  double latency = 0.0;    // seconds
};

// The SimGrid links standing for `l`.
std::vector<SimgridLink> simgrid_links_of(const TopoLink& l);

// The SimGrid links (by name) a route crosses when it takes `l` forward (UP) or in reverse.
std::vector<std::string> simgrid_hop(const TopoLink& l, bool reverse);

}  // namespace orrery
