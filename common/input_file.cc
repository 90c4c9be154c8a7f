#include "common/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "common/errors.h"

namespace orrery {
namespace {

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

[[noreturn]] void refuse(const std::string& path, const std::string& what, mode_t mode) {
  throw InputError(path + ": " + what + " must be a regular file, but this is " + kind_of(mode));
}

[[noreturn]] void fail_errno(const std::string& path, const std::string& what, const char* doing,
                             int err) {
  throw InputError(path + ": cannot " + doing + " " + what + ": " + std::strerror(err));
}

}  // namespace

void require_regular_file(const std::string& path, const std::string& what) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) fail_errno(path, what, "open", errno);
  if (!S_ISREG(st.st_mode)) refuse(path, what, st.st_mode);
}

std::string read_input_file(const std::string& path, const std::string& what,
                            std::size_t max_bytes) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) fail_errno(path, what, "open", errno);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    fail_errno(path, what, "read", err);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    refuse(path, what, st.st_mode);
  }
  if (static_cast<unsigned long long>(st.st_size) > max_bytes) {
    ::close(fd);
    throw InputError(path + ": " + what + " is " + std::to_string(st.st_size) +
                     " bytes, more than the " + std::to_string(max_bytes) + " bytes accepted");
  }
  std::string data;
  data.reserve(static_cast<std::size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      fail_errno(path, what, "read", err);
    }
    if (n == 0) break;
    data.append(buf, static_cast<std::size_t>(n));
    if (data.size() > max_bytes) {
      ::close(fd);
      throw InputError(path + ": " + what + " grew past the " + std::to_string(max_bytes) +
                       " bytes accepted while it was read");
    }
  }
  ::close(fd);
  return data;
}

std::string resolve_input_path(const std::string& base_dir, const std::string& path) {
  if (path.empty() || std::filesystem::path(path).is_absolute()) return path;
  return (std::filesystem::path(base_dir) / path).lexically_normal().string();
}

}  // namespace orrery
