#include "engine/replay.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <simgrid/s4u.hpp>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

#include "common/child_process.h"
#include "common/errors.h"
#include "engine/collective_algos.h"
#include "engine/collective_cost.h"
#include "engine/flow_record.h"
#include "engine/leaf_routes.h"
#include "engine/link_usage.h"
#include "engine/maestro_list.h"
#include "engine/owner_free.h"
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

// What a SimGrid activity stands for, packed into its user data: the kind in the top byte, an
// index below.
enum class Tag : uint64_t {
  kOp = 0,
  kFlow = 1,
  kDelay = 2,
  kContention = 3,
  kFlowDelay = 4,   // a flow's step latency, before its comm starts
  kStartDelay = 5,  // a collective's base latency, before its first flows
};
constexpr int kTagShift = 56;
void* pack(Tag t, uint64_t payload) {
  return reinterpret_cast<void*>((static_cast<uint64_t>(t) << kTagShift) | payload);
}
Tag tag_of(const void* p) { return static_cast<Tag>(reinterpret_cast<uint64_t>(p) >> kTagShift); }
uint64_t payload_of(const void* p) {
  return reinterpret_cast<uint64_t>(p) & ((uint64_t{1} << kTagShift) - 1);
}

// "30 days", "1.5 hours": the time limit as people say it.
std::string days(double seconds) {
  char buf[48];
  if (seconds >= 86400)
    std::snprintf(buf, sizeof buf, "%.6g days", seconds / 86400);
  else
    std::snprintf(buf, sizeof buf, "%.6g hours", seconds / 3600);
  return buf;
}

// Contention execs last "forever" and are cancelled when their collective ends.
constexpr double kForever = 1e300;

class Replayer;

// A collective in flight: its algorithm's state machine and the SM-contention execs it holds.
struct ActiveCollective : FlowIssuer {
  Replayer* replayer = nullptr;
  int op = -1;
  std::unique_ptr<CollectiveRun> run;
  // From the plan: flows carry payload / efficiency on the wire after their step's delay.
  double efficiency = 1.0;
  std::array<double, kNumHopClasses> hop_latency{};
  std::vector<uint64_t> contention;  // slots of the SM-contention execs it holds
  void issue(int src, int dst, double bytes, int64_t tag, int steps) override;
};

struct FlowSlot {
  ActiveCollective* owner = nullptr;
  int64_t tag = 0;
  sg4::ActivityPtr activity;
  int src = -1, dst = -1;  // a flow waiting for its step delay
  double wire_bytes = 0.0;
};

struct CachedRoute {
  std::vector<int> links;
  RouteInfo info;
};

class Replayer {
 public:
  Replayer(const PlatformSource& p, const ExecutionGraph& g, const ReplayOptions& opt)
      : platform_(p), g_(g), opt_(opt) {}

  RunResult run() {
    auto wall0 = std::chrono::steady_clock::now();
    resolve_hosts();
    build_dependency_arrays();
    assign_queues();

    sg4::Activity::on_completion_cb([this](sg4::Activity const& a) { on_complete(a); });
    // Before poll(): the rates of the interval that just ended, before completions change them.
    if (link_usage_.on())
      sg4::Engine::on_time_advance_cb([this](double dt) { link_usage_.sample(dt); });
    sg4::Engine::on_time_advance_cb([this](double) { poll(); });
    for (size_t i = 0; i < g_.ops.size(); ++i)
      if (indeg_[i] == 0) make_ready(static_cast<int>(i));
    last_report_ = std::chrono::steady_clock::now();
    const double limit = opt_.max_simulated_seconds;
    // run_until stops SimGrid at the limit instead of letting it chase a date of 1e300 s.
    sg4::Engine::get_instance()->run_until(limit);
    if (shown_progress_) std::fprintf(stderr, "\r%100s\r", "");
    if (completed_ != g_.ops.size()) {
      // Activities still run: SimGrid 3.32 crashes if their last references drop now, so the
      // caller leaves this Replayer and the engine alive (the process ends soon after).
      const double now = sg4::Engine::get_clock();
      const std::string left = std::to_string(g_.ops.size() - completed_) + " of " +
                               std::to_string(g_.ops.size()) + " ops unfinished";
      if (now >= limit)
        throw InputError("the simulation passed the limit of " +
                         format_quantity(limit, Quantity::kTime) + " (" + days(limit) +
                         ") of simulated time with " + left + " (" + running_ops() +
                         "): an op, size or rate is far out of scale; raise the limit with "
                         "--max-simulated-time TIME if the workload is meant to run this long");
      throw std::runtime_error("replay stopped at simulated time " + std::to_string(now) +
                               " s with " + left + " (" + running_ops() + ")");
    }
    graveyard_.clear();
    released_.clear();
    contention_.clear();
    RunResult r = collect();
    r.wall_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    return r;
  }

  // A flow of `steps` ring steps waits for all their latencies but the last, which SimGrid's
  // route adds: steps x max(route, hop latency) - route latency.
  void start_flow(ActiveCollective* owner, int src, int dst, double bytes, int64_t tag, int steps) {
    uint64_t slot;
    if (free_slots_.empty()) {
      slot = slots_.size();
      slots_.emplace_back();
    } else {
      slot = free_slots_.back();
      free_slots_.pop_back();
    }
    const CachedRoute& r = route(src, dst);
    const double wire = bytes / owner->efficiency;
    const double step = std::max(owner->hop_latency[static_cast<int>(r.info.hop)], r.info.latency);
    const double delay = steps * step - r.info.latency;
    ++activities_;
    if (delay > 0 && timer_) {
      ++activities_;
      slots_[slot] = {
          owner, tag, start_exec(timer_, delay * timer_->get_speed(), pack(Tag::kFlowDelay, slot)),
          src,   dst, wire};
      return;
    }
    account_route(src, dst, wire);
    slots_[slot] = {owner, tag, start_comm(src, dst, wire, pack(Tag::kFlow, slot))};
    flow_log_.start(slot, owner->op, src, dst, wire, sg4::Engine::get_clock());
  }

 private:
  void resolve_hosts() {
    std::map<std::string, int> node_ids;
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
      const std::string& node = d.node.empty() ? h : d.node;
      node_.push_back(node_ids.emplace(node, static_cast<int>(node_ids.size())).first->second);
    }
    timer_ = sg4::Host::by_name_or_null(kTimerHostName);
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
    started_.assign(n, 0);
    finished_op_.assign(n, 0);
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

  // The first few ops running when the replay stopped, for its error message.
  std::string running_ops() const {
    std::string out;
    int shown = 0;
    for (size_t i = 0; i < g_.ops.size() && shown < 3; ++i)
      if (started_[i] && !finished_op_[i])
        out += std::string(shown++ ? ", " : "running: ") + "\"" + g_.ops[i].name + "\"";
    return out.empty() ? "no op running" : out;
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
    started_[i] = 1;
    if (op.kind == OpKind::kCollective) {
      start_collective(i);
      return;
    }
    ++activities_;
    if (op.kind == OpKind::kTransfer) {
      account_route(op.src, op.dst, op.transfer_bytes);
      held_[i] = start_comm(op.src, op.dst, op.transfer_bytes, pack(Tag::kOp, i));
    } else {
      // Host-stream ops run on the device's launch host (its CPU thread); the rest on the device.
      sg4::Host* host =
          op.stream.cls == StreamClass::kHost ? launch_hosts_[op.device] : hosts_[op.device];
      double duration = default_op_duration(op, host->get_speed(), mem_bw_[op.device]);
      held_[i] = start_exec(host, duration * host->get_speed(), pack(Tag::kOp, i));
    }
  }

  // Activities are finished through one of two paths. SimGrid 3.32 keeps maestro's activities
  // on a std::list that each completion scans (docs/design.md), so most are kept off it or
  // half on it and found finished by poll(), at each advance of simulated time, once SimGrid
  // has no work left for them. Zero-work activities report nothing left from the start and
  // cannot be polled: they complete through the on_completion callback.
  sg4::CommPtr start_comm(int src, int dst, double bytes, void* data) {
    const uint64_t size = static_cast<uint64_t>(std::llround(bytes));
    auto comm = size == 0 ? sg4::Comm::sendto_init(hosts_[src], hosts_[dst])
                          : maestro_list_.create(
                                [&] { return sg4::Comm::sendto_init(hosts_[src], hosts_[dst]); });
    comm->set_payload_size(size);
    comm->set_data(data);
    if (size == 0) {
      comm->start();
    } else {
      // A detached comm is registered on maestro's list once instead of twice and skips the
      // completion signals (dp50 bench at 256 GPUs: 6.9 s -> 5.0 s).
      comm->detach();
      polled_.push_back(comm);
    }
    return comm;
  }

  enum class Watch { kPoll, kNone };

  // kPoll: the exec is polled (callback when it has no work). kNone: nobody waits for it (SM
  // contention, cancelled by the replay). Execs with work are created owner-free where SimGrid
  // allows it (engine/owner_free.h) and then fire no callback.
  sg4::ExecPtr start_exec(sg4::Host* host, double flops, void* data, double bound = -1,
                          Watch watch = Watch::kPoll) {
    const bool owner_free = kOwnerFreeExecs && flops > 0;
    std::optional<OwnerFreeScope> scope;
    if (owner_free) scope.emplace();
    auto exec = sg4::Exec::init();
    exec->set_flops_amount(flops);
    exec->set_host(host);
    if (bound > 0) exec->set_bound(bound);
    exec->set_data(data);
    exec->start();
    scope.reset();
    if (owner_free && watch == Watch::kPoll) polled_.push_back(exec);
    return exec;
  }

  // Finds polled activities finished: SimGrid has no work left for them (its own
  // precision/work-amount threshold). Simultaneous completions (ring steps, lockstep kernels)
  // share one scan.
  void poll() {
    check_progress();
    released_.clear();  // found at an earlier date: SimGrid is done with them
    finished_.clear();
    for (size_t k = 0; k < polled_.size();) {
      if (polled_[k]->get_remaining() <= kDoneWork) {
        finished_.push_back(std::move(polled_[k]));
        polled_[k] = std::move(polled_.back());
        polled_.pop_back();
      } else {
        ++k;
      }
    }
    // The order must not depend on the scan's swaps: take them by their (unique) tags.
    std::sort(finished_.begin(), finished_.end(),
              [](const sg4::ActivityPtr& a, const sg4::ActivityPtr& b) {
                return a->get_data<void>() < b->get_data<void>();
              });
    for (auto& a : finished_) {
      released_.push_back(a);
      on_complete(*a);
    }
  }

  // What the planner needs to know of the platform for collective `c`: its ranks' nodes, the
  // routes, and the in-network reduction endpoints their hosts name (host properties
  // "nvls_host", "collnet_host"), added past the devices as extra endpoints.
  CollectiveTopology collective_topology(const Collective& c) {
    CollectiveTopology t;
    for (int r : c.ranks) {
      t.node_of.push_back(node_[r]);
      t.nvls.push_back(endpoint(hosts_[r]->get_property("nvls_host")));
    }
    if (!c.ranks.empty()) t.collnet = endpoint(hosts_[c.ranks[0]]->get_property("collnet_host"));
    t.route = [this](int s, int d) -> const RouteInfo& { return route(s, d).info; };
    return t;
  }

  // Index of the endpoint host `name` in hosts_ (appended after the devices), -1 when absent.
  int endpoint(const char* name) {
    if (!name) return -1;
    auto it = endpoints_.find(name);
    if (it != endpoints_.end()) return it->second;
    sg4::Host* h = sg4::Host::by_name_or_null(name);
    int id = -1;
    if (h) {
      id = static_cast<int>(hosts_.size());
      hosts_.push_back(h);
    }
    endpoints_.emplace(name, id);
    return id;
  }

  std::unordered_map<const CollectivePlan*, double> analytical_times_;

  void start_collective(int i) {
    const Collective& c = g_.collectives[g_.ops[i].collective];
    CollectiveTopology topo = collective_topology(c);
    const CollectivePlan& plan = planner_.plan(c, topo);
    auto active = std::make_unique<ActiveCollective>();
    active->replayer = this;
    active->op = i;
    active->efficiency = plan.efficiency;
    active->hop_latency = plan.hop_latency;
    int channels = 1;
    if (plan.algo == CollectiveAlgo::kTree) channels = static_cast<int>(plan.tree.size());
    if (plan.algo == CollectiveAlgo::kRing) channels = static_cast<int>(plan.channels.size());
    choices_[g_.ops[i].collective] = {plan.algo, plan.protocol, channels};
    // The collective's kernels hold part of every rank's SMs while it runs.
    if (c.sm_share > 0)
      for (int r : c.ranks) {
        uint64_t slot = contention_.size();
        contention_.push_back(start_exec(hosts_[r], kForever, pack(Tag::kContention, slot),
                                         c.sm_share * hosts_[r]->get_speed(), Watch::kNone));
        active->contention.push_back(slot);
      }
    ActiveCollective* a = active.get();
    active_[i] = std::move(active);
    if (c.analytical) {
      if (!timer_)
        throw InputError("analytical collectives need a platform generated by Orrery (host \"" +
                         std::string(kTimerHostName) + "\" is missing)");
      // The planner keeps one plan per collective shape and size: its time is priced once.
      double t = 0;
      if (c.counts.empty()) {
        auto [it, fresh] = analytical_times_.try_emplace(&plan, 0.0);
        if (fresh) it->second = analytical_collective_time(c, plan, topo.route);
        t = it->second;
      } else {
        t = analytical_collective_time(c, plan, topo.route);
      }
      t *= c.repeat;
      ++activities_;
      held_[i] = start_exec(timer_, t * timer_->get_speed(), pack(Tag::kDelay, i));
      return;
    }
    a->run = make_collective_run(c, plan, *a);
    if (plan.base_latency > 0 && timer_ && c.ranks.size() > 1) {
      ++activities_;
      held_[i] =
          start_exec(timer_, plan.base_latency * timer_->get_speed(), pack(Tag::kStartDelay, i));
      return;
    }
    start_run(i);
  }

  void start_run(int i) {
    ActiveCollective* a = active_.at(i).get();
    a->run->start();
    if (a->run->done()) {
      // Nothing to move (one rank): complete through SimGrid so ordering stays uniform.
      ++activities_;
      held_[i] = start_exec(hosts_[g_.collectives[g_.ops[i].collective].ranks[0]], 0.0,
                            pack(Tag::kDelay, i));
    }
  }

  void finish_collective(int i) {
    auto it = active_.find(i);
    for (uint64_t slot : it->second->contention) contention_[slot]->cancel();
    active_.erase(it);
    finish_op(i);
  }

  // A simulation whose clock stops moving while nothing completes would spin forever (rates so
  // small that each step rounds to nothing at a large date). Every normal step either advances
  // the clock or completes an activity.
  void check_progress() {
    const double now = sg4::Engine::get_clock();
    if (now != last_clock_ || completions_ != last_completions_) {
      last_clock_ = now;
      last_completions_ = completions_;
      stalled_steps_ = 0;
      return;
    }
    if (++stalled_steps_ < kMaxStalledSteps) return;
    throw InputError("the simulation stopped making progress at simulated time " +
                     format_quantity(now, Quantity::kTime) + " (" + running_ops() +
                     "): the clock no longer advances and nothing completes; check the "
                     "workload's sizes and the platform's rates for values far out of scale");
  }

  void on_complete(sg4::Activity const& a) {
    ++completions_;
    // Activities whose callbacks ran earlier are finished with; dropping their last reference
    // from inside their own callback would crash SimGrid 3.32 (docs/design.md, SimGrid fact 2).
    // Cancelling contention execs re-enters this callback: clear only at the outer level.
    if (depth_ == 0) graveyard_.clear();
    ++depth_;
    const void* data = a.get_data<void>();
    uint64_t id = payload_of(data);
    switch (tag_of(data)) {
      case Tag::kOp:
        graveyard_.push_back(std::move(held_[id]));
        finish_op(static_cast<int>(id));
        break;
      case Tag::kDelay:
        graveyard_.push_back(std::move(held_[id]));
        finish_collective(static_cast<int>(id));
        break;
      case Tag::kStartDelay:
        graveyard_.push_back(std::move(held_[id]));
        start_run(static_cast<int>(id));
        break;
      case Tag::kFlowDelay: {
        FlowSlot& slot = slots_[id];
        graveyard_.push_back(std::move(slot.activity));
        account_route(slot.src, slot.dst, slot.wire_bytes);
        slot.activity = start_comm(slot.src, slot.dst, slot.wire_bytes, pack(Tag::kFlow, id));
        flow_log_.start(id, slot.owner->op, slot.src, slot.dst, slot.wire_bytes,
                        sg4::Engine::get_clock());
        break;
      }
      case Tag::kFlow: {
        flow_log_.end(id, sg4::Engine::get_clock());
        FlowSlot& slot = slots_[id];
        ActiveCollective* owner = slot.owner;
        int64_t tag = slot.tag;
        graveyard_.push_back(std::move(slot.activity));
        slot.owner = nullptr;
        free_slots_.push_back(id);
        owner->run->on_flow_done(tag);
        if (owner->run->done()) finish_collective(owner->op);
        break;
      }
      case Tag::kContention:
        // SimGrid may report a cancelled exec again, long after cancel(): it stays alive in
        // contention_ until the replay ends (one per rank per collective).
        break;
    }
    --depth_;
  }

  void finish_op(int i) {
    end_[i] = sg4::Engine::get_clock();
    finished_op_[i] = 1;
    if ((++completed_ & 0xffff) == 0 && opt_.progress) report_progress();
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

  const CachedRoute& route(int src, int dst) {
    uint64_t key = (static_cast<uint64_t>(src) << 32) | static_cast<uint32_t>(dst);
    auto it = routes_.find(key);
    if (it != routes_.end()) return it->second;
    std::vector<sg4::Link*> links;
    double latency = 0;
    if (!leaf_routes_ && platform_.xml_file.empty()) leaf_routes_.emplace(platform_.topology);
    if (!leaf_routes_ ||
        !leaf_routes_->route(hosts_[src]->get_name(), hosts_[dst]->get_name(), &links, &latency))
      hosts_[src]->route_to(hosts_[dst], links, &latency);
    CachedRoute r;
    r.info.latency = latency;
    r.info.hop = HopClass::kNvlink;
    for (auto* l : links) {
      r.info.hop = std::max(r.info.hop, hop_class_of(l));
      auto [pos, fresh] = link_index_.emplace(l, static_cast<int>(link_ptrs_.size()));
      if (fresh) {
        link_ptrs_.push_back(l);
        link_bytes_.push_back(0.0);
      }
      r.links.push_back(pos->second);
      r.info.links.push_back({pos->second, l->get_bandwidth()});
    }
    pin_route(hosts_[src], hosts_[dst], links);
    return routes_.emplace(key, std::move(r)).first->second;
  }

  // SimGrid looks up the route of every comm again; in a Dijkstra zone that walks the path and
  // scans each hop's out-edges, so a switch with hundreds of ports made route lookups a third of
  // a 2,048-GPU replay (perf, bench/dp50_bench). A pair's route, once found, becomes a bypass
  // route (a map lookup) with the same links, when both hosts sit in one zone. A pair with a
  // bypass route of its own keeps it: SimGrid refuses a second one before changing anything.
  void pin_route(sg4::Host* a, sg4::Host* b, const std::vector<sg4::Link*>& links) {
    if (links.empty() || a == b) return;
    sg4::NetZone* zone = a->get_englobing_zone();
    if (zone != b->get_englobing_zone() || !pinned_.insert({a, b}).second) return;
    std::vector<sg4::LinkInRoute> hops(links.begin(), links.end());
    try {
      zone->add_bypass_route(a->get_netpoint(), b->get_netpoint(), nullptr, nullptr, hops);
    } catch (const simgrid::AssertionError&) {
      // already a bypass route: the one route_to() returned
    }
  }

  // What a link is, for the latency of the steps that cross it: NVLink and NVSwitch, a NIC or the
  // network, anything else inside a server (PCIe, CPU interconnect; also links without a class).
  static HopClass hop_class_of(const sg4::Link* l) {
    const char* cls = l->get_property("class");
    if (!cls) return HopClass::kPcie;
    const std::string c = cls;
    if (c == "nvlink" || c == "nvswitch") return HopClass::kNvlink;
    if (c == "nic" || c == "ethernet" || c == "infiniband" || c == "roce" || c == "sharp" ||
        c == "network")
      return HopClass::kNetwork;
    return HopClass::kPcie;
  }

  void report_progress() {
    auto now = std::chrono::steady_clock::now();
    if (now - last_report_ < std::chrono::seconds(2)) return;
    last_report_ = now;
    std::fprintf(stderr,
                 "\r  simulating: %zu of %zu ops done (%.0f%%), %lld activities, simulated %.6g s",
                 completed_, g_.ops.size(), 100.0 * completed_ / g_.ops.size(),
                 static_cast<long long>(activities_), sg4::Engine::get_clock());
    shown_progress_ = true;
  }

  void account_route(int src, int dst, double bytes) {
    for (int l : route(src, dst).links) {
      link_bytes_[l] += bytes;
      link_usage_.touch(l);
    }
  }

  RunResult collect();

  const PlatformSource& platform_;
  const ExecutionGraph& g_;
  const ReplayOptions& opt_;
  std::vector<sg4::Host*> hosts_, launch_hosts_;
  sg4::Host* timer_ = nullptr;
  std::vector<double> mem_bw_;
  std::vector<int> node_;
  std::vector<int> indeg_, succ_start_, succ_, queue_of_;
  std::vector<Queue> queues_;
  std::vector<double> start_, end_;
  std::vector<char> started_, finished_op_;
  std::vector<sg4::ActivityPtr> held_;
  std::vector<sg4::ActivityPtr> graveyard_;
  int depth_ = 0;
  std::unordered_map<int, std::unique_ptr<ActiveCollective>> active_;
  std::vector<FlowSlot> slots_;
  std::vector<sg4::ActivityPtr> contention_;
  static constexpr double kDoneWork = 1e-5;  // SimGrid's default precision/work-amount
  MaestroList maestro_list_;
  std::optional<LeafRoutes> leaf_routes_;  // generated platforms: routes from the routers'
  std::set<std::pair<const sg4::Host*, const sg4::Host*>> pinned_;
  std::vector<sg4::ActivityPtr> polled_;      // polled activities in flight
  std::vector<sg4::ActivityPtr> finished_;    // scratch for poll()
  std::vector<sg4::ActivityPtr> released_;    // found at the last poll, dropped at the next
  static constexpr double kDoneBytes = 1e-5;  // SimGrid's default precision/work-amount
  std::vector<uint64_t> free_slots_;
  std::unordered_map<uint64_t, CachedRoute> routes_;
  CollectivePlanner planner_;
  std::vector<CollectiveChoice> choices_ = std::vector<CollectiveChoice>(g_.collectives.size());
  std::map<std::string, int> endpoints_;
  std::unordered_map<const sg4::Link*, int> link_index_;
  std::vector<sg4::Link*> link_ptrs_;
  std::vector<double> link_bytes_;
  size_t completed_ = 0;
  static constexpr int64_t kMaxStalledSteps = 1000000;
  double last_clock_ = -1;
  int64_t completions_ = 0, last_completions_ = 0, stalled_steps_ = 0;
  std::chrono::steady_clock::time_point last_report_;
  bool shown_progress_ = false;
  int64_t activities_ = 0;
  FlowRecorder flow_log_{opt_.record_flows, opt_.max_recorded_flows};
  LinkUsageSampler link_usage_{link_ptrs_, opt_.link_usage_bins};
};

void ActiveCollective::issue(int src, int dst, double bytes, int64_t tag, int steps) {
  replayer->start_flow(this, src, dst, bytes, tag, steps);
}

using Interval = std::pair<double, double>;

// Sorts and merges overlapping intervals in place; returns their total length.
double merge(std::vector<Interval>& v) {
  std::sort(v.begin(), v.end());
  std::vector<Interval> out;
  for (const auto& iv : v) {
    if (!out.empty() && iv.first <= out.back().second)
      out.back().second = std::max(out.back().second, iv.second);
    else
      out.push_back(iv);
  }
  v.swap(out);
  double total = 0;
  for (const auto& iv : v) total += iv.second - iv.first;
  return total;
}

// Length of the intersection of two merged interval lists.
double overlap(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  double total = 0;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    double lo = std::max(a[i].first, b[j].first);
    double hi = std::min(a[i].second, b[j].second);
    if (hi > lo) total += hi - lo;
    (a[i].second < b[j].second) ? ++i : ++j;
  }
  return total;
}

RunResult Replayer::collect() {
  RunResult r;
  r.activities = activities_;
  r.collectives = choices_;
  double t0 = std::numeric_limits<double>::infinity();
  double t1 = 0;
  for (size_t i = 0; i < g_.ops.size(); ++i) {
    t0 = std::min(t0, start_[i]);
    t1 = std::max(t1, end_[i]);
  }
  r.makespan = g_.ops.empty() ? 0.0 : t1 - t0;
  const size_t nd = g_.devices.size();
  r.devices.resize(nd);
  std::vector<std::vector<Interval>> compute(nd);
  std::vector<std::vector<std::vector<Interval>>> comm(nd);  // per device, per comm queue
  std::vector<std::map<std::string, double>> phases(nd);
  auto comm_queue = [&](size_t d, int q) -> std::vector<Interval>& {
    if (comm[d].size() <= static_cast<size_t>(q)) comm[d].resize(q + 1);
    return comm[d][q];
  };
  for (size_t d = 0; d < nd; ++d) r.devices[d].name = g_.devices[d].name;
  for (size_t i = 0; i < g_.ops.size(); ++i) {
    const Op& op = g_.ops[i];
    const double len = end_[i] - start_[i];
    const int cls = static_cast<int>(op.stream.cls);
    ++r.devices[op.device].ops;
    if (op.kind == OpKind::kCollective) {
      // Every rank spends the collective's time communicating.
      for (int rank : g_.collectives[op.collective].ranks) {
        r.devices[rank].busy[cls] += len;
        comm_queue(rank, op.stream.index).push_back({start_[i], end_[i]});
      }
      continue;
    }
    auto& ds = r.devices[op.device];
    ds.busy[cls] += len;
    if (op.stream.cls == StreamClass::kCompute) {
      compute[op.device].push_back({start_[i], end_[i]});
      if (op.memory_bound) ds.memory_bound += len;
      phases[op.device][op.phase] += len;
    } else if (op.stream.cls == StreamClass::kComm) {
      comm_queue(op.device, op.stream.index).push_back({start_[i], end_[i]});
    }
  }
  for (size_t d = 0; d < nd; ++d) {
    auto& ds = r.devices[d];
    ds.idle = std::max(0.0, r.makespan - ds.busy[static_cast<int>(StreamClass::kCompute)]);
    // Each queue's time outside what compute and the queues before it already cover.
    std::vector<Interval> covered = compute[d];
    double covered_len = merge(covered);
    const double compute_len = covered_len;
    for (auto& queue : comm[d]) {
      const double len = merge(queue);
      const double hidden = overlap(queue, covered);
      ds.exposed_by_queue.push_back(len - hidden);
      covered.insert(covered.end(), queue.begin(), queue.end());
      covered_len = merge(covered);
    }
    ds.exposed_comm = covered_len - compute_len;
    for (const auto& [phase, seconds] : phases[d]) ds.compute_by_phase.emplace_back(phase, seconds);
  }
  std::unordered_map<std::string, std::string> link_class;
  for (const auto& l : platform_.topology.links) {
    link_class[l.name] = l.link_class;
    link_class[l.name + "_UP"] = l.link_class;
    link_class[l.name + "_DOWN"] = l.link_class;
  }
  for (size_t l = 0; l < link_ptrs_.size(); ++l) {
    auto it = link_class.find(link_ptrs_[l]->get_name());
    r.links.push_back({link_ptrs_[l]->get_name(), link_ptrs_[l]->get_bandwidth(),
                       link_ptrs_[l]->get_latency(), link_bytes_[l],
                       it == link_class.end() ? "" : it->second});
  }
  std::sort(r.links.begin(), r.links.end(),
            [](const LinkStats& a, const LinkStats& b) { return a.name < b.name; });
  link_usage_.finish(t1, &r);
  flow_log_.finish(t0, &r);
  if (opt_.record_timeline) {
    r.timeline.resize(g_.ops.size());
    for (size_t i = 0; i < g_.ops.size(); ++i) r.timeline[i] = {start_[i] - t0, end_[i] - t0};
  }
  return r;
}

}  // namespace

RunResult replay(const PlatformSource& platform, const ExecutionGraph& graph,
                 const ReplayOptions& options) {
  auto engine = start_engine(platform);
  auto replayer = std::make_unique<Replayer>(platform, graph, options);
  try {
    return replayer->run();
  } catch (...) {
    // A replay that stopped early still holds started activities, and SimGrid 3.32 crashes when
    // they or the engine are destroyed: leave both to the end of the process.
    (void)replayer.release();
    (void)engine.release();
    throw;
  }
}

RunResult replay_isolated(const PlatformSource& platform, const ExecutionGraph& graph,
                          const ReplayOptions& options) {
  return deserialize_run_result(run_in_child(
      [&] { return serialize_run_result(replay(platform, graph, options)); }, "simulation"));
}

}  // namespace orrery
