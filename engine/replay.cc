#include "engine/replay.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <simgrid/s4u.hpp>
#include <stdexcept>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "common/child_process.h"
#include "common/errors.h"
#include "common/flat_index.h"
#include "engine/alike_traffic.h"
#include "engine/collective_algos.h"
#include "engine/collective_cost.h"
#include "engine/flow_record.h"
#include "engine/fluid_model.h"
#include "engine/link_usage.h"
#include "engine/platform_model.h"
#include "engine/run_result_io.h"
#include "engine/xml_routes.h"
#include "platforms/topology.h"

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

// What an activity of the fluid model stands for, packed into its tag: the kind in the top byte,
// an index below.
enum class Tag : uint64_t {
  kOp = 0,
  kFlow = 1,
  kDelay = 2,
  kContention = 3,
  kFlowDelay = 4,   // a flow's step latency, before its comm starts
  kStartDelay = 5,  // a collective's base latency, before its first flows
};
constexpr int kTagShift = 56;
uint64_t pack(Tag t, uint64_t payload) { return (static_cast<uint64_t>(t) << kTagShift) | payload; }
Tag tag_of(uint64_t tag) { return static_cast<Tag>(tag >> kTagShift); }
uint64_t payload_of(uint64_t tag) { return tag & ((uint64_t{1} << kTagShift) - 1); }

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
  double max_rate = 0.0;
  std::array<double, kNumHopClasses> hop_latency{};
  std::vector<int> contention;  // the SM-contention execs it holds
  // Its flows stand for the mirrors' copies too: none of its ranks is a mirror (a collective
  // among a device's mirrors moves each rank's own flows).
  bool copied = true;
  int alike = -1;  // its alike rings run as one: the set in Replayer::alike_sets_, -1 none
  void issue(int src, int dst, double bytes, int64_t tag, int steps, bool alike) override;
};

struct CachedRoute;

struct FlowSlot {
  ActiveCollective* owner = nullptr;
  int64_t tag = 0;
  int src = -1, dst = -1;
  double wire_bytes = 0.0;
  const CachedRoute* route = nullptr;  // looked up once, when the flow is issued
  bool crossing = false;               // counted as crossing merged links (Replayer::flow_begins)
};

struct CachedRoute {
  std::vector<int> links;      // the replay's link indices
  std::vector<int> resources;  // the same links in the fluid model
  RouteInfo info;
  // A flow of a device with mirrors: `links` holds every copy's links (for the bytes they
  // carry), `resources` the ones the fluid model shares, each used counts[i] times (empty: once).
  std::vector<int> counts;
  bool alike = true;        // the copies' routes were alike (Replayer::mirrored_route)
  bool aggregated = false;  // alike rings' flows at one place (Replayer::alike_set)
  // Whether it crosses links alike rings merged (LinkClasses::merged()), as of when that many
  // links were merged (LinkClasses::merged_links); -1: not asked yet.
  mutable int64_t classes_seen = -1;
  mutable bool crossing = false;
  // The bytes flows over it carried, spread over its links when the run ends: one addition per
  // flow, where adding to each link (every copy's of a mirrored flow: dozens) missed the cache
  // per link at scale.
  mutable double bytes = 0.0;
};

class Replayer {
 public:
  Replayer(const PlatformSource& p, PlatformModel& platform, const ExecutionGraph& g,
           const ReplayOptions& opt)
      : source_(p), platform_(platform), g_(g), opt_(opt) {}

  // Whether other traffic broke an aggregation of alike rings (alike_set): run() then returned
  // nothing, and the caller replays again without aggregating.
  bool alike_broken() const { return alike_broken_; }

  RunResult run() {
    auto wall0 = std::chrono::steady_clock::now();
    resolve_hosts();
    build_dependency_arrays();
    assign_queues();

    if (link_usage_.on())
      model_.on_usage = [this](int resource, double from, double to, double rate) {
        const int link = link_of_resource_[resource];
        if (link < 0) return;
        link_usage_.carried(link, from, to, rate * (to - from));
      };
    for (size_t i = 0; i < g_.ops.size(); ++i)
      if (indeg_[i] == 0) make_ready(static_cast<int>(i));
    last_report_ = std::chrono::steady_clock::now();
    const double limit = opt_.max_simulated_seconds;
    std::vector<uint64_t> ended;
    while (model_.advance(limit, &ended)) {
      // Simultaneous ends in a fixed order: the tags.
      std::sort(ended.begin(), ended.end());
      for (uint64_t tag : ended) on_complete(tag);
      ended.clear();
      if (alike_broken_) return RunResult{};
    }
    model_.finish_usage();
    if (shown_progress_) std::fprintf(stderr, "\r%100s\r", "");
    if (completed_ != g_.ops.size()) {
      const std::string left = std::to_string(g_.ops.size() - completed_) + " of " +
                               std::to_string(g_.ops.size()) + " ops unfinished";
      // Activities left that would end only past the limit, or never (a rate of nothing).
      if (model_.running() > 0)
        throw InputError("the simulation passed the limit of " +
                         format_quantity(limit, Quantity::kTime) + " (" + days(limit) +
                         ") of simulated time with " + left + " (" + running_ops() +
                         "): an op, size or rate is far out of scale; raise the limit with "
                         "--max-simulated-time TIME if the workload is meant to run this long");
      throw std::runtime_error("replay stopped at simulated time " + std::to_string(model_.now()) +
                               " s with " + left + " (" + running_ops() + ")");
    }
    RunResult r = collect();
    r.wall_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    return r;
  }

  // A flow of `steps` ring steps waits for all their latencies but the last, which the route's
  // own latency adds: steps x max(route, hop latency) - route latency.
  void start_flow(ActiveCollective* owner, int src, int dst, double bytes, int64_t tag, int steps,
                  bool alike) {
    uint64_t slot;
    if (free_slots_.empty()) {
      slot = slots_.size();
      slots_.emplace_back();
    } else {
      slot = free_slots_.back();
      free_slots_.pop_back();
    }
    const CachedRoute& r =
        alike ? alike_sets_[owner->alike].route(src, dst) : flow_route(src, dst, owner->copied);
    const double wire = bytes / owner->efficiency;
    const double step = std::max(owner->hop_latency[static_cast<int>(r.info.hop)], r.info.latency);
    const double delay = steps * step - r.info.latency;
    ++activities_;
    slots_[slot] = {owner, tag, src, dst, wire, &r, flow_begins(r)};
    if (delay > 0) {
      ++activities_;
      start_delay(delay, pack(Tag::kFlowDelay, slot));
      return;
    }
    account_route(r, wire);
    start_comm(r, wire, pack(Tag::kFlow, slot), owner->max_rate);
    flow_log_.start(slot, owner->op, src, dst, wire, model_.now());
  }

 private:
  void resolve_hosts() {
    std::map<std::string, int> node_ids;
    for (const auto& d : g_.devices) {
      const std::string& h = d.host.empty() ? d.name : d.host;
      const std::string& lh = d.launch_host.empty() ? h : d.launch_host;
      const int host = platform_.host(h);
      const int launch = platform_.host(lh);
      if (host < 0)
        throw InputError("device \"" + d.name + "\": the platform has no host \"" + h + "\"");
      if (launch < 0)
        throw InputError("device \"" + d.name + "\": the platform has no launch host \"" + lh +
                         "\"");
      hosts_.push_back(host);
      launch_hosts_.push_back(launch);
      const char* bw = platform_.property(host, "mem_bw");
      mem_bw_.push_back(bw ? std::atof(bw) : std::numeric_limits<double>::infinity());
      const std::string& node = d.node.empty() ? h : d.node;
      node_.push_back(node_ids.emplace(node, static_cast<int>(node_ids.size())).first->second);
    }
    // Mirrors: how many copies of a device's execs each of its hosts runs (mirrors on hosts of
    // their own: one).
    exec_copies_.assign(g_.devices.size(), 1);
    launch_copies_.assign(g_.devices.size(), 1);
    for (size_t d = 0; d < g_.devices.size(); ++d) {
      const auto& mirrors = g_.devices[d].mirrors;
      if (mirrors.empty()) continue;
      any_mirrors_ = true;
      mirrored_by_.resize(g_.devices.size(), -1);
      has_mirrors_.resize(g_.devices.size(), 0);
      has_mirrors_[d] = 1;
      for (int m : mirrors) mirrored_by_[m] = static_cast<int>(d);
      for (int m : mirrors) {
        exec_copies_[d] += hosts_[m] == hosts_[d];
        launch_copies_[d] += launch_hosts_[m] == launch_hosts_[d];
      }
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
    started_.assign(n, 0);
    finished_op_.assign(n, 0);
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
    start_[i] = model_.now();
    started_[i] = 1;
    if (op.kind == OpKind::kCollective) {
      start_collective(i);
      return;
    }
    ++activities_;
    if (op.kind == OpKind::kTransfer) {
      const CachedRoute& r = flow_route(op.src, op.dst);
      if (flow_begins(r)) crossing_transfers_.insert(i);
      account_route(r, op.transfer_bytes);
      start_comm(r, op.transfer_bytes, pack(Tag::kOp, i), op.max_rate);
    } else {
      // Host-stream ops run on the device's launch host (its CPU thread); the rest on the device.
      const int host =
          op.stream.cls == StreamClass::kHost ? launch_hosts_[op.device] : hosts_[op.device];
      const double speed = platform_.speed(host);
      double duration = default_op_duration(op, speed, mem_bw_[op.device]);
      const int copies =
          op.stream.cls == StreamClass::kHost ? launch_copies_[op.device] : exec_copies_[op.device];
      start_exec(host, duration * speed, pack(Tag::kOp, i), -1, copies);
    }
  }

  // A transfer as SimGrid's CM02 model prices it (network/TCP-gamma and weight-S 0): the route's
  // latency first, using no bandwidth, then the bytes (whole bytes, as a SimGrid payload) at the
  // max-min share of every link crossed, where a flow's share is inversely proportional to its
  // route latency (SimGrid's sharing penalty; 1 when the route has no latency).
  // `max_rate` > 0 bounds the flow further (Op::max_rate).
  int start_comm(const CachedRoute& r, double bytes, uint64_t tag, double max_rate) {
    if (!r.alike) ++asymmetric_mirror_flows_;
    const double size = static_cast<double>(std::llround(bytes));
    const double latency = r.info.latency;
    double bound = FluidModel::kUnbounded;
    if (latency <= 0)  // SimGrid bounds such a flow by its slowest link (fat pipes included)
      for (const auto& hop : r.info.links)
        bound = bound < 0 ? hop.second : std::min(bound, hop.second);
    if (max_rate > 0) bound = bound < 0 ? max_rate : std::min(bound, max_rate);
    return model_.start(size, r.resources, r.counts, latency, latency > 0 ? latency : 1.0, bound,
                        tag);
  }

  // An exec as SimGrid's Cas01 model prices it: one core of the host (its speed, or `bound`),
  // hosts' cores shared max-min fairly among the execs on them; `copies` alike execs at once
  // (a device's and its mirrors' on a host they share).
  int start_exec(int host, double flops, uint64_t tag, double bound = -1, int copies = 1) {
    return model_.start(flops, host_resource(host), copies > 1 ? std::vector<int>{copies} : kOnce,
                        0.0, 1.0, bound > 0 ? bound : platform_.speed(host), tag);
  }
  inline static const std::vector<int> kOnce{};

  // A pure delay: contends for nothing.
  void start_delay(double seconds, uint64_t tag) {
    model_.start(0.0, {}, seconds, 1.0, FluidModel::kUnbounded, tag);
  }

  // The host as an exec's resource list, kept: no list built per exec.
  const std::vector<int>& host_resource(int host) {
    auto [it, fresh] = host_resource_.try_emplace(host);
    if (fresh) {
      it->second = {model_.add_resource(platform_.speed(host) * platform_.cores(host))};
      link_of_resource_.push_back(-1);
    }
    return it->second;
  }

  // What the planner needs to know of the platform for collective `c`: its ranks' nodes, the
  // routes, and the in-network reduction endpoints their hosts name (host properties
  // "nvls_host", "collnet_host"), added past the devices as extra endpoints.
  CollectiveTopology collective_topology(const Collective& c) {
    CollectiveTopology t;
    for (int r : c.ranks) {
      t.node_of.push_back(node_[r]);
      t.nvls.push_back(endpoint(platform_.property(hosts_[r], "nvls_host")));
    }
    if (!c.ranks.empty()) {
      const int first = hosts_[c.ranks[0]];
      t.collnet = endpoint(platform_.property(first, "collnet_host"));
      if (const char* launch = platform_.property(first, kNcclLaunchProperty))
        t.launch = std::strtod(launch, nullptr);
      if (const char* cc = platform_.property(first, kComputeCapabilityProperty))
        t.compute_capability = std::strtod(cc, nullptr);
    }
    t.route = [this](int s, int d) -> const RouteInfo& { return route(s, d).info; };
    return t;
  }

  // Index of the endpoint host `name` in hosts_ (appended after the devices), -1 when absent.
  int endpoint(const char* name) {
    if (!name) return -1;
    auto it = endpoints_.find(name);
    if (it != endpoints_.end()) return it->second;
    const int h = platform_.host(name);
    int id = -1;
    if (h >= 0) {
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
    active->max_rate = plan.max_rate;
    active->hop_latency = plan.hop_latency;
    if (any_mirrors_) active->copied = copies_flows_for_mirrors(c, mirrored_by_);
    if (!c.analytical && !(any_mirrors_ && active->copied)) active->alike = alike_set(c, plan);
    int channels = 1;
    if (plan.algo == CollectiveAlgo::kTree) channels = static_cast<int>(plan.tree.size());
    if (plan.algo == CollectiveAlgo::kRing) channels = static_cast<int>(plan.channels.size());
    choices_[g_.ops[i].collective] = {plan.algo, plan.protocol, channels};
    // The collective's kernels hold part of every rank's SMs while it runs.
    if (c.sm_share > 0)
      for (int r : c.ranks)
        active->contention.push_back(start_exec(hosts_[r], kForever, pack(Tag::kContention, 0),
                                                c.sm_share * platform_.speed(hosts_[r])));
    ActiveCollective* a = active.get();
    active_[i] = std::move(active);
    if (c.analytical) {
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
      start_delay(t, pack(Tag::kDelay, i));
      return;
    }
    a->run = make_collective_run(c, plan, *a, a->alike >= 0);
    if (plan.base_latency > 0 && c.ranks.size() > 1) {
      ++activities_;
      start_delay(plan.base_latency, pack(Tag::kStartDelay, i));
      return;
    }
    start_run(i);
  }

  void start_run(int i) {
    ActiveCollective* a = active_.at(i).get();
    a->run->start();
    if (a->run->done()) {
      // Nothing to move (one rank): complete through the model so ordering stays uniform.
      ++activities_;
      start_delay(0.0, pack(Tag::kDelay, i));
    }
  }

  void finish_collective(int i) {
    auto it = active_.find(i);
    for (int exec : it->second->contention) model_.cancel(exec);
    active_.erase(it);
    finish_op(i);
  }

  void on_complete(uint64_t tag) {
    const uint64_t id = payload_of(tag);
    switch (tag_of(tag)) {
      case Tag::kOp:
        finish_op(static_cast<int>(id));
        break;
      case Tag::kDelay:
        finish_collective(static_cast<int>(id));
        break;
      case Tag::kStartDelay:
        start_run(static_cast<int>(id));
        break;
      case Tag::kFlowDelay: {
        const FlowSlot& slot = slots_[id];
        account_route(*slot.route, slot.wire_bytes);
        start_comm(*slot.route, slot.wire_bytes, pack(Tag::kFlow, id), slot.owner->max_rate);
        flow_log_.start(id, slot.owner->op, slot.src, slot.dst, slot.wire_bytes, model_.now());
        break;
      }
      case Tag::kFlow: {
        flow_log_.end(id, model_.now());
        FlowSlot& slot = slots_[id];
        flow_ends(*slot.route, slot.crossing);
        ActiveCollective* owner = slot.owner;
        const int64_t flow_tag = slot.tag;
        slot.owner = nullptr;
        free_slots_.push_back(id);
        owner->run->on_flow_done(flow_tag);
        if (owner->run->done()) finish_collective(owner->op);
        break;
      }
      case Tag::kContention:
        break;  // cancelled when its collective ends, never reported
    }
  }

  void finish_op(int i) {
    end_[i] = model_.now();
    if (!crossing_transfers_.empty() && crossing_transfers_.erase(i)) --crossing_in_flight_;
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

  // The key of a route in route_index_: its ends, and whether it is a mirrored flow's.
  static int64_t route_key(int src, int dst, bool mirrored) {
    return ((static_cast<int64_t>(src) << 32 | static_cast<uint32_t>(dst)) << 1) | mirrored;
  }

  const CachedRoute& route(int src, int dst) {
    const int64_t key = route_key(src, dst, false);
    if (const int* known = route_index_.find(key)) return route_store_[*known];
    std::vector<int> links;
    double latency = 0;
    if (!platform_.route(hosts_[src], hosts_[dst], &links, &latency)) throw no_route(src, dst);
    CachedRoute r;
    r.info.latency = latency;
    r.info.hop = HopClass::kNvlink;
    for (int id : links) {
      const ModelLink& l = platform_.link(id);
      r.info.hop = std::max(r.info.hop, hop_class_of(l));
      auto [pos, fresh] = link_index_.emplace(id, static_cast<int>(link_ids_.size()));
      if (fresh) {
        link_ids_.push_back(id);
        link_names_.push_back(l.name);
        link_resource_.push_back(add_link_resource(l));
        link_of_resource_.push_back(pos->second);
        stands_for_.push_back(-1);
      }
      r.links.push_back(pos->second);
      r.resources.push_back(link_resource_[pos->second]);
      r.info.links.push_back({pos->second, l.bandwidth});
    }
    route_index_.insert(key, static_cast<int>(route_store_.size()));
    route_store_.push_back(std::move(r));
    return route_store_.back();
  }

  // Device d's t-th copy: itself (t = 0), its mirror t, or itself again when it has no mirrors
  // (an endpoint past the devices, a device the others' copies all reach).
  int copy_of(int d, int t) const {
    if (t == 0 || d >= static_cast<int>(g_.devices.size())) return d;
    const auto& mirrors = g_.devices[d].mirrors;
    return mirrors.empty() ? d : mirrors[t - 1];
  }
  bool has_mirrors(int d) const {
    return d < static_cast<int>(has_mirrors_.size()) && has_mirrors_[d];
  }

  // The route a flow from src to dst takes in the fluid model: its own, or when it is `copied`
  // and an end has mirrors the copies' together (mirrored_route).
  const CachedRoute& flow_route(int src, int dst, bool copied = true) {
    if (!copied || !any_mirrors_ || (!has_mirrors(src) && !has_mirrors(dst)))
      return route(src, dst);
    const int64_t key = route_key(src, dst, true);
    if (const int* known = route_index_.find(key)) return route_store_[*known];
    CachedRoute r = mirrored_route(src, dst);
    route_index_.insert(key, static_cast<int>(route_store_.size()));
    route_store_.push_back(std::move(r));
    return route_store_.back();
  }

  // The k copies of a flow (the device's and its mirrors', each between the same copies of its
  // ends) as one activity. Where every copy's route is alike the flow's own (as long, with the
  // same latency, and link by link the same bandwidth and sharing) and the copies' links stand
  // for the flow's consistently (link l of a copy always in place of one and the same link of
  // the device's own routes), the platform is symmetric under swapping the copies, the max-min
  // rates of the copies are equal, and only the flow's own links need constraining: link i
  // counted once per copy that crosses that very link (a rail's own NIC port once, a leaf
  // uplink all the copies share k times). Otherwise the activity holds every copy's links,
  // each as often as the copies cross it: all their constraints, with the copies held to one
  // rate (the lockstep the device and its mirrors keep), counted in asymmetric_mirror_flows.
  CachedRoute mirrored_route(int src, int dst) {
    // check_graph: ends that both have mirrors have as many.
    const int k =
        1 + static_cast<int>(std::max(has_mirrors(src) ? g_.devices[src].mirrors.size() : 0,
                                      has_mirrors(dst) ? g_.devices[dst].mirrors.size() : 0));
    std::vector<const CachedRoute*> copies;
    for (int t = 0; t < k; ++t) copies.push_back(&route(copy_of(src, t), copy_of(dst, t)));
    const CachedRoute& own = *copies[0];
    CachedRoute m;
    m.info = own.info;
    for (const CachedRoute* c : copies)
      m.links.insert(m.links.end(), c->links.begin(), c->links.end());
    const size_t n = own.links.size();
    bool alike = true;
    for (const CachedRoute* c : copies) {
      alike = alike && c->links.size() == n && c->info.latency == own.info.latency;
      for (size_t i = 0; alike && i < n; ++i) {
        const int l = c->links[i], l0 = own.links[i];
        const ModelLink &a = platform_.link(link_ids_[l]), &b = platform_.link(link_ids_[l0]);
        alike = a.bandwidth == b.bandwidth && a.sharing == b.sharing &&
                (stands_for_[l] < 0 || stands_for_[l] == l0);
      }
    }
    if (alike) {
      m.resources = own.resources;
      m.counts.assign(n, 0);
      for (const CachedRoute* c : copies)
        for (size_t i = 0; i < n; ++i) {
          const int l = c->links[i], l0 = own.links[i];
          if (stands_for_[l] < 0) {
            stands_for_[l] = l0;
            if (l != l0) link_usage_.same_as(l, l0);
          }
          m.counts[i] += l == l0;
        }
      if (std::all_of(m.counts.begin(), m.counts.end(), [](int c) { return c == 1; }))
        m.counts.clear();
      return m;
    }
    m.alike = false;
    for (const CachedRoute* c : copies)
      for (int res : c->resources) {
        auto at = std::find(m.resources.begin(), m.resources.end(), res);
        if (at == m.resources.end()) {
          m.resources.push_back(res);
          m.counts.push_back(1);
        } else {
          ++m.counts[at - m.resources.begin()];
        }
      }
    return m;
  }

  // Alike rings stay exact while no other flow crosses the links they merged: a flow that
  // starts on such links while aggregated flows are in flight, or an aggregated one that starts
  // while such flows are, breaks the aggregation, and replay() runs again without it. Returns
  // whether the flow counts as crossing, for flow_ends.
  bool flow_begins(const CachedRoute& r) {
    if (r.aggregated) {
      if (crossing_in_flight_ > 0) alike_broken_ = true;
      ++aggregated_in_flight_;
      return false;
    }
    if (alike_sets_.empty() || !crosses_merged(r)) return false;
    if (aggregated_in_flight_ > 0) alike_broken_ = true;
    ++crossing_in_flight_;
    return true;
  }
  bool crosses_merged(const CachedRoute& r) {
    if (r.classes_seen != link_classes_.merged_links) {
      r.classes_seen = link_classes_.merged_links;
      r.crossing = std::any_of(r.links.begin(), r.links.end(),
                               [&](int l) { return link_classes_.merged(l); });
    }
    return r.crossing;
  }
  // A new set merged links: the flows in flight that cross them now count as crossing.
  void recount_crossing() {
    for (FlowSlot& s : slots_)
      if (s.owner && !s.route->aggregated && !s.crossing && crosses_merged(*s.route)) {
        s.crossing = true;
        ++crossing_in_flight_;
      }
    for (size_t i = 0; i < g_.ops.size(); ++i)
      if (g_.ops[i].kind == OpKind::kTransfer && started_[i] && !finished_op_[i] &&
          !crossing_transfers_.count(static_cast<int>(i)) &&
          crosses_merged(flow_route(g_.ops[i].src, g_.ops[i].dst))) {
        crossing_transfers_.insert(static_cast<int>(i));
        ++crossing_in_flight_;
      }
  }
  void flow_ends(const CachedRoute& r, bool crossing) {
    if (r.aggregated) --aggregated_in_flight_;
    if (crossing) --crossing_in_flight_;
  }

  // Alike rings (engine/alike_traffic.h): the rings alike_rings names for `plan`, run as their
  // first where the partition their flows and links make is equitable. Returns the set's index
  // in alike_sets_, or -1 to run every ring. Decided once per plan; not for a collective whose
  // flows stand for mirrors' copies (those are aggregated already).
  int alike_set(const Collective& c, const CollectivePlan& plan) {
    if (!opt_.aggregate_alike || opt_.record_flows) return -1;
    auto [known, fresh] = alike_of_plan_.try_emplace(&plan, -1);
    if (!fresh) return known->second;
    const AlikeRings a = alike_rings(c, plan);
    if (a.flows.size() < 2) return -1;
    // The collective's other flows run beside the rings (its phases pipeline): their links stay
    // out of merged classes.
    std::vector<char> other(link_ids_.size() + 1, 0);
    for (const auto& [src, dst] : a.others)
      for (int l : route(src, dst).links) {
        if (static_cast<size_t>(l) >= other.size()) other.resize(l + 1, 0);
        other[l] = 1;
      }
    const size_t n = a.flows[0].size();
    std::vector<AlikePlace> places(n);
    std::vector<std::vector<const CachedRoute*>> copies(n);
    for (size_t i = 0; i < n; ++i)
      for (const auto& copy : a.flows) {
        const CachedRoute& r = route(copy[i].first, copy[i].second);
        const RouteInfo& own = copies[i].empty() ? r.info : copies[i][0]->info;
        if (r.info.latency != own.latency || r.info.hop != own.hop) return -1;
        copies[i].push_back(&r);
        places[i].routes.push_back(&r.links);
      }
    auto alike = [this](int x, int y) {
      const ModelLink &a = platform_.link(link_ids_[x]), &b = platform_.link(link_ids_[y]);
      return a.bandwidth == b.bandwidth && a.sharing == b.sharing;
    };
    std::vector<CountedLinks> counted;
    auto apart = [&](int l) { return static_cast<size_t>(l) < other.size() && other[l]; };
    const int64_t merged_before = link_classes_.merged_links;
    if (!aggregate_alike(places, alike, apart, &link_classes_, &counted)) return -1;
    AlikeSet set;
    set.places_of.assign(g_.devices.size(), {});
    for (size_t i = 0; i < n; ++i) {
      set.places_of[a.flows[0][i].first].emplace_back(a.flows[0][i].second, static_cast<int>(i));
      CachedRoute m;
      m.info = copies[i][0]->info;
      for (const CachedRoute* r : copies[i]) {
        m.links.insert(m.links.end(), r->links.begin(), r->links.end());
        for (int l : r->links) {
          const int of = link_classes_.canonical[l];
          // A link a mirror's copy stands on keeps taking its device's link's usage (which now
          // takes the class's: the sampler follows the chain).
          if (of >= 0 && of != l && (stands_for_[l] < 0 || stands_for_[l] == l))
            link_usage_.same_as(l, of);
        }
      }
      for (int l : counted[i].links) m.resources.push_back(link_resource_[l]);
      if (std::any_of(counted[i].counts.begin(), counted[i].counts.end(),
                      [](int k) { return k != 1; }))
        m.counts = std::move(counted[i].counts);
      m.aggregated = true;
      route_store_.push_back(std::move(m));
      set.routes.push_back(&route_store_.back());
    }
    known->second = static_cast<int>(alike_sets_.size());
    alike_sets_.push_back(std::move(set));
    // Only newly merged links can make flows in flight cross (a set of classes made before,
    // every bucket's all-reduce after the first, changes nothing).
    if (link_classes_.merged_links != merged_before) recount_crossing();
    return known->second;
  }

  InputError no_route(int src, int dst) const {
    return InputError(no_route_message(source_.xml_file, platform_.host_name(hosts_[src]),
                                       platform_.host_name(hosts_[dst]), g_.devices[src].name,
                                       g_.devices[dst].name));
  }

  int add_link_resource(const ModelLink& l) {
    FluidModel::Sharing sharing = FluidModel::Sharing::kShared;
    switch (l.sharing) {
      case ModelLink::Sharing::kShared:
        break;
      case ModelLink::Sharing::kFatpipe:
        sharing = FluidModel::Sharing::kFatpipe;
        break;
      default:
        throw InputError("link \"" + l.name +
                         "\": Orrery models SHARED, SPLITDUPLEX and FATPIPE links only (this one "
                         "is a WIFI or non-linear link)");
    }
    if (!(l.bandwidth > 0))
      throw InputError("link \"" + l.name + "\" has no bandwidth: a route crosses it");
    return model_.add_resource(l.bandwidth, sharing);
  }

  // What a link is, for the latency of the steps that cross it: NVLink and NVSwitch, a NIC or the
  // network, anything else inside a server (PCIe, CPU interconnect; also links without a class).
  static HopClass hop_class_of(const ModelLink& l) {
    const std::string& c = l.link_class;
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
                 static_cast<long long>(activities_), model_.now());
    shown_progress_ = true;
  }

  void account_route(const CachedRoute& r, double bytes) { r.bytes += bytes; }

  RunResult collect();

  const PlatformSource& source_;
  PlatformModel& platform_;
  const ExecutionGraph& g_;
  const ReplayOptions& opt_;
  FluidModel model_;
  std::vector<int> hosts_, launch_hosts_;  // platform_'s host ids
  std::unordered_map<int, std::vector<int>> host_resource_;
  std::vector<double> mem_bw_;
  std::vector<int> node_;
  std::vector<int> indeg_, succ_start_, succ_, queue_of_;
  std::vector<Queue> queues_;
  std::vector<double> start_, end_;
  std::vector<char> started_, finished_op_;
  std::unordered_map<int, std::unique_ptr<ActiveCollective>> active_;
  std::vector<FlowSlot> slots_;
  std::vector<uint64_t> free_slots_;
  // Routes by route_key (one lookup per flow, in one flat table), the routes in a deque
  // (references to them stay valid as it grows).
  FlatIndex route_index_;
  std::deque<CachedRoute> route_store_;
  CollectivePlanner planner_;
  std::vector<CollectiveChoice> choices_ = std::vector<CollectiveChoice>(g_.collectives.size());
  std::map<std::string, int> endpoints_;
  std::unordered_map<int, int> link_index_;  // by platform_'s link id: the replay's link index
  std::vector<int> link_ids_;                // per link index: platform_'s link id
  std::vector<std::string> link_names_;
  std::vector<int> link_resource_;     // per link index: its resource in model_
  std::vector<int> link_of_resource_;  // per resource of model_: its link index, -1 for hosts
  // Mirrors (Device::mirrors): whether any device has them, per device whether it has and the
  // copies of its execs on its host and launch host, and per link the link of a device's own routes
  // it stands for (-1: none yet; its usage is that link's).
  bool any_mirrors_ = false;
  std::vector<int> mirrored_by_;   // per device: the device it mirrors, -1 none (empty: no mirrors)
  std::vector<char> has_mirrors_;  // empty: none has
  std::vector<int> exec_copies_, launch_copies_;
  std::vector<int> stands_for_;
  int64_t asymmetric_mirror_flows_ = 0;
  // Alike rings run as one: per set, each device's places in the first copy (a ring's device
  // sends at one, a tree's at up to six) as (destination, place), and the route a flow takes
  // at a place for all the copies; per plan, its set.
  struct AlikeSet {
    std::vector<std::vector<std::pair<int, int>>> places_of;
    std::vector<const CachedRoute*> routes;
    const CachedRoute& route(int src, int dst) const {
      for (const auto& [to, place] : places_of[src])
        if (to == dst) return *routes[place];
      throw std::logic_error("alike flow at no place of its set");
    }
  };
  std::vector<AlikeSet> alike_sets_;
  std::unordered_map<const CollectivePlan*, int> alike_of_plan_;
  LinkClasses link_classes_;
  bool alike_broken_ = false;
  int64_t aggregated_in_flight_ = 0, crossing_in_flight_ = 0;
  std::unordered_set<int> crossing_transfers_;  // transfer ops in flight that cross merged links
  size_t completed_ = 0;
  std::chrono::steady_clock::time_point last_report_;
  bool shown_progress_ = false;
  int64_t activities_ = 0;
  FlowRecorder flow_log_{opt_.record_flows, opt_.max_recorded_flows};
  LinkUsageSampler link_usage_{link_names_, opt_.link_usage_bins};
};

void ActiveCollective::issue(int src, int dst, double bytes, int64_t tag, int steps, bool alike) {
  replayer->start_flow(this, src, dst, bytes, tag, steps, alike);
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
  // A mirror ran its device's ops at the same times, but for the collectives the two take part
  // in together, which queue on the device.
  if (any_mirrors_) {
    std::vector<int64_t> shared(nd, 0);
    for (const Op& op : g_.ops) {
      if (op.kind != OpKind::kCollective || g_.devices[op.device].mirrors.empty()) continue;
      const auto& ranks = g_.collectives[op.collective].ranks;
      shared[op.device] += std::any_of(ranks.begin(), ranks.end(),
                                       [&](int rank) { return mirrored_by_[rank] == op.device; });
    }
    for (size_t d = 0; d < nd; ++d)
      for (int m : g_.devices[d].mirrors) {
        r.devices[m] = r.devices[d];
        r.devices[m].name = g_.devices[m].name;
        r.devices[m].ops -= shared[d];
      }
  }
  r.asymmetric_mirror_flows = asymmetric_mirror_flows_;
  // The class of a link the flows crossed, by its topology link's name (SimGrid's split-duplex
  // halves add _UP and _DOWN); a map by view over the topology's names, no copies of them.
  std::unordered_map<std::string_view, const std::string*> link_class;
  link_class.reserve(source_.topology.links.size());
  for (const auto& l : source_.topology.links) link_class.emplace(l.name, &l.link_class);
  auto class_of = [&](const std::string& name) -> std::string {
    auto it = link_class.find(name);
    for (std::string_view suffix : {"_UP", "_DOWN"})
      if (it == link_class.end() && name.size() > suffix.size() &&
          name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
        it = link_class.find(std::string_view(name).substr(0, name.size() - suffix.size()));
    return it == link_class.end() ? "" : *it->second;
  };
  std::vector<double> link_bytes(link_ids_.size(), 0.0);
  for (const CachedRoute& route : route_store_)
    if (route.bytes != 0)
      for (int l : route.links) link_bytes[l] += route.bytes;
  for (size_t l = 0; l < link_ids_.size(); ++l) {
    const ModelLink& link = platform_.link(link_ids_[l]);
    r.links.push_back(
        {link.name, link.bandwidth, link.latency, link_bytes[l], class_of(link.name)});
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

// SimGrid allows one engine per process, so once a replay is done its engine only waits for the
// process to end: tearing down the platform of 16,384 GPUs (half a million links and their
// routes) took 0.5 s, a tenth of the whole run. The process's end frees it instead.
void keep_until_exit(std::unique_ptr<sg4::Engine> engine) { (void)engine.release(); }

// Runs `replays` on the platform as the replay reads it. A generated platform whose route graph
// is one tree is read from its topology: SimGrid would only hold it (engine/platform_model.h).
// Anything else SimGrid loads and routes.
void on_platform(const PlatformSource& platform, const std::function<void(PlatformModel&)>& replays,
                 bool free_on_return = true) {
  if (platform.xml_file.empty()) {
    check_topology(platform.topology, "platform " + platform.topology.name);
    if (auto model = topology_model(platform.topology)) {
      replays(*model);
      if (!free_on_return) (void)model.release();
      return;
    }
  }
  std::vector<GraphStep> xml_steps;
  bool xml_complete = false;
  auto engine = start_engine(platform, &xml_steps, &xml_complete);
  replays(*simgrid_model(platform, xml_steps, xml_complete));
  keep_until_exit(std::move(engine));
}

}  // namespace

namespace {

// Replays `graph` into *result, and again without aggregating where other traffic broke an
// aggregation of alike rings. Returns the replayer whose run gave the result.
std::unique_ptr<Replayer> replay_exactly(const PlatformSource& platform, PlatformModel& model,
                                         const ExecutionGraph& graph, const ReplayOptions& options,
                                         RunResult* result) {
  auto replayer = std::make_unique<Replayer>(platform, model, graph, options);
  *result = replayer->run();
  if (replayer->alike_broken()) {
    ReplayOptions without_alike = options;
    without_alike.aggregate_alike = false;
    replayer = std::make_unique<Replayer>(platform, model, graph, without_alike);
    *result = replayer->run();
  }
  return replayer;
}

}  // namespace

RunResult replay(const PlatformSource& platform, const ExecutionGraph& graph,
                 const ReplayOptions& options) {
  RunResult r;
  on_platform(
      platform,
      [&](PlatformModel& model) {
        auto replayer = replay_exactly(platform, model, graph, options, &r);
        if (!options.free_on_return) (void)replayer.release();
      },
      options.free_on_return);
  return r;
}

void replay_each(const PlatformSource& platform, size_t count,
                 const std::function<ExecutionGraph(size_t)>& graph, const ReplayOptions& options,
                 const std::function<void(size_t, RunResult)>& result) {
  on_platform(platform, [&](PlatformModel& model) {
    for (size_t i = 0; i < count; ++i) {
      const ExecutionGraph g = graph(i);
      RunResult r;
      replay_exactly(platform, model, g, options, &r);
      result(i, std::move(r));
    }
  });
}

RunResult replay_isolated(const PlatformSource& platform, const ExecutionGraph& graph,
                          const ReplayOptions& options) {
  return deserialize_run_result(run_in_child(
      [&] { return serialize_run_result(replay(platform, graph, options)); }, "simulation"));
}

}  // namespace orrery
