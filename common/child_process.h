// Running work in a forked child process and getting its answer back. SimGrid allows one Engine
// per process and abort()s on internal errors (docs/design.md, SimGrid fact 3), so every
// simulation that is not the process's only one runs this way.
#pragma once

#include <functional>
#include <string>

namespace orrery {

// Forks, runs `body` in the child and returns the string it produced. An InputError thrown in
// the child is rethrown here as InputError, any other exception as std::runtime_error with its
// message; a child that dies (a signal, a SimGrid abort) or exits without an answer becomes a
// std::runtime_error naming `what` and the signal or status.
std::string run_in_child(const std::function<std::string()>& body, const std::string& what);

}  // namespace orrery
