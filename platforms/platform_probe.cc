#include "platforms/platform_probe.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <simgrid/s4u.hpp>
#include <sstream>
#include <stdexcept>

#include "engine/errors.h"

namespace sg4 = simgrid::s4u;

namespace orrery {
namespace {

// Line format, fields separated by tabs (names hold neither tabs nor newlines):
//   H name | L name bandwidth latency class | R src dst latency link...
std::string probe_here(const PlatformSource& platform,
                       const std::vector<std::pair<std::string, std::string>>& pairs) {
  int argc = 2;
  char arg0[] = "orrery";
  char arg1[] = "--log=root.thresh:critical";
  char* argv[] = {arg0, arg1, nullptr};
  sg4::Engine engine(&argc, argv);
  apply_network_config();
  load_platform(platform);
  std::ostringstream o;
  o.precision(17);
  for (auto* h : engine.get_all_hosts()) o << "H\t" << h->get_name() << "\n";
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
  std::fflush(nullptr);  // the child must not inherit unflushed output
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::close(fds[0]);
    // First byte: 0 result, 2 input error, 1 other error; the text follows.
    std::string payload;
    try {
      payload = '\0' + probe_here(platform, pairs);
    } catch (const InputError& e) {
      payload = std::string("\2") + e.what();
    } catch (const std::exception& e) {
      payload = std::string("\1") + e.what();
    }
    const char* p = payload.data();
    size_t n = payload.size();
    while (n > 0) {
      ssize_t k = ::write(fds[1], p, n);
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) _exit(3);
      p += k;
      n -= static_cast<size_t>(k);
    }
    _exit(0);
  }
  ::close(fds[1]);
  std::string data;
  char buf[1 << 16];
  for (;;) {
    ssize_t k = ::read(fds[0], buf, sizeof buf);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    data.append(buf, static_cast<size_t>(k));
  }
  ::close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (data.empty())
    throw std::runtime_error("platform probe: the SimGrid child process died (status " +
                             std::to_string(status) + ")");
  if (data[0] == '\2') throw InputError(data.substr(1));
  if (data[0] == '\1') throw std::runtime_error(data.substr(1));
  return parse(data.substr(1));
}

}  // namespace orrery
