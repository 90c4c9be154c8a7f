// Plain-text listings of a platform, for `orrery platform show` and `platform list`.
#pragma once

#include <string>

#include "platforms/platform_spec.h"
#include "platforms/topology.h"

namespace orrery {

// Name, description, shape in one line, and the sources of the numbers.
std::string describe_spec(const PlatformSpec& spec);
// Hosts by role and model, routers by kind.
std::string describe_nodes(const Topology& topo);
// Links grouped by class and parameters: count, bandwidth each way, latency, duplex overhead.
std::string describe_links(const Topology& topo);
// The route from a to b hop by hop, with its bottleneck and total latency. InputError for
// unknown names.
std::string describe_route(const Topology& topo, const std::string& a, const std::string& b);

}  // namespace orrery
