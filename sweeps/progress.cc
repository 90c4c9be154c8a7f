#include "sweeps/progress.h"

#include <cmath>
#include <cstdio>

namespace orrery {

Progress::Progress(bool enabled, int total, int already_done)
    : enabled_(enabled), total_(total), already_done_(already_done) {}

std::string Progress::format_eta(double seconds) {
  if (seconds < 0 || !std::isfinite(seconds)) return "--:--";
  long s = std::lround(seconds);
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
  return buf;
}

void Progress::update(int done, int failed, int running, bool force) {
  if (!enabled_) return;
  auto now = Clock::now();
  if (!force && drawn_ && now - last_draw_ < std::chrono::milliseconds(200)) return;
  last_draw_ = now;
  double elapsed = std::chrono::duration<double>(now - start_).count();
  int finished_now = done - already_done_;
  double eta = finished_now > 0 ? elapsed / finished_now * (total_ - done) : -1;
  std::fprintf(stderr, "\rsweep: %d/%d done, %d failed, %d running, ETA %s\033[K", done, total_,
               failed, running, format_eta(eta).c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void Progress::finish() {
  if (enabled_ && drawn_) std::fprintf(stderr, "\n");
  drawn_ = false;
}

}  // namespace orrery
