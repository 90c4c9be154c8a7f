// A sweep's progress. On a terminal, one line redrawn in place at most a few times a second:
//   sweep: 37/128 done, 1 failed, 2 running, ETA 0:42
// When stderr is a log (mpirun, nohup, a Slurm job), the same words as a new line every
// `interval` seconds and once at the end, so a log shows how far a long sweep got.
#pragma once

#include <chrono>
#include <string>

namespace orrery {

enum class ProgressMode { kOff, kTerminal, kLines };

class Progress {
 public:
  // `mode` is usually kTerminal when isatty(stderr), kLines when not, kOff with --quiet.
  // `already_done` points were finished before this run (resumed) and do not count towards the
  // rate behind the ETA.
  Progress(ProgressMode mode, int total, int already_done, double interval_s = 10.0);
  void update(int done, int failed, int running, bool force = false);
  void finish();  // ends the line

  // "0:42", "1:02:03"; "--:--" for a negative value.
  static std::string format_eta(double seconds);

 private:
  using Clock = std::chrono::steady_clock;
  ProgressMode mode_;
  int total_;
  int already_done_;
  double interval_s_;
  bool drawn_ = false;
  int last_done_ = -1;  // kLines: what the last line said
  Clock::time_point start_ = Clock::now();
  Clock::time_point last_draw_{};
};

}  // namespace orrery
