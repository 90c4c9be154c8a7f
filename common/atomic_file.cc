#include "common/atomic_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>
#include <stdexcept>

#include "common/errors.h"

namespace orrery {
namespace {

std::string parent_dir(const std::string& path) {
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  return dir.empty() ? "." : dir.string();
}

void check_destination(const std::string& path) {
  namespace fs = std::filesystem;
  const std::string dir = parent_dir(path);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw InputError(path + ": cannot write: directory '" + dir + "' does not exist");
  }
  if (access(dir.c_str(), W_OK) != 0) {
    throw InputError(path + ": cannot write: directory '" + dir + "' is not writable (" +
                     std::strerror(errno) + ")");
  }
  if (fs::is_directory(path, ec)) {
    throw InputError(path + ": cannot write: a directory has that name");
  }
  // A rename would replace the node itself: as root, /dev/null would become our file.
  require_file_or_absent(path);
}

std::set<std::string>& held_locks() {
  static std::set<std::string> held;  // this process's own, inherited by its forked writers
  return held;
}

// Another process's flock on the output's lock file (results/output_lock.h) means a sweep is
// writing the output: a second writer would interleave with it or be overwritten.
void require_unlocked(const std::string& path) {
  const std::string lock = output_lock_path(path);
  if (held_locks().count(lock)) return;
  const int fd = ::open(lock.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return;
  struct stat st;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ::flock(fd, LOCK_SH | LOCK_NB) != 0 &&
      errno == EWOULDBLOCK) {
    char holder[256] = {};
    const ssize_t n = ::pread(fd, holder, sizeof holder - 1, 0);
    std::string who = n > 0 ? std::string(holder, static_cast<size_t>(n)) : "holder unknown";
    while (!who.empty() && (who.back() == '\n' || who.back() == '\r')) who.pop_back();
    ::close(fd);
    throw InputError(path + ": another Orrery process is writing this output (" + who +
                     ", lock file " + lock + "); wait for it to finish or choose another path");
  }
  ::close(fd);
}

// "<name>.tmp.<pid>" beside `path` whose process is gone: what a kill -9 left behind.
void remove_stale_temps(const std::string& path) {
  namespace fs = std::filesystem;
  const std::string prefix = fs::path(path).filename().string() + ".tmp.";
  std::error_code ec;
  for (fs::directory_iterator it(parent_dir(path), ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string digits = name.substr(prefix.size());
    if (digits.empty() || digits.size() > 9 ||
        digits.find_first_not_of("0123456789") != std::string::npos)
      continue;
    const pid_t pid = static_cast<pid_t>(std::stol(digits));
    if (pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH) fs::remove(it->path(), ec);
  }
}

// Without this the rename could reach the disk before the data, and a power loss would leave
// the final name over an empty file. Also the last chance to hear of a failed write-back.
void sync_file(const std::string& file_path) {
  int fd = ::open(file_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(std::string("reopen to flush: ") + std::strerror(errno));
  int rc = ::fsync(fd);
  int err = errno;
  int close_rc = ::close(fd);
  if (rc == 0 && close_rc != 0) err = errno;
  if (rc != 0 || close_rc != 0)
    throw std::runtime_error(std::string("fsync: ") + std::strerror(err));
}

}  // namespace

void require_file_or_absent(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return;
  const char* what = S_ISDIR(st.st_mode)                         ? "a directory"
                     : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device node"
                     : S_ISFIFO(st.st_mode)                       ? "a FIFO"
                     : S_ISSOCK(st.st_mode)                       ? "a socket"
                                                                  : "not a regular file";
  throw InputError(path + ": refusing to replace it: it is " + std::string(what));
}

std::string output_lock_path(const std::string& output) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p = fs::absolute(output, ec);
  if (ec) p = output;
  // Follow links by hand: a link to an output the sweep has not written yet dangles, and
  // weakly_canonical leaves a dangling link as it is.
  for (int hops = 0; hops < 40 && fs::is_symlink(p, ec); ++hops) {
    const fs::path target = fs::read_symlink(p, ec);
    if (ec) break;
    p = target.is_absolute() ? target : p.parent_path() / target;
  }
  fs::path real = fs::weakly_canonical(p, ec);
  if (ec) real = p;
  return real.lexically_normal().string() + ".lock";
}

void note_output_lock(const std::string& output, bool held) {
  if (held)
    held_locks().insert(output_lock_path(output));
  else
    held_locks().erase(output_lock_path(output));
}

void require_not_input(const std::string& path, const std::string& what,
                       const std::vector<std::string>& inputs) {
  struct stat out;
  if (::stat(path.c_str(), &out) != 0) return;  // not there yet: no input can be it
  for (const std::string& in : inputs) {
    struct stat st;
    if (::stat(in.c_str(), &st) == 0 && st.st_dev == out.st_dev && st.st_ino == out.st_ino)
      throw InputError(what + " \"" + path + "\" is the input \"" + in +
                       "\" of the same command: writing it would destroy what is read; choose "
                       "another path");
  }
}

void require_replaceable(const std::string& path, const std::string& what,
                         const std::function<bool(const std::string& path)>& ours) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;
  if (st.st_size == 0 || ours(path)) return;
  throw InputError(what + " \"" + path +
                   "\": refusing to replace it: it is not a file this command writes (another "
                   "program's data?); choose another path, or remove it first");
}

std::string file_head(const std::string& path, size_t n) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return "";
  std::string out(n, '\0');
  const ssize_t got = ::read(fd, out.data(), n);
  ::close(fd);
  out.resize(got > 0 ? static_cast<size_t>(got) : 0);
  return out;
}

void ignore_file_size_signal() {
  static const bool done = [] {
    std::signal(SIGXFSZ, SIG_IGN);
    return true;
  }();
  (void)done;
}

std::string diagnose_write_failure(const std::string& path, const std::string& written) {
  struct statvfs fs;
  // A few blocks left is as full as none: HDF5 and ofstream write in blocks.
  if (::statvfs(parent_dir(path).c_str(), &fs) == 0 &&
      static_cast<unsigned long long>(fs.f_bavail) * fs.f_frsize < 64 * 1024) {
    return "no space left on device";
  }
  struct rlimit limit;
  struct stat st;
  if (::getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
      (written.empty() ||
       (::stat(written.c_str(), &st) == 0 &&
        static_cast<unsigned long long>(st.st_size) + 65536 >= limit.rlim_cur))) {
    return "the file-size limit (ulimit -f) of " + std::to_string(limit.rlim_cur) + " bytes";
  }
  return "";
}

void write_atomically(const std::string& path,
                      const std::function<void(const std::string& tmp)>& write) {
  ignore_file_size_signal();
  check_destination(path);
  require_unlocked(path);
  remove_stale_temps(path);
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  try {
    write(tmp);
    sync_file(tmp);
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
      throw std::runtime_error("cannot rename " + tmp + " to it: " + std::strerror(errno));
    }
  } catch (const std::invalid_argument&) {
    std::remove(tmp.c_str());
    throw;
  } catch (const std::exception& e) {
    const std::string cause = diagnose_write_failure(path, tmp);
    std::remove(tmp.c_str());
    std::string why = e.what();
    std::string lower = why;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (!cause.empty() && lower.find(cause) == std::string::npos) why += " (" + cause + ")";
    // Prefixing the final name once is enough; nested writers already named it.
    if (why.rfind(path + ":", 0) == 0) throw InputError(why);
    throw InputError(path + ": cannot write: " + why);
  } catch (...) {
    std::remove(tmp.c_str());
    throw;
  }
}

}  // namespace orrery
