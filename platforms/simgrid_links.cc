#include "platforms/simgrid_links.h"

namespace orrery {

std::vector<SimgridLink> simgrid_links_of(const TopoLink& l) {
  if (!l.duplex) return {{l.name, l.bandwidth, l.latency}};
  std::vector<SimgridLink> out = {{l.name + "_UP", l.bandwidth, l.latency},
                                  {l.name + "_DOWN", l.down_bandwidth(), l.latency}};
  if (l.duplex_overhead > 0)
    out.push_back({l.name, (l.bandwidth + l.down_bandwidth()) / (1 + l.duplex_overhead), 0.0});
  return out;
}

std::vector<std::string> simgrid_hop(const TopoLink& l, bool reverse) {
  if (!l.duplex) return {l.name};
  std::vector<std::string> out = {l.name + (reverse ? "_DOWN" : "_UP")};
  if (l.duplex_overhead > 0) out.push_back(l.name);
  return out;
}

}  // namespace orrery
