// One writer per output file: a process that will write `path` for a while (a sweep) holds an
// advisory lock (flock) on "<path>.lock" (beside the file the path resolves to, so a symbolic
// link to the output shares it) until it is done, so a second sweep aiming at the same output
// refuses at once instead of interleaving its writes, and any other writer of it
// (common/atomic_file.h: `orrery run -o`, `sweep --point`) refuses too. The lock file says who holds
// it (pid, host, start time), for the second process's message. The kernel drops the lock when
// its holder dies, so a stale lock file left by a killed process does not block anyone.
#pragma once

#include <string>

namespace orrery {

class OutputLock {
 public:
  // Takes the lock or throws InputError naming `path` and the holder ("pid 123 on host h since
  // 2026-01-01 12:00:00 UTC"). Throws InputError too when the lock file cannot be created.
  explicit OutputLock(const std::string& path);
  ~OutputLock();  // removes the lock file and releases the lock
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;

  const std::string& lock_path() const { return lock_path_; }

 private:
  std::string output_;
  std::string lock_path_;
  int fd_ = -1;
};

std::string lock_path_for(const std::string& output);

}  // namespace orrery
