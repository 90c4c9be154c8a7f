// A Graphviz picture of a Topology (`orrery platform export --dot`): one box per host, one
// shape per kind of router, one line per link labelled with its class and bandwidth, one
// cluster per server. Rendering (`dot -Tpng`) is up to the user; nothing in Orrery needs it.
#pragma once

#include <string>

#include "platforms/topology.h"

namespace orrery {

std::string topology_to_dot(const Topology& topo);

}  // namespace orrery
