// Loading a user's SimGrid XML platform file so that every problem with it is the user's
// InputError (exit status 2) naming the file and, where SimGrid knows it, the line.
#pragma once

#include <simgrid/s4u.hpp>
#include <string>

namespace orrery {

// Refuses anything but a regular file (a FIFO would block SimGrid's parser), then has SimGrid
// parse it. SimGrid's parse errors ("Parse error at FILE:LINE: ...") and any other exception
// it throws while building the platform become InputError("FILE:LINE: SimGrid XML platform:
// ...").
void load_xml_platform(simgrid::s4u::Engine& engine, const std::string& file);

}  // namespace orrery
