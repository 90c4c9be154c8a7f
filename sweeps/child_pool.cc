#include "sweeps/child_pool.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace orrery {
namespace {

constexpr size_t kOutputTail = 2000;  // bytes of a dead child's output kept for its error

void write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t k = ::write(fd, p, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return;
    p += k;
    n -= static_cast<size_t>(k);
  }
}

// Reads what is available; false at end of file (or on error).
bool drain(int fd, std::string* into, size_t keep_tail) {
  char buf[1 << 16];
  for (;;) {
    ssize_t k = ::read(fd, buf, sizeof buf);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    if (k <= 0) return false;
    into->append(buf, static_cast<size_t>(k));
    if (keep_tail && into->size() > 2 * keep_tail) into->erase(0, into->size() - keep_tail);
  }
}

void close_fd(int* fd) {
  if (*fd >= 0) ::close(*fd);
  *fd = -1;
}

}  // namespace

std::string signal_name(int sig) {
  switch (sig) {
    case SIGABRT:
      return "SIGABRT";
    case SIGSEGV:
      return "SIGSEGV";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGILL:
      return "SIGILL";
    case SIGKILL:
      return "SIGKILL";
    case SIGTERM:
      return "SIGTERM";
    case SIGINT:
      return "SIGINT";
    case SIGPIPE:
      return "SIGPIPE";
    case SIGTRAP:
      return "SIGTRAP";
    case SIGXCPU:
      return "SIGXCPU";
    default:
      return "signal " + std::to_string(sig);
  }
}

std::vector<int> child_cpus(int slots, int local_rank, int local_ranks) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return {};
  std::vector<int> allowed;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) allowed.push_back(c);
  if (allowed.size() < 2 || slots * std::max(1, local_ranks) < 2) return {};
  std::vector<int> cpus;
  const size_t first = static_cast<size_t>(std::max(0, local_rank)) * slots;
  for (int k = 0; k < slots; ++k) cpus.push_back(allowed[(first + k) % allowed.size()]);
  return cpus;
}

ChildPool::ChildPool(int slots, std::vector<int> cpus)
    : slots_(slots < 1 ? 1 : slots), cpus_(std::move(cpus)) {}

ChildPool::~ChildPool() { kill_all(); }

void ChildPool::start(int64_t task, const std::function<std::string()>& work) {
  int result[2], output[2];
  if (::pipe2(result, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  if (::pipe2(output, O_CLOEXEC) != 0) {
    ::close(result[0]);
    ::close(result[1]);
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  }
  auto in_use = [this](int slot) {
    for (const Child& c : children_)
      if (c.slot == slot) return true;
    return false;
  };
  int slot = 0;  // the lowest free one: its CPU is the one no running child is bound to
  while (in_use(slot)) ++slot;
  std::fflush(nullptr);  // the child must not inherit (and later repeat) unflushed output
  const pid_t parent = ::getpid();
  // SIGINT and SIGTERM stay blocked across the fork until the child has its own handlers: one
  // that arrived in between ran the parent's (sweeps/interrupt.h), which only sets a flag, and
  // the child lived on, held or running, while the sweep waited for it to stop. Blocked, the
  // signal waits for the child's SIG_DFL.
  sigset_t stop_signals, before;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGHUP);
  ::sigprocmask(SIG_BLOCK, &stop_signals, &before);
  pid_t pid = ::fork();
  if (pid != 0) ::sigprocmask(SIG_SETMASK, &before, nullptr);
  if (pid < 0) {
    for (int fd : {result[0], result[1], output[0], output[1]}) ::close(fd);
    throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(125);  // the parent died before prctl took effect
    if (!cpus_.empty()) {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(cpus_[static_cast<size_t>(slot) % cpus_.size()], &set);
      ::sched_setaffinity(0, sizeof set, &set);
    }
    ::signal(SIGINT, SIG_IGN);
    ::signal(SIGTERM, SIG_DFL);
    ::signal(SIGHUP, SIG_DFL);
    ::signal(SIGPIPE, SIG_DFL);
    ::sigprocmask(SIG_SETMASK, &before, nullptr);
    ::dup2(output[1], STDOUT_FILENO);
    ::dup2(output[1], STDERR_FILENO);
    ::close(result[0]);
    ::close(output[0]);
    std::string payload = work();
    write_all(result[1], payload.data(), payload.size());
    ::_exit(0);
  }
  ::close(result[1]);
  ::close(output[1]);
  ::fcntl(result[0], F_SETFL, O_NONBLOCK);
  ::fcntl(output[0], F_SETFL, O_NONBLOCK);
  children_.push_back({task, slot, pid, result[0], output[0], {}, {}});
}

ChildExit ChildPool::reap(Child& c) {
  close_fd(&c.result_fd);
  close_fd(&c.output_fd);
  int status = 0;
  while (::waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
  }
  ChildExit e;
  e.task = c.task;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    e.completed = true;
    e.payload = std::move(c.payload);
    return e;
  }
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    e.signal = sig;
    e.failure = "crashed: killed by " + signal_name(sig) + " (" + strsignal(sig) + ")";
  } else {
    e.failure = "exited with status " + std::to_string(WEXITSTATUS(status)) + " and no result";
  }
  std::string& out = c.output;
  if (out.size() > kOutputTail) out = "..." + out.substr(out.size() - kOutputTail);
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  if (!out.empty()) e.failure += "; its output ended with: " + out;
  return e;
}

std::vector<ChildExit> ChildPool::wait(int timeout_ms) {
  std::vector<ChildExit> ended;
  if (children_.empty()) {
    if (timeout_ms > 0) ::poll(nullptr, 0, timeout_ms);
    return ended;
  }
  std::vector<pollfd> fds;
  std::vector<std::pair<size_t, bool>> owner;  // child index, is the result pipe
  for (size_t i = 0; i < children_.size(); ++i) {
    if (children_[i].result_fd >= 0) {
      fds.push_back({children_[i].result_fd, POLLIN, 0});
      owner.emplace_back(i, true);
    }
    if (children_[i].output_fd >= 0) {
      fds.push_back({children_[i].output_fd, POLLIN, 0});
      owner.emplace_back(i, false);
    }
  }
  int n = ::poll(fds.data(), fds.size(), timeout_ms);
  if (n <= 0) return ended;  // timeout, or a signal (EINTR): the caller looks at its flags
  for (size_t k = 0; k < fds.size(); ++k) {
    if (!fds[k].revents) continue;
    Child& c = children_[owner[k].first];
    int* fd = owner[k].second ? &c.result_fd : &c.output_fd;
    std::string* into = owner[k].second ? &c.payload : &c.output;
    if (!drain(*fd, into, owner[k].second ? 0 : kOutputTail)) close_fd(fd);
  }
  for (size_t i = 0; i < children_.size();) {
    if (children_[i].result_fd < 0 && children_[i].output_fd < 0) {
      ended.push_back(reap(children_[i]));
      children_.erase(children_.begin() + static_cast<long>(i));
    } else {
      ++i;
    }
  }
  return ended;
}

std::vector<int64_t> ChildPool::kill_all() {
  std::vector<int64_t> tasks;
  for (Child& c : children_) {
    ::kill(c.pid, SIGKILL);
    tasks.push_back(c.task);
    reap(c);
  }
  children_.clear();
  return tasks;
}

}  // namespace orrery
