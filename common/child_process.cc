#include "common/child_process.h"

#include <malloc.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "common/errors.h"

namespace orrery {
namespace {

// The answer's first byte says what follows: 0 the result, 2 an input error, 1 another error.
constexpr char kResult = '\0';
constexpr char kOtherError = '\1';
constexpr char kInputError = '\2';

bool write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t k = ::write(fd, p, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    p += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

std::string read_all(int fd) {
  std::string data;
  char buf[1 << 16];
  for (;;) {
    ssize_t k = ::read(fd, buf, sizeof buf);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    data.append(buf, static_cast<size_t>(k));
  }
  return data;
}

}  // namespace

ChildRun start_in_child(const std::function<std::string()>& body, const std::string& what) {
  std::fflush(nullptr);  // the child must not inherit unflushed output
  // Free chunks are merged here rather than in the child: glibc merges its small free chunks at
  // the first large allocation, and doing that in the child writes to (copies) every heap page
  // the parent left them in (perf: 20% of `orrery run` on 256 ranks of Chakra traces).
  malloc_trim(0);
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  pid_t pid = fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::close(fds[0]);
    std::string payload;
    try {
      payload = kResult + body();
    } catch (const InputError& e) {
      payload = kInputError + std::string(e.what());
    } catch (const std::exception& e) {
      payload = kOtherError + std::string(e.what());
    }
    bool ok = write_all(fds[1], payload.data(), payload.size());
    ::close(fds[1]);
    _exit(ok ? 0 : 3);
  }
  ::close(fds[1]);
  return ChildRun(pid, fds[0], what);
}

ChildRun::ChildRun(ChildRun&& other) noexcept
    : pid_(other.pid_), fd_(other.fd_), what_(std::move(other.what_)) {
  other.pid_ = -1;
  other.fd_ = -1;
}

ChildRun::~ChildRun() {
  if (pid_ <= 0) return;
  // Never finished (the caller failed on the way): the child's answer is not wanted.
  ::kill(pid_, SIGKILL);
  ::close(fd_);
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
}

std::string ChildRun::finish() {
  if (pid_ <= 0) throw std::logic_error("ChildRun::finish: already finished");
  std::string data = read_all(fd_);
  ::close(fd_);
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  fd_ = -1;
  if (data.empty()) {
    if (WIFSIGNALED(status))
      throw std::runtime_error(what_ + " crashed (signal " + std::to_string(WTERMSIG(status)) +
                               ", " + strsignal(WTERMSIG(status)) + ")");
    throw std::runtime_error(what_ + " exited with status " + std::to_string(WEXITSTATUS(status)) +
                             " and no result");
  }
  if (data[0] == kInputError) throw InputError(data.substr(1));
  if (data[0] == kOtherError) throw std::runtime_error(data.substr(1));
  return data.substr(1);
}

std::string run_program(const std::vector<std::string>& argv, const std::string& what) {
  if (argv.empty()) throw std::logic_error("run_program: no program");
  std::fflush(nullptr);
  // stderr goes to a file rather than a second pipe: read after the program ends, it cannot
  // fill up and stall the program while this side waits on stdout.
  FILE* err = std::tmpfile();
  if (!err) throw std::runtime_error(std::string("tmpfile: ") + std::strerror(errno));
  int fds[2];
  if (pipe(fds) != 0) {
    std::fclose(err);
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    std::fclose(err);
    throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::dup2(fds[1], 1);
    ::dup2(fileno(err), 2);
    ::close(fds[0]);
    ::close(fds[1]);
    ::execv(args[0], args.data());
    std::fprintf(stderr, "cannot run %s: %s\n", args[0], std::strerror(errno));
    _exit(127);
  }
  ::close(fds[1]);
  std::string out = read_all(fds[0]);
  ::close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  ::lseek(fileno(err), 0, SEEK_SET);
  std::string message = read_all(fileno(err));
  std::fclose(err);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return out;
  while (!message.empty() && message.back() == '\n') message.pop_back();
  message = message.substr(
      message.find_last_of('\n') == std::string::npos ? 0 : message.find_last_of('\n') + 1);
  const std::string said = message.empty() ? "" : ": " + message;
  if (WIFSIGNALED(status))
    throw std::runtime_error(what + " crashed (signal " + std::to_string(WTERMSIG(status)) + ")" +
                             said);
  if (WEXITSTATUS(status) == 2) throw InputError(what + said);
  throw std::runtime_error(what + " exited with status " + std::to_string(WEXITSTATUS(status)) +
                           said);
}

std::string run_in_child(const std::function<std::string()>& body, const std::string& what) {
  return start_in_child(body, what).finish();
}

}  // namespace orrery
