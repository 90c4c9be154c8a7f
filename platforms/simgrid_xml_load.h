// Loading a user's SimGrid XML platform file so that every problem with it is the user's
// InputError (exit status 2) naming the file and, where SimGrid knows it, the line.
#pragma once

#include <simgrid/s4u.hpp>
#include <string>
#include <vector>

#include "platforms/simgrid_platform.h"

namespace orrery {

// Refuses anything but a regular file (a FIFO would block SimGrid's parser), then has SimGrid
// parse it. SimGrid's parse errors ("Parse error at FILE:LINE: ...") and any other exception
// it throws while building the platform become InputError("FILE:LINE: SimGrid XML platform:
// ...").
//
// Returns the route graph SimGrid built (its routes as it stored them: a symmetrical route
// also backwards, split-duplex links by their other half) when the whole platform is one zone
// routed by Dijkstra or DijkstraCache and the file has no bypass routes, so that routes can be
// found from the routers hosts hang off (engine/leaf_routes.h); empty otherwise. `complete`
// (when given) says whether the returned steps are the whole of the platform's routing (one
// Dijkstra zone): then two hosts no chain of steps joins have no route, which SimGrid 3.32's
// Dijkstra lookup does not survive (it crashes), so the caller must not ask it.
std::vector<GraphStep> load_xml_platform(simgrid::s4u::Engine& engine, const std::string& file,
                                         bool* complete = nullptr);

}  // namespace orrery
