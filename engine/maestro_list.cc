#include "engine/maestro_list.h"

#include <simgrid/version.h>

#include <cstring>

#if SIMGRID_VERSION_MAJOR == 3 && SIMGRID_VERSION_MINOR == 32
#define ORRERY_MAESTRO_LIST 1
// Exported by libsimgrid.so.3.32, declared only in SimGrid's private headers. Called from the
// replay's callbacks, which run in maestro's context, it returns maestro.
namespace simgrid::kernel::actor {
class ActorImpl {
 public:
  static ActorImpl* self();
};
}  // namespace simgrid::kernel::actor
#else
#define ORRERY_MAESTRO_LIST 0
#endif

namespace orrery {

MaestroList::Snapshot MaestroList::snapshot() {
  Snapshot s;
#if ORRERY_MAESTRO_LIST
  s.actor = reinterpret_cast<const uintptr_t*>(simgrid::kernel::actor::ActorImpl::self());
  if (s.actor) std::memcpy(s.words, s.actor, sizeof s.words);
#else
  state_ = State::kOff;
#endif
  return s;
}

void MaestroList::locate(const Snapshot& before, const void* impl) {
  if (!before.actor) return;  // not in maestro's context yet: try with the next comm
  const uintptr_t* now = before.actor;
  List* found = nullptr;
  int candidates = 0;
  // libstdc++'s std::list is {next, prev, size}; a node is {next, prev, value}.
  for (size_t o = 0; o + 2 < kScanWords; ++o) {
    const uintptr_t header = reinterpret_cast<uintptr_t>(&now[o]);
    if (now[o + 2] != before.words[o + 2] + 1 || now[o + 1] == before.words[o + 1]) continue;
    if (now[o + 1] == 0 || now[o + 1] % alignof(void*) != 0) continue;
    const auto* node = reinterpret_cast<const uintptr_t*>(now[o + 1]);
    if (node[0] != header || node[2] != reinterpret_cast<uintptr_t>(impl)) continue;
    found = reinterpret_cast<List*>(&const_cast<uintptr_t*>(now)[o]);
    ++candidates;
  }
  if (candidates == 1) {
    list_ = found;
    state_ = State::kOn;
  } else {
    state_ = State::kOff;
  }
}

void MaestroList::evict(const void* impl) {
  if (list_->empty() || list_->back().get() != impl) {
    state_ = State::kOff;  // not the layout we found: leave SimGrid's list alone from now on
    return;
  }
  list_->pop_back();  // the caller's CommPtr still holds the comm
}

}  // namespace orrery
