#include "platforms/simgrid_xml_load.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cctype>
#include <csignal>
#include <cstdlib>
#include <exception>
#include <simgrid/Exception.hpp>
#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <unordered_map>

#include "common/child_process.h"
#include "common/errors.h"
#include "common/input_file.h"
#include "common/size_guard.h"

namespace orrery {
namespace {

void load_or_throw(simgrid::s4u::Engine& engine, const std::string& file) {
  try {
    engine.load_platform(file);
  } catch (const simgrid::ParseError& e) {
    // SimGrid says "Parse error at FILE:LINE: WHAT"; keep FILE:LINE first, as every other
    // input error does.
    std::string what = e.what();
    const std::string prefix = "Parse error at ";
    if (what.rfind(prefix, 0) == 0) what = what.substr(prefix.size());
    const size_t colon = what.find(": ");
    if (colon != std::string::npos && what.compare(0, file.size(), file) == 0) {
      throw InputError(what.substr(0, colon) + ": SimGrid XML platform: " + what.substr(colon + 2));
    }
    throw InputError(file + ": SimGrid XML platform: " + what);
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    throw InputError(file + ": SimGrid XML platform: " + e.what());
  }
}

// Whether routes in `file` are what leaf routes assume: one zone, routed by Dijkstra, no bypass
// routes (a cluster or a second zone shows up as a child zone after loading).
// What SimGrid holds per host of a loaded file (a cluster's host, its private link and route),
// measured: a cluster of 10^6 hosts took 2.9 GB.
constexpr double kBytesPerXmlHost = 3000;

// The hosts a file declares: its <host> elements and the members of every cluster's radical
// ("0-99999,200"), counted from the text before SimGrid expands them.
double declared_hosts(const std::string& text) {
  double hosts = 0;
  for (size_t at = text.find("<host"); at != std::string::npos; at = text.find("<host", at + 5))
    if (at + 5 < text.size() && std::isspace(static_cast<unsigned char>(text[at + 5]))) ++hosts;
  for (size_t at = text.find("radical"); at != std::string::npos;
       at = text.find("radical", at + 7)) {
    size_t p = at + 7;
    while (p < text.size() && std::isspace(static_cast<unsigned char>(text[p]))) ++p;
    if (p >= text.size() || text[p] != '=') continue;
    ++p;
    while (p < text.size() && std::isspace(static_cast<unsigned char>(text[p]))) ++p;
    if (p >= text.size() || (text[p] != '"' && text[p] != '\'')) continue;
    const size_t end = text.find(text[p], p + 1);
    if (end == std::string::npos) break;
    const std::string list = text.substr(p + 1, end - p - 1);
    size_t from = 0;
    while (from <= list.size()) {
      size_t comma = list.find(',', from);
      if (comma == std::string::npos) comma = list.size();
      const std::string item = list.substr(from, comma - from);
      const size_t dash = item.find('-');
      double count = 1;
      if (dash != std::string::npos) {
        const double lo = std::strtod(item.substr(0, dash).c_str(), nullptr);
        const double hi = std::strtod(item.substr(dash + 1).c_str(), nullptr);
        count = hi >= lo ? hi - lo + 1 : 1;
      }
      hosts += count;
      from = comma + 1;
    }
  }
  return hosts;
}

bool one_dijkstra_zone(const std::string& file) {
  const std::string text = read_input_file(file, "SimGrid XML platform", size_t{1} << 30);
  if (text.find("bypass") != std::string::npos) return false;
  int zones = 0;
  for (size_t at = text.find("routing"); at != std::string::npos;
       at = text.find("routing", at + 1)) {
    size_t p = at + 7;
    while (p < text.size() && std::isspace(static_cast<unsigned char>(text[p]))) ++p;
    if (p >= text.size() || text[p] != '=') continue;  // the word elsewhere (a comment)
    ++p;
    while (p < text.size() && std::isspace(static_cast<unsigned char>(text[p]))) ++p;
    if (p >= text.size() || (text[p] != '"' && text[p] != '\'')) continue;
    const size_t end = text.find(text[p], p + 1);
    if (end == std::string::npos) return false;
    const std::string r = text.substr(p + 1, end - p - 1);
    if (r != "Dijkstra" && r != "DijkstraCache") return false;
    ++zones;
  }
  return zones == 1;
}

// The route graph's steps as SimGrid stores them: `links` as given for src -> dst, and for a
// symmetrical route dst -> src over the reversed list, each split-duplex half by its other half.
struct Recorder {
  struct Raw {
    std::string src, dst;
    std::vector<const void*> links;  // StandardLinkImpl*, opaque in SimGrid's public headers
    bool symmetrical;
  };
  std::vector<Raw> raw;

  std::vector<GraphStep> steps(simgrid::s4u::Engine& engine) const {
    namespace sg4 = simgrid::s4u;
    std::unordered_map<const void*, sg4::Link*> by_impl;
    for (sg4::Link* l : engine.get_all_links()) by_impl[l->get_impl()] = l;
    auto other_half = [&](sg4::Link* l) -> sg4::Link* {
      const std::string& n = l->get_name();
      for (const char* suffix : {"_UP", "_DOWN"}) {
        const std::string s = suffix;
        if (n.size() <= s.size() || n.compare(n.size() - s.size(), s.size(), s) != 0) continue;
        try {
          auto* duplex = engine.split_duplex_link_by_name(n.substr(0, n.size() - s.size()));
          if (duplex->get_link_up() == l) return duplex->get_link_down();
          if (duplex->get_link_down() == l) return duplex->get_link_up();
        } catch (const std::invalid_argument&) {
          // a plain link whose name ends that way
        }
      }
      return l;
    };
    std::vector<GraphStep> out;
    for (const Raw& r : raw) {
      GraphStep forward{r.src, r.dst, {}};
      for (const void* impl : r.links) forward.links.push_back(by_impl.at(impl)->get_name());
      if (r.symmetrical) {
        GraphStep back{r.dst, r.src, {}};
        for (auto it = r.links.rbegin(); it != r.links.rend(); ++it)
          back.links.push_back(other_half(by_impl.at(*it))->get_name());
        out.push_back(std::move(forward));
        out.push_back(std::move(back));
      } else {
        out.push_back(std::move(forward));
      }
    }
    return out;
  }
};

}  // namespace

std::vector<GraphStep> load_xml_platform(simgrid::s4u::Engine& engine, const std::string& file,
                                         bool* complete) {
  if (complete) *complete = false;
  require_regular_file(file, "SimGrid XML platform");
  // A cluster's radical of 10^8 would make SimGrid allocate for minutes before any error:
  // refused with the count, as a generated platform of that size is.
  {
    const std::string text = read_input_file(file, "SimGrid XML platform", size_t{1} << 30);
    const double hosts = declared_hosts(text);
    // Full and Floyd zones keep a table of every pair of their points (measured: 20,000 hosts
    // in a Full zone took 3.1 GB, 8 bytes a pair).
    const bool pair_table = text.find("\"Full\"") != std::string::npos ||
                            text.find("'Full'") != std::string::npos ||
                            text.find("\"Floyd\"") != std::string::npos ||
                            text.find("'Floyd'") != std::string::npos;
    SizeEstimate e;
    e.memory_bytes = hosts * kBytesPerXmlHost + (pair_table ? 16 * hosts * hosts : 0);
    e.basis = approximate_count(hosts) + " hosts" +
              (pair_table ? std::string(", a route table of every pair (Full or Floyd routing)")
                          : std::string());
    check_size(e, file, "loading this platform");
  }
  // SimGrid crashes instead of throwing on some malformed platforms (a second route between two
  // hosts, for one): load it once in a throw-away child, so such a file is reported as the
  // user's error rather than as a crash of the simulation.
  try {
    run_in_child(
        [&] {
          struct rlimit none = {0, 0};
          setrlimit(RLIMIT_CORE, &none);
          // SimGrid's own report of a crash would reach the terminal before ours.
          const int quiet = ::open("/dev/null", O_WRONLY);
          if (quiet >= 0) ::dup2(quiet, STDERR_FILENO);
          signal(SIGALRM, SIG_DFL);
          alarm(60);
          load_or_throw(engine, file);
          return std::string();
        },
        "SimGrid");
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    throw InputError(file + ": SimGrid XML platform: " + e.what() +
                     " while loading it; the file is malformed (for instance a second route "
                     "between the same two hosts)");
  }
  using simgrid::kernel::routing::NetPoint;
  using simgrid::kernel::routing::NetZoneImpl;
  Recorder recorder;
  const unsigned id = NetZoneImpl::on_route_creation.connect(
      [&recorder](bool symmetrical, NetPoint* src, NetPoint* dst, NetPoint*, NetPoint*,
                  const std::vector<simgrid::kernel::resource::StandardLinkImpl*>& links) {
        recorder.raw.push_back({src->get_name(), dst->get_name(),
                                std::vector<const void*>(links.begin(), links.end()), symmetrical});
      });
  try {
    load_or_throw(engine, file);
  } catch (...) {
    NetZoneImpl::on_route_creation.disconnect(id);
    throw;
  }
  NetZoneImpl::on_route_creation.disconnect(id);
  if (!engine.get_netzone_root()->get_children().empty() || !one_dijkstra_zone(file)) return {};
  if (complete) *complete = true;
  return recorder.steps(engine);
}

}  // namespace orrery
