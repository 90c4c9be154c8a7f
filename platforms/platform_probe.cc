#include "platforms/platform_probe.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <simgrid/s4u.hpp>
#include <sstream>
#include <stdexcept>

#include "common/child_process.h"
#include "common/errors.h"

namespace sg4 = simgrid::s4u;

namespace orrery {
namespace {

// Line format, fields separated by tabs (names hold neither tabs nor newlines):
//   H name | P host key value | L name bandwidth latency class | R src dst latency link...
std::string probe_here(const PlatformSource& platform,
                       const std::vector<std::pair<std::string, std::string>>& pairs) {
  auto engine_owner = start_engine(platform);
  sg4::Engine& engine = *engine_owner;
  std::ostringstream o;
  o.precision(17);
  for (auto* h : engine.get_all_hosts()) {
    o << "H\t" << h->get_name() << "\n";
    if (const auto* props = h->get_properties())
      for (const auto& [k, v] : *props)
        o << "P\t" << h->get_name() << "\t" << k << "\t" << v << "\n";
  }
  for (auto* l : engine.get_all_links()) {
    const char* cls = l->get_property("class");
    o << "L\t" << l->get_name() << "\t" << l->get_bandwidth() << "\t" << l->get_latency() << "\t"
      << (cls ? cls : "") << "\n";
  }
  for (const auto& [a, b] : pairs) {
    auto* src = sg4::Host::by_name_or_null(a);
    auto* dst = sg4::Host::by_name_or_null(b);
    if (!src || !dst) throw InputError("platform has no host \"" + (src ? b : a) + "\"");
    std::vector<sg4::Link*> links;
    double latency = 0;
    src->route_to(dst, links, &latency);
    o << "R\t" << a << "\t" << b << "\t" << latency;
    for (auto* l : links) o << "\t" << l->get_name();
    o << "\n";
  }
  return o.str();
}

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  for (std::string f; std::getline(ss, f, '\t');) out.push_back(f);
  return out;
}

PlatformProbe parse(const std::string& text) {
  PlatformProbe p;
  std::stringstream ss(text);
  for (std::string line; std::getline(ss, line);) {
    auto f = split(line);
    if (f[0] == "H") p.hosts.push_back(f[1]);
    if (f[0] == "P") p.properties[f[1]][f[2]] = f.size() > 3 ? f[3] : "";
    if (f[0] == "L")
      p.links.push_back({f[1], std::stod(f[2]), std::stod(f[3]), f.size() > 4 ? f[4] : ""});
    if (f[0] == "R") {
      ProbedRoute r{f[1], f[2], {}, std::stod(f[3])};
      r.links.assign(f.begin() + 4, f.end());
      p.routes.push_back(r);
    }
  }
  std::sort(p.hosts.begin(), p.hosts.end());
  std::sort(p.links.begin(), p.links.end(),
            [](const ProbedLink& a, const ProbedLink& b) { return a.name < b.name; });
  return p;
}

}  // namespace

PlatformProbe probe_platform(const PlatformSource& platform,
                             const std::vector<std::pair<std::string, std::string>>& pairs) {
  return parse(run_in_child([&] { return probe_here(platform, pairs); }, "platform probe"));
}

}  // namespace orrery
