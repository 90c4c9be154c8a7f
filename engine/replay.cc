#include "engine/replay.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <limits>
#include <map>
#include <simgrid/s4u.hpp>
#include <stdexcept>
#include <unordered_map>

#include "engine/errors.h"
#include "engine/run_result_io.h"

namespace sg4 = simgrid::s4u;

namespace orrery {

double default_op_duration(const Op& op, double host_speed, double host_mem_bw) {
  if (op.duration >= 0) return op.duration;
  double t = op.flops / host_speed;
  if (host_mem_bw > 0 && std::isfinite(host_mem_bw)) t = std::max(t, op.bytes / host_mem_bw);
  return t;
}

namespace {

// One FIFO queue: a (device, stream) pair. Ops wait here, in order of readiness, while the
// stream runs another op.
struct Queue {
  std::deque<int> waiting;
  bool busy = false;
};

class Replayer {
 public:
  Replayer(const ExecutionGraph& g, const ReplayOptions& opt) : g_(g), opt_(opt) {}

  RunResult run() {
    auto wall0 = std::chrono::steady_clock::now();
    resolve_hosts();
    build_dependency_arrays();
    assign_queues();

    sg4::Activity::on_completion_cb([this](sg4::Activity const& a) { on_complete(a); });
    for (size_t i = 0; i < g_.ops.size(); ++i)
      if (indeg_[i] == 0) make_ready(static_cast<int>(i));
    sg4::Engine::get_instance()->run();
    graveyard_.clear();

    if (completed_ != g_.ops.size())
      throw std::runtime_error("replay stopped with " + std::to_string(g_.ops.size() - completed_) +
                               " of " + std::to_string(g_.ops.size()) + " ops unfinished");
    RunResult r = collect();
    r.wall_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    return r;
  }

 private:
  void resolve_hosts() {
    for (const auto& d : g_.devices) {
      const std::string& h = d.host.empty() ? d.name : d.host;
      const std::string& lh = d.launch_host.empty() ? h : d.launch_host;
      auto* host = sg4::Host::by_name_or_null(h);
      auto* launch = sg4::Host::by_name_or_null(lh);
      if (!host)
        throw InputError("device \"" + d.name + "\": the platform has no host \"" + h + "\"");
      if (!launch)
        throw InputError("device \"" + d.name + "\": the platform has no launch host \"" + lh +
                         "\"");
      hosts_.push_back(host);
      launch_hosts_.push_back(launch);
      const char* bw = host->get_property("mem_bw");
      mem_bw_.push_back(bw ? std::atof(bw) : std::numeric_limits<double>::infinity());
    }
  }

  void build_dependency_arrays() {
    size_t n = g_.ops.size();
    indeg_.assign(n, 0);
    succ_start_.assign(n + 1, 0);
    for (const auto& op : g_.ops)
      for (int d : op.deps) ++succ_start_[d + 1];
    for (size_t i = 0; i < n; ++i) succ_start_[i + 1] += succ_start_[i];
    succ_.resize(succ_start_[n]);
    std::vector<int> fill(succ_start_.begin(), succ_start_.end() - 1);
    for (size_t i = 0; i < n; ++i) {
      indeg_[i] = static_cast<int>(g_.ops[i].deps.size());
      for (int d : g_.ops[i].deps) succ_[fill[d]++] = static_cast<int>(i);
    }
    start_.assign(n, 0.0);
    end_.assign(n, 0.0);
    held_.resize(n);
  }

  void assign_queues() {
    std::map<std::tuple<int, int, int>, int> ids;
    queue_of_.resize(g_.ops.size());
    for (size_t i = 0; i < g_.ops.size(); ++i) {
      const Op& op = g_.ops[i];
      auto key = std::make_tuple(op.device, static_cast<int>(op.stream.cls), op.stream.index);
      auto it = ids.find(key);
      if (it == ids.end()) it = ids.emplace(key, static_cast<int>(ids.size())).first;
      queue_of_[i] = it->second;
    }
    queues_.resize(ids.size());
  }

  void make_ready(int op) {
    Queue& q = queues_[queue_of_[op]];
    if (q.busy) {
      q.waiting.push_back(op);
    } else {
      q.busy = true;
      start_op(op);
    }
  }

  void start_op(int i) {
    const Op& op = g_.ops[i];
    start_[i] = sg4::Engine::get_clock();
    ++activities_;
    if (op.kind == OpKind::kTransfer) {
      auto comm = sg4::Comm::sendto_init(hosts_[op.src], hosts_[op.dst]);
      comm->set_payload_size(static_cast<uint64_t>(std::llround(op.transfer_bytes)));
      account_route(op.src, op.dst, op.transfer_bytes);
      comm->set_data(reinterpret_cast<void*>(static_cast<intptr_t>(i)));
      held_[i] = comm;
      comm->start();
    } else {
      // Host-stream ops run on the device's launch host (its CPU thread); the rest on the device.
      sg4::Host* host =
          op.stream.cls == StreamClass::kHost ? launch_hosts_[op.device] : hosts_[op.device];
      double duration = default_op_duration(op, host->get_speed(), mem_bw_[op.device]);
      auto exec = sg4::Exec::init();
      exec->set_flops_amount(duration * host->get_speed());
      exec->set_host(host);
      exec->set_data(reinterpret_cast<void*>(static_cast<intptr_t>(i)));
      held_[i] = exec;
      exec->start();
    }
  }

  void on_complete(sg4::Activity const& a) {
    // Activities whose callbacks ran earlier are finished with; dropping their last reference
    // from inside their own callback would crash SimGrid 3.32 (ARCHITECTURE.md, fact 2).
    graveyard_.clear();
    int i = static_cast<int>(reinterpret_cast<intptr_t>(a.get_data<void>()));
    end_[i] = sg4::Engine::get_clock();
    ++completed_;
    graveyard_.push_back(std::move(held_[i]));

    Queue& q = queues_[queue_of_[i]];
    if (q.waiting.empty()) {
      q.busy = false;
    } else {
      int next = q.waiting.front();
      q.waiting.pop_front();
      start_op(next);
    }
    for (int k = succ_start_[i]; k < succ_start_[i + 1]; ++k)
      if (--indeg_[succ_[k]] == 0) make_ready(succ_[k]);
  }

  void account_route(int src, int dst, double bytes) {
    uint64_t key = (static_cast<uint64_t>(src) << 32) | static_cast<uint32_t>(dst);
    auto it = routes_.find(key);
    if (it == routes_.end()) {
      std::vector<sg4::Link*> links;
      double latency = 0;
      hosts_[src]->route_to(hosts_[dst], links, &latency);
      std::vector<int> ids;
      for (auto* l : links) {
        auto [pos, fresh] = link_index_.emplace(l, static_cast<int>(link_ptrs_.size()));
        if (fresh) {
          link_ptrs_.push_back(l);
          link_bytes_.push_back(0.0);
        }
        ids.push_back(pos->second);
      }
      it = routes_.emplace(key, std::move(ids)).first;
    }
    for (int l : it->second) link_bytes_[l] += bytes;
  }

  RunResult collect() {
    RunResult r;
    r.activities = activities_;
    double t0 = std::numeric_limits<double>::infinity();
    double t1 = 0;
    for (size_t i = 0; i < g_.ops.size(); ++i) {
      t0 = std::min(t0, start_[i]);
      t1 = std::max(t1, end_[i]);
    }
    r.makespan = g_.ops.empty() ? 0.0 : t1 - t0;
    r.devices.resize(g_.devices.size());
    for (size_t d = 0; d < g_.devices.size(); ++d) r.devices[d].name = g_.devices[d].name;
    for (size_t i = 0; i < g_.ops.size(); ++i) {
      const Op& op = g_.ops[i];
      auto& ds = r.devices[op.device];
      ds.busy[static_cast<int>(op.stream.cls)] += end_[i] - start_[i];
      ++ds.ops;
    }
    for (auto& ds : r.devices)
      ds.idle = std::max(0.0, r.makespan - ds.busy[static_cast<int>(StreamClass::kCompute)]);
    for (size_t l = 0; l < link_ptrs_.size(); ++l)
      r.links.push_back({link_ptrs_[l]->get_name(), link_ptrs_[l]->get_bandwidth(),
                         link_ptrs_[l]->get_latency(), link_bytes_[l]});
    std::sort(r.links.begin(), r.links.end(),
              [](const LinkStats& a, const LinkStats& b) { return a.name < b.name; });
    if (opt_.record_timeline) {
      r.timeline.resize(g_.ops.size());
      for (size_t i = 0; i < g_.ops.size(); ++i) r.timeline[i] = {start_[i] - t0, end_[i] - t0};
    }
    return r;
  }

  const ExecutionGraph& g_;
  const ReplayOptions& opt_;
  std::vector<sg4::Host*> hosts_, launch_hosts_;
  std::vector<double> mem_bw_;
  std::vector<int> indeg_, succ_start_, succ_, queue_of_;
  std::vector<Queue> queues_;
  std::vector<double> start_, end_;
  std::vector<sg4::ActivityPtr> held_;
  std::vector<sg4::ActivityPtr> graveyard_;
  std::unordered_map<uint64_t, std::vector<int>> routes_;
  std::unordered_map<const sg4::Link*, int> link_index_;
  std::vector<sg4::Link*> link_ptrs_;
  std::vector<double> link_bytes_;
  size_t completed_ = 0;
  int64_t activities_ = 0;
};

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

}  // namespace

RunResult replay(const PlatformSource& platform, const ExecutionGraph& graph,
                 const ReplayOptions& options) {
  int argc = 2;
  char arg0[] = "orrery";
  char arg1[] = "--log=root.thresh:critical";
  char* argv[] = {arg0, arg1, nullptr};
  sg4::Engine engine(&argc, argv);
  apply_network_config();
  load_platform(platform);
  return Replayer(graph, options).run();
}

RunResult replay_isolated(const PlatformSource& platform, const ExecutionGraph& graph,
                          const ReplayOptions& options) {
  std::fflush(nullptr);  // the child must not inherit unflushed output
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::close(fds[0]);
    // Status byte: 0 result follows, 2 input error message follows, 1 other error message.
    std::string payload;
    try {
      payload = '\0' + serialize_run_result(replay(platform, graph, options));
    } catch (const InputError& e) {
      payload = std::string("\2") + e.what();
    } catch (const std::exception& e) {
      payload = std::string("\1") + e.what();
    }
    bool ok = write_all(fds[1], payload.data(), payload.size());
    ::close(fds[1]);
    _exit(ok ? 0 : 3);
  }
  ::close(fds[1]);
  std::string data;
  char buf[1 << 16];
  for (;;) {
    ssize_t k = ::read(fds[0], buf, sizeof buf);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    data.append(buf, static_cast<size_t>(k));
  }
  ::close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (data.empty()) {
    if (WIFSIGNALED(status))
      throw std::runtime_error("simulation crashed (signal " + std::to_string(WTERMSIG(status)) +
                               ", " + strsignal(WTERMSIG(status)) + ")");
    throw std::runtime_error("simulation exited with status " +
                             std::to_string(WEXITSTATUS(status)) + " and no result");
  }
  if (data[0] == '\2') throw InputError(data.substr(1));
  if (data[0] == '\1') throw std::runtime_error(data.substr(1));
  return deserialize_run_result(data.substr(1));
}

}  // namespace orrery
