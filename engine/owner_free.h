// OwnerFreeScope: create SimGrid execs that no actor owns.
//
// SimGrid 3.32 gives every activity created from maestro to maestro, keeps it on maestro's
// std::list and removes it with list::remove (a full scan, ~15 ns a node) when it finishes: with
// a thousand kernels in flight each completion costs ~15 us, half of a 1,024-GPU replay (perf,
// scenarios/bench/resnet50-1024.yaml). An exec created while no context is current gets no
// owner and stays off every list; SimGrid's simcall_answered() treats "no context" as maestro
// and runs the code directly. Such execs fire no completion callback (3.32 fires them for
// maestro's activities only), so the replay polls them (engine/replay.cc).
//
// This needs simgrid::kernel::context::Context::self()/set_current(), exported by
// libsimgrid.so.3.32 but declared only in SimGrid's private headers, so it is enabled for
// SimGrid 3.32 exactly; any other version falls back to owned execs (same results, slower).
#pragma once

#include <simgrid/version.h>

#if SIMGRID_VERSION_MAJOR == 3 && SIMGRID_VERSION_MINOR == 32
#define ORRERY_OWNER_FREE_EXECS 1
namespace simgrid::kernel::context {
class Context {
 public:
  static Context* self();
  static void set_current(Context* self);
};
}  // namespace simgrid::kernel::context
#else
#define ORRERY_OWNER_FREE_EXECS 0
#endif

namespace orrery {

inline constexpr bool kOwnerFreeExecs = ORRERY_OWNER_FREE_EXECS != 0;

class OwnerFreeScope {
 public:
#if ORRERY_OWNER_FREE_EXECS
  OwnerFreeScope() : saved_(simgrid::kernel::context::Context::self()) {
    simgrid::kernel::context::Context::set_current(nullptr);
  }
  ~OwnerFreeScope() { simgrid::kernel::context::Context::set_current(saved_); }

 private:
  simgrid::kernel::context::Context* saved_;

 public:
#else
  OwnerFreeScope() = default;
#endif
  OwnerFreeScope(const OwnerFreeScope&) = delete;
  OwnerFreeScope& operator=(const OwnerFreeScope&) = delete;
};

}  // namespace orrery
