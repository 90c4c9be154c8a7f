#include "results/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "engine/errors.h"

namespace orrery {
namespace {

void check_destination(const std::string& path) {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(path).parent_path();
  if (dir.empty()) dir = ".";
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw InputError(path + ": cannot write: directory '" + dir.string() + "' does not exist");
  }
  if (access(dir.c_str(), W_OK) != 0) {
    throw InputError(path + ": cannot write: directory '" + dir.string() + "' is not writable (" +
                     std::strerror(errno) + ")");
  }
  if (fs::is_directory(path, ec)) {
    throw InputError(path + ": cannot write: a directory has that name");
  }
}

// Without this the rename could reach the disk before the data, and a power loss would leave
// the final name over an empty file.
void sync_file(const std::string& file_path) {
  int fd = ::open(file_path.c_str(), O_RDONLY);
  if (fd < 0) throw std::runtime_error(file_path + ": " + std::strerror(errno));
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (rc != 0) throw std::runtime_error(file_path + ": fsync: " + std::strerror(err));
}

}  // namespace

void write_atomically(const std::string& path,
                      const std::function<void(const std::string& tmp)>& write) {
  check_destination(path);
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  try {
    write(tmp);
    sync_file(tmp);
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
      throw std::runtime_error(path + ": cannot rename " + tmp + " to it: " + std::strerror(errno));
    }
  } catch (...) {
    std::remove(tmp.c_str());
    throw;
  }
}

}  // namespace orrery
