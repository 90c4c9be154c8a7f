#include "platforms/simgrid_xml_load.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <exception>
#include <simgrid/Exception.hpp>

#include "common/child_process.h"
#include "common/errors.h"
#include "common/input_file.h"

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

}  // namespace

void load_xml_platform(simgrid::s4u::Engine& engine, const std::string& file) {
  require_regular_file(file, "SimGrid XML platform");
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
  load_or_throw(engine, file);
}

}  // namespace orrery
