#include "sweeps/journal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "common/atomic_file.h"
#include "common/errors.h"
#include "sweeps/yaml_path.h"

namespace orrery {
namespace {

constexpr char kHeader[] = "ORRERY-SWEEP-JOURNAL 1\n";
constexpr size_t kHeaderSize = sizeof kHeader - 1;
constexpr uint32_t kRecordMagic = 0x524a534f;  // "OSJR" little-endian
constexpr size_t kRecordHead = 4 + 4 + 8;

// The journal is the user's file on the user's disk: a full disk or a file-size limit is
// theirs to fix, so it is an InputError naming the file.
InputError io_error(const std::string& what, const std::string& path) {
  const int err = errno;
  std::string why = std::strerror(err);
  if (err == ENOSPC) why = "no space left on device";
  if (err == EFBIG) why = "file too large (the file-size limit, ulimit -f)";
  return InputError(path + ": cannot " + what + " the sweep journal: " + why);
}

void write_all(int fd, const char* p, size_t n, const std::string& path) {
  while (n > 0) {
    ssize_t k = ::write(fd, p, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) throw io_error("write", path);
    p += k;
    n -= static_cast<size_t>(k);
  }
}

std::string read_all(int fd, const std::string& path) {
  std::string data;
  char buf[1 << 16];
  for (;;) {
    ssize_t k = ::read(fd, buf, sizeof buf);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) throw io_error("read", path);
    if (k == 0) break;
    data.append(buf, static_cast<size_t>(k));
  }
  return data;
}

}  // namespace

std::string journal_path_for(const std::string& output_h5) { return output_h5 + ".journal"; }

Journal::Journal(const std::string& path, std::vector<PointOutcome>* loaded) : path_(path) {
  ignore_file_size_signal();
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw InputError(path + ": cannot open the sweep journal: " + std::strerror(errno));
  // A FIFO opened read-write does not block, but reading it would wait forever.
  struct stat st;
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd_);
    fd_ = -1;
    throw InputError(path + ": the sweep journal must be a regular file; move this one away");
  }
  std::string data = read_all(fd_, path);
  size_t end = 0;
  if (data.size() >= kHeaderSize && data.compare(0, kHeaderSize, kHeader) == 0) {
    end = kHeaderSize;
    while (data.size() - end >= kRecordHead) {
      uint32_t magic, length;
      uint64_t checksum;
      std::memcpy(&magic, data.data() + end, 4);
      std::memcpy(&length, data.data() + end + 4, 4);
      std::memcpy(&checksum, data.data() + end + 8, 8);
      if (magic != kRecordMagic || length > data.size() - end - kRecordHead) break;
      std::string payload = data.substr(end + kRecordHead, length);
      if (fnv1a64(payload) != checksum) break;
      end += kRecordHead + length;
      try {
        loaded->push_back(deserialize_outcome(payload));
      } catch (const std::runtime_error&) {
        ++dropped_;  // intact but unreadable (written by another version): run it again
      }
    }
    if (end < data.size()) ++dropped_;
  } else if (!data.empty() && std::string(kHeader).compare(0, data.size(), data) != 0) {
    ::close(fd_);
    throw InputError(path + ": exists but is not an Orrery sweep journal; move it away");
  }
  if (end == 0) {
    if (::ftruncate(fd_, 0) != 0) throw io_error("truncate", path);
    if (::lseek(fd_, 0, SEEK_SET) < 0) throw io_error("seek", path);
    write_all(fd_, kHeader, kHeaderSize, path);
    dirty_ = true;
    return;
  }
  if (end < data.size() && ::ftruncate(fd_, static_cast<off_t>(end)) != 0)
    throw io_error("truncate", path);
  if (::lseek(fd_, static_cast<off_t>(end), SEEK_SET) < 0) throw io_error("seek", path);
}

Journal::~Journal() {
  if (fd_ >= 0) {
    if (dirty_) ::fdatasync(fd_);
    ::close(fd_);
  }
}

void Journal::append(const PointOutcome& o) {
  std::string payload = serialize_outcome(o);
  std::string record(kRecordHead, '\0');
  uint32_t magic = kRecordMagic, length = static_cast<uint32_t>(payload.size());
  uint64_t checksum = fnv1a64(payload);
  std::memcpy(&record[0], &magic, 4);
  std::memcpy(&record[4], &length, 4);
  std::memcpy(&record[8], &checksum, 8);
  record += payload;
  // One write per record: a kill between two writes would tear it (harmless, but avoidable).
  write_all(fd_, record.data(), record.size(), path_);
  dirty_ = true;
}

void Journal::sync() {
  if (!dirty_) return;
  if (::fdatasync(fd_) != 0) throw io_error("sync", path_);
  dirty_ = false;
}

}  // namespace orrery
