// What SimGrid itself makes of a platform: its links and the routes it takes between hosts.
// Asked in a forked child, since SimGrid allows one Engine per process; used by tests to check
// that generated platforms and their XML export route as Orrery intends.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "platforms/simgrid_platform.h"

namespace orrery {

struct ProbedLink {
  std::string name;
  double bandwidth = 0.0;
  double latency = 0.0;
  std::string link_class;  // the link's "class" property; empty when it has none
};

struct ProbedRoute {
  std::string src;
  std::string dst;
  std::vector<std::string> links;  // in SimGrid's order
  double latency = 0.0;
};

struct PlatformProbe {
  std::vector<std::string> hosts;  // sorted by name
  // Each host's SimGrid properties (hosts without any are absent).
  std::map<std::string, std::map<std::string, std::string>> properties;
  std::vector<ProbedLink> links;    // sorted by name
  std::vector<ProbedRoute> routes;  // one per requested pair, in order
};

// Loads `platform` into a fresh Engine in a child process and reads it back. Throws InputError
// or std::runtime_error (SimGrid failure) from the child.
PlatformProbe probe_platform(const PlatformSource& platform,
                             const std::vector<std::pair<std::string, std::string>>& pairs);

}  // namespace orrery
