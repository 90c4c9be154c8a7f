#include "sweeps/progress.h"

#include <cmath>
#include <cstdio>

namespace orrery {

Progress::Progress(ProgressMode mode, int total, int already_done, double interval_s)
    : mode_(mode), total_(total), already_done_(already_done), interval_s_(interval_s) {}

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
  if (mode_ == ProgressMode::kOff) return;
  auto now = Clock::now();
  const auto gap = mode_ == ProgressMode::kTerminal
                       ? std::chrono::duration<double>(0.2)
                       : std::chrono::duration<double>(interval_s_);
  if (!force && drawn_ && now - last_draw_ < gap) return;
  // A log gets a line when the count moved, or the first one: the same line twice says nothing.
  if (mode_ == ProgressMode::kLines && done == last_done_) return;
  last_draw_ = now;
  last_done_ = done;
  double elapsed = std::chrono::duration<double>(now - start_).count();
  int finished_now = done - already_done_;
  double eta = finished_now > 0 ? elapsed / finished_now * (total_ - done) : -1;
  if (mode_ == ProgressMode::kTerminal)
    std::fprintf(stderr, "\rsweep: %d/%d done, %d failed, %d running, ETA %s\033[K", done,
                 total_, failed, running, format_eta(eta).c_str());
  else
    std::fprintf(stderr, "sweep: %d/%d done, %d failed, %d running, ETA %s (%s elapsed)\n", done,
                 total_, failed, running, format_eta(eta).c_str(), format_eta(elapsed).c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void Progress::finish() {
  if (mode_ == ProgressMode::kTerminal && drawn_) std::fprintf(stderr, "\n");
  drawn_ = false;
}

}  // namespace orrery
