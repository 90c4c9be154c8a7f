#include "platforms/simgrid_xml_load.h"

#include <exception>
#include <simgrid/Exception.hpp>

#include "common/input_file.h"
#include "engine/errors.h"

namespace orrery {

void load_xml_platform(simgrid::s4u::Engine& engine, const std::string& file) {
  require_regular_file(file, "SimGrid XML platform");
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

}  // namespace orrery
