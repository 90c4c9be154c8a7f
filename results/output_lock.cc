#include "results/output_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include "common/atomic_file.h"
#include "common/errors.h"

namespace orrery {
namespace {

std::string holder_text() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) std::strcpy(host, "unknown");
  char when[64] = "an unknown time";
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  if (gmtime_r(&now, &tm) != nullptr)
    std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return "pid " + std::to_string(getpid()) + " on host " + host + " since " + when;
}

std::string read_holder(int fd) {
  char buf[512] = {};
  ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
  std::string text = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
  while (!text.empty() && (text.back() == '\n' || text.back() == '\0')) text.pop_back();
  // Only what this class writes is shown as is; anything else is not to be trusted.
  for (char c : text)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) return "";
  return text;
}

}  // namespace

std::string lock_path_for(const std::string& output) { return output_lock_path(output); }

OutputLock::OutputLock(const std::string& path)
    : output_(path), lock_path_(lock_path_for(path)) {
  // Another holder may remove the lock file between our open and our flock: then the lock we
  // got is on a file nobody else will see, so check that the path still names it, and retry.
  for (int attempt = 0; attempt < 10; ++attempt) {
    int fd = ::open(lock_path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) {
      throw InputError(path + ": cannot create the lock file " + lock_path_ + ": " +
                       std::strerror(errno));
    }
    struct stat by_fd, by_path;
    if (::fstat(fd, &by_fd) != 0 || !S_ISREG(by_fd.st_mode)) {
      ::close(fd);
      throw InputError(path + ": the lock file " + lock_path_ + " is not a regular file");
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      std::string holder = err == EWOULDBLOCK ? read_holder(fd) : "";
      ::close(fd);
      if (err != EWOULDBLOCK) {
        throw InputError(path + ": cannot lock " + lock_path_ + ": " + std::strerror(err));
      }
      throw InputError(path + ": another Orrery process is writing this output (" +
                       (holder.empty() ? std::string("holder unknown") : holder) + ", lock file " +
                       lock_path_ + "); wait for it to finish or choose another output");
    }
    if (::stat(lock_path_.c_str(), &by_path) != 0 || by_path.st_ino != by_fd.st_ino ||
        by_path.st_dev != by_fd.st_dev) {
      ::close(fd);
      continue;
    }
    const std::string holder = holder_text() + "\n";
    if (::ftruncate(fd, 0) != 0 ||
        ::pwrite(fd, holder.data(), holder.size(), 0) != static_cast<ssize_t>(holder.size())) {
      // The lock holds without its description; a second process then says "holder unknown".
    }
    fd_ = fd;
    note_output_lock(output_, true);
    return;
  }
  throw InputError(path + ": cannot lock " + lock_path_ + ": it keeps being replaced");
}

OutputLock::~OutputLock() {
  if (fd_ < 0) return;
  note_output_lock(output_, false);
  ::unlink(lock_path_.c_str());  // while still holding the lock: see the constructor's check
  ::close(fd_);
}

}  // namespace orrery
