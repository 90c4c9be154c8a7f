// Running work in a forked child process and getting its answer back. SimGrid allows one Engine
// per process and abort()s on internal errors (docs/design.md, SimGrid fact 3), so every
// simulation that is not the process's only one runs this way.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace orrery {

// Forks, runs `body` in the child and returns the string it produced. An InputError thrown in
// the child is rethrown here as InputError, any other exception as std::runtime_error with its
// message; a child that dies (a signal, a SimGrid abort) or exits without an answer becomes a
// std::runtime_error naming `what` and the signal or status.
std::string run_in_child(const std::function<std::string()>& body, const std::string& what);

// A child started by start_in_child, running beside this process (the other cores) until
// finish() collects its answer as run_in_child returns it. Destroying it unfinished kills the
// child: nothing is left running when the caller gives up on the way.
class ChildRun {
 public:
  ChildRun(int pid, int fd, std::string what) : pid_(pid), fd_(fd), what_(std::move(what)) {}
  ChildRun(ChildRun&& other) noexcept;
  ChildRun& operator=(ChildRun&&) = delete;
  ChildRun(const ChildRun&) = delete;
  ~ChildRun();
  std::string finish();

 private:
  int pid_;
  int fd_;
  std::string what_;
};
ChildRun start_in_child(const std::function<std::string()>& body, const std::string& what);

// Runs the program argv[0] with its arguments (no shell) and returns what it printed on
// stdout. A program that cannot start, dies or exits with a status other than 0 throws, with
// `what` and the last line it wrote to stderr: InputError for status 2 (bad input, as every
// Orrery command exits), std::runtime_error otherwise.
std::string run_program(const std::vector<std::string>& argv, const std::string& what);

}  // namespace orrery
