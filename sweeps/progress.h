// The one-line progress display of a sweep on a terminal:
//   sweep: 37/128 done, 1 failed, 2 running, ETA 0:42
// redrawn in place at most a few times a second; nothing at all when stderr is not a
// terminal (logs and CI stay clean).
#pragma once

#include <chrono>
#include <string>

namespace orrery {

class Progress {
 public:
  // `enabled` is usually isatty(stderr) && !quiet. `already_done` points were finished before
  // this run (resumed) and do not count towards the rate behind the ETA.
  Progress(bool enabled, int total, int already_done);
  void update(int done, int failed, int running, bool force = false);
  void finish();  // ends the line

  // "0:42", "1:02:03"; "--:--" for a negative value.
  static std::string format_eta(double seconds);

 private:
  using Clock = std::chrono::steady_clock;
  bool enabled_;
  int total_;
  int already_done_;
  bool drawn_ = false;
  Clock::time_point start_ = Clock::now();
  Clock::time_point last_draw_{};
};

}  // namespace orrery
