#include "common/atomic_file.h"

#include <fcntl.h>
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
