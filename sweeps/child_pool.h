// Runs tasks in forked child processes, a bounded number at once, and collects what each
// writes back. One child per task because SimGrid allows one Engine per process and aborts on
// internal errors (docs/design.md, SimGrid fact 3): a crash costs one task, never the
// caller.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace orrery {

struct ChildExit {
  int64_t task = 0;
  bool completed = false;  // the child returned from its work and exited normally
  std::string payload;     // what the work returned (when completed)
  std::string failure;     // otherwise: how it died, with the tail of its output
  int signal = 0;          // the signal that killed it; 0 when it exited
};

// CPUs for the children of a pool, one per slot: the CPUs this process may run on, rotated
// by `local_rank * slots` so that ranks sharing a node do not pick the same ones. Empty (no
// binding) when there is only one CPU to choose from or only one child at a time on the node.
// Binding matters on small shared machines: on the 2-core development VM two unbound children
// ran no faster than one, two bound ones 1.7 to 2.2 times faster (docs/sweeps.md).
std::vector<int> child_cpus(int slots, int local_rank, int local_ranks);

class ChildPool {
 public:
  // `cpus` (from child_cpus) binds the child in slot k to cpus[k % size]; empty: no binding.
  explicit ChildPool(int slots, std::vector<int> cpus = {});
  ~ChildPool();  // kills and reaps children still running
  ChildPool(const ChildPool&) = delete;
  ChildPool& operator=(const ChildPool&) = delete;

  int slots() const { return slots_; }
  int running() const { return static_cast<int>(children_.size()); }
  bool full() const { return running() >= slots_; }

  // Forks a child that runs `work` and hands its return value back. In the child SIGINT is
  // ignored (the parent decides what an interrupt means), it dies with the parent, its stdout
  // and stderr are captured, and it leaves with _exit: no atexit handler, no MPI, no flush of
  // the parent's buffers. `work` must not throw.
  void start(int64_t task, const std::function<std::string()>& work);

  // Waits up to `timeout_ms` (-1: until a child ends) and returns the children that ended.
  // Returns early, possibly empty, when a signal interrupts the wait.
  std::vector<ChildExit> wait(int timeout_ms);

  // SIGKILLs every running child, reaps it, and returns the tasks it was running.
  std::vector<int64_t> kill_all();

 private:
  struct Child {
    int64_t task;
    int slot;
    pid_t pid;
    int result_fd;  // the work's return value
    int output_fd;  // stdout and stderr
    std::string payload;
    std::string output;
  };
  ChildExit reap(Child& c);

  int slots_;
  std::vector<int> cpus_;
  std::vector<Child> children_;
};

// "SIGABRT" for 6, "signal 42" for an unnamed one.
std::string signal_name(int sig);

}  // namespace orrery
