// MaestroList: keep host-to-host comms off SimGrid 3.32's list of maestro's activities.
//
// Comm::sendto_init() puts every comm on maestro's std::list of activities, and the comm's
// finish() takes it off with list::remove: a scan of the whole list, ~15 ns a node. With
// thousands of flows in flight every completion pays for all of them, and a 1,024-GPU
// data-parallel replay spent 47% of its time in that scan (perf, bench/dp50_bench). The replay
// holds its own reference to each comm and polls it (engine/replay.cc), so the list's entry is
// redundant: evict() pops it right after the comm is created, and finish() then scans a list
// that stays short.
//
// The list is a member of SimGrid's private ActorImpl class. Rather than assume its offset, the
// first comm finds it: the bytes of maestro's ActorImpl are compared before and after
// sendto_init(), and the list is the {next, prev, size} triple whose prev moved to a new node
// holding this comm and whose size grew by one. Every later evict() checks that the list's last
// entry is the comm it was given before popping it; at the first mismatch it stops for good, and
// comms stay on the list as SimGrid left them (same results, slower). Enabled for SimGrid 3.32
// exactly, like engine/owner_free.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <simgrid/s4u/Comm.hpp>

namespace orrery {

class MaestroList {
 public:
  // Creates a comm with `make` (it calls sendto_init) and takes it off maestro's list.
  template <class Make>
  simgrid::s4u::CommPtr create(Make make) {
    if (state_ == State::kOff) return make();
    if (state_ == State::kUnknown) {
      const Snapshot before = snapshot();
      simgrid::s4u::CommPtr comm = make();
      if (state_ == State::kUnknown) locate(before, comm->get_impl());
      if (state_ == State::kOn) evict(comm->get_impl());
      return comm;
    }
    simgrid::s4u::CommPtr comm = make();
    if (state_ == State::kOn) evict(comm->get_impl());
    return comm;
  }

  bool on() const { return state_ == State::kOn; }

 private:
  using List = std::list<simgrid::kernel::activity::ActivityImplPtr>;
  // The list sits 192 bytes into ActorImpl in 3.32; the scan stays inside the object.
  static constexpr size_t kScanWords = 32;
  struct Snapshot {
    const uintptr_t* actor = nullptr;
    uintptr_t words[kScanWords] = {};
  };
  enum class State { kUnknown, kOn, kOff };

  Snapshot snapshot();
  void locate(const Snapshot& before, const void* impl);
  void evict(const void* impl);

  State state_ = State::kUnknown;
  List* list_ = nullptr;
};

}  // namespace orrery
