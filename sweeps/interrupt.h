// Ctrl-C, SIGTERM and SIGHUP during a sweep: the handler only records the signal; the sweep loop
// sees it (its wait returns early), stops starting points, kills its children, writes a valid
// results file and leaves. Points that were running are not recorded, so they run on resume.
#pragma once

namespace orrery {

class InterruptGuard {
 public:
  InterruptGuard();   // installs handlers for SIGINT, SIGTERM and SIGHUP (no SA_RESTART)
  ~InterruptGuard();  // restores the previous ones
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

  static bool interrupted();
  static int signal_number();  // the first signal received, 0 if none
};

}  // namespace orrery
