#include "engine/collective_algos.h"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>

namespace orrery {
namespace {

// Ring over `ranks` (device indices). AllReduce: 2(n-1) steps, reduce-scatter then all-gather;
// AllGather: n-1 steps, rank i forwards block (i - k) mod n at step k; ReduceScatter: n-1 steps,
// block (i - k - 1) mod n. Each block moves as `chunks` consecutive chunks: chunk j of step k
// leaves rank i once rank i sent chunk j of step k-1 (it forwards what it received... from its own
// previous send), rank i-1 sent chunk j of step k-1 (the data arrived), and rank i sent chunk
// j-1 of step k (one chunk at a time per link).
//
// A ring of more than kMaxRingFlowsPerRank steps moves consecutive steps as one flow (the
// issuer charges every step's latency): a flat ring of n ranks would otherwise cost 2n(n-1)
// flows, quadratic in the cluster. On a ring whose links are alike the time is the same,
// s x (latency + block / bandwidth) for s steps; only the lockstep between neighbours inside a
// group of steps is lost.
constexpr int kMaxRingFlowsPerRank = 64;

int steps_per_flow(int64_t steps) {
  return static_cast<int>(
      std::max<int64_t>(1, (steps + kMaxRingFlowsPerRank - 1) / kMaxRingFlowsPerRank));
}

class RingRun : public CollectiveRun {
 public:
  RingRun(CollectiveType type, std::vector<int> ranks, std::vector<double> block_bytes, int chunks,
          FlowIssuer& issuer, bool alike = false)
      : type_(type),
        ranks_(std::move(ranks)),
        block_(std::move(block_bytes)),
        n_(static_cast<int>(ranks_.size())),
        c_(chunks),
        steps_(type == CollectiveType::kAllReduce ? 2 * (n_ - 1) : n_ - 1),
        group_(steps_per_flow(steps_)),
        flows_(static_cast<int>(ring_flows_per_rank(steps_))),
        sent_(static_cast<size_t>(n_) * c_, 0),
        busy_(static_cast<size_t>(n_) * c_, 0),
        issuer_(issuer),
        alike_(alike) {
    if (std::all_of(block_.begin(), block_.end(), [&](double b) { return b == block_[0]; }))
      sum_of_.assign(static_cast<size_t>(group_) + 1, -1.0);
  }

  void start() override {
    for (int i = 0; i < n_; ++i) try_start(i, 0);
  }

  void on_flow_done(int64_t tag) override {
    int i = static_cast<int>(tag / c_);
    int j = static_cast<int>(tag % c_);
    busy_[idx(i, j)] = 0;
    ++sent_[idx(i, j)];
    ++completed_;
    try_start(i, j);
    try_start((i + 1) % n_, j);
    if (j + 1 < c_) try_start(i, j + 1);
  }

  bool done() const override { return completed_ == flows_total(); }
  int64_t flows_total() const override { return static_cast<int64_t>(n_) * c_ * flows_; }

 private:
  size_t idx(int i, int j) const { return static_cast<size_t>(i) * c_ + j; }

  int block_of(int i, int k) const {
    int b;
    if (type_ == CollectiveType::kReduceScatter)
      b = i - k - 1;
    else if (type_ == CollectiveType::kAllGather || k < n_ - 1)
      b = i - k;
    else
      b = i + 1 - (k - (n_ - 1));  // all-gather half of an all-reduce
    return ((b % n_) + n_) % n_;
  }

  // Flow f of rank i carries steps [f x group, (f + 1) x group).
  void try_start(int i, int j) {
    if (busy_[idx(i, j)]) return;
    int f = sent_[idx(i, j)];
    if (f >= flows_) return;
    int prev = (i + n_ - 1) % n_;
    if (f > 0 && sent_[idx(prev, j)] < f) return;
    if (j > 0 && sent_[idx(i, j - 1)] <= f) return;
    busy_[idx(i, j)] = 1;
    const int first = f * group_, last = std::min(steps_, first + group_);
    double bytes = 0;
    if (!sum_of_.empty() && sum_of_[last - first] >= 0) {
      bytes = sum_of_[last - first];
    } else {
      for (int k = first; k < last; ++k) bytes += block_[block_of(i, k)];
      if (!sum_of_.empty()) sum_of_[last - first] = bytes;
    }
    issuer_.issue(ranks_[i], ranks_[(i + 1) % n_], bytes / c_, static_cast<int64_t>(i) * c_ + j,
                  last - first, alike_);
  }

  CollectiveType type_;
  std::vector<int> ranks_;
  std::vector<double> block_;
  int n_, c_, steps_;
  int group_;               // ring steps per flow
  int flows_;               // flows per rank and chunk
  std::vector<int> sent_;   // per (rank, chunk): flows sent
  std::vector<char> busy_;  // per (rank, chunk): a flow is in flight
  // Blocks all alike (the usual case): the bytes of a flow of k steps, summed once in the same
  // order as the loop would (-1: not yet); empty otherwise. A flow of a long ring sums 64 steps.
  std::vector<double> sum_of_;
  int64_t completed_ = 0;
  FlowIssuer& issuer_;
  bool alike_;  // its flows stand for alike rings' (make_collective_run)
};

// Pipelined chain in ring order from the root (Broadcast) or towards it (Reduce): chunk j crosses
// hop h once it crossed hop h-1 and chunk j-1 crossed hop h.
class ChainRun : public CollectiveRun {
 public:
  ChainRun(std::vector<int> order, double bytes, int chunks, FlowIssuer& issuer)
      : order_(std::move(order)),
        hops_(static_cast<int>(order_.size()) - 1),
        c_(chunks),
        bytes_(bytes),
        crossed_(chunks, 0),
        busy_(chunks, 0),
        issuer_(issuer) {}

  void start() override { try_start(0); }

  void on_flow_done(int64_t tag) override {
    int j = static_cast<int>(tag);
    busy_[j] = 0;
    ++crossed_[j];
    ++completed_;
    try_start(j);
    if (j + 1 < c_) try_start(j + 1);
  }

  bool done() const override { return completed_ == flows_total(); }
  int64_t flows_total() const override { return static_cast<int64_t>(hops_) * c_; }

 private:
  void try_start(int j) {
    if (busy_[j]) return;
    int h = crossed_[j];
    if (h >= hops_) return;
    if (j > 0 && crossed_[j - 1] <= h) return;
    busy_[j] = 1;
    issuer_.issue(order_[h], order_[h + 1], bytes_ / c_, j);
  }

  std::vector<int> order_;
  int hops_, c_;
  double bytes_;
  std::vector<int> crossed_;
  std::vector<char> busy_;
  int64_t completed_ = 0;
  FlowIssuer& issuer_;
};

// Trees given by parent positions (collective_plan.h: chains inside servers, binary across them),
// pipelined in chunks. AllReduce: chunks are reduced up to the root, then broadcast down;
// Reduce: up only; Broadcast: down only. Each tree edge carries one chunk at a time per
// direction. Tags: position << 1, plus 1 for the downward edge into the position.
class TreeRun : public CollectiveRun {
 public:
  TreeRun(CollectiveType type, std::vector<int> by_position, std::vector<int> parent, double bytes,
          int chunks, FlowIssuer& issuer, bool alike = false)
      : alike_(alike),
        up_(type != CollectiveType::kBroadcast),
        down_(type != CollectiveType::kReduce),
        pos_(std::move(by_position)),
        parent_(std::move(parent)),
        n_(static_cast<int>(pos_.size())),
        c_(chunks),
        chunk_bytes_(bytes / chunks),
        children_(n_),
        got_up_(static_cast<size_t>(n_) * c_, 0),
        sent_up_(n_, 0),
        up_busy_(n_, 0),
        have_down_(n_, 0),
        sent_down_(n_, 0),
        down_busy_(n_, 0),
        issuer_(issuer) {
    for (int p = 0; p < n_; ++p)
      if (parent_[p] >= 0) children_[parent_[p]].push_back(p);
    // Without a reduce phase the root holds every chunk from the start.
    if (!up_) have_down_[0] = c_;
  }

  void start() override {
    if (up_) {
      for (int p = n_ - 1; p > 0; --p) try_up(p);
    } else {
      try_down_children(0);
    }
  }

  void on_flow_done(int64_t tag) override {
    ++completed_;
    int p = static_cast<int>(tag >> 1);
    int parent = parent_[p];
    if ((tag & 1) == 0) {  // p's chunk reached its parent
      int j = sent_up_[p]++;
      up_busy_[p] = 0;
      ++got_up_[static_cast<size_t>(parent) * c_ + j];
      try_up(p);
      if (parent == 0) {
        if (down_ && reduced_at_root(j)) {
          have_down_[0] = std::max(have_down_[0], j + 1);
          try_down_children(0);
        }
      } else {
        try_up(parent);
      }
    } else {  // a chunk reached p from its parent
      sent_down_[p]++;
      down_busy_[p] = 0;
      have_down_[p]++;
      try_down(p);  // the edge parent -> p can carry the next chunk
      try_down_children(p);
    }
  }

  bool done() const override { return completed_ == flows_total(); }
  int64_t flows_total() const override {
    return static_cast<int64_t>(n_ - 1) * c_ * ((up_ ? 1 : 0) + (down_ ? 1 : 0));
  }

 private:
  int children(int p) const { return static_cast<int>(children_[p].size()); }
  bool reduced_at_root(int j) const {
    return got_up_[j] == children(0) && (j == 0 || have_down_[0] >= j);
  }

  // Sends p's next chunk up when all of p's children delivered it.
  void try_up(int p) {
    if (p == 0 || up_busy_[p]) return;
    int j = sent_up_[p];
    if (j >= c_ || got_up_[static_cast<size_t>(p) * c_ + j] < children(p)) return;
    up_busy_[p] = 1;
    issuer_.issue(pos_[p], pos_[parent_[p]], chunk_bytes_, static_cast<int64_t>(p) << 1, 1, alike_);
  }

  // Sends the next chunk over the edge parent(p) -> p when the parent holds it.
  void try_down(int p) {
    if (down_busy_[p]) return;
    int j = sent_down_[p];
    int parent = parent_[p];
    if (j >= c_ || have_down_[parent] <= j) return;
    down_busy_[p] = 1;
    issuer_.issue(pos_[parent], pos_[p], chunk_bytes_, (static_cast<int64_t>(p) << 1) | 1, 1,
                  alike_);
  }

  void try_down_children(int p) {
    for (int q : children_[p]) try_down(q);
  }

  bool alike_;  // its flows stand for alike channels' (make_collective_run)
  bool up_, down_;
  std::vector<int> pos_, parent_;
  int n_, c_;
  double chunk_bytes_;
  std::vector<std::vector<int>> children_;
  std::vector<int> got_up_;  // per (position, chunk): children that delivered the chunk
  std::vector<int> sent_up_;
  std::vector<char> up_busy_;
  std::vector<int> have_down_;  // chunks of the result a position holds
  std::vector<int> sent_down_;  // chunks sent over the edge into a position
  std::vector<char> down_busy_;
  int64_t completed_ = 0;
  FlowIssuer& issuer_;
};

// A set of flows that all start at once; done when every one arrived. AllToAll, SendRecv, and
// the fan-in / fan-out steps of in-network reduction.
struct FlowSpec {
  int src = 0;
  int dst = 0;
  double bytes = 0.0;
};

class FlowSetRun : public CollectiveRun {
 public:
  FlowSetRun(std::vector<FlowSpec> flows, FlowIssuer& issuer)
      : flows_(std::move(flows)), issuer_(issuer) {}

  void start() override {
    for (size_t f = 0; f < flows_.size(); ++f)
      issuer_.issue(flows_[f].src, flows_[f].dst, flows_[f].bytes, static_cast<int64_t>(f));
  }
  void on_flow_done(int64_t) override { ++completed_; }
  bool done() const override { return completed_ == flows_total(); }
  int64_t flows_total() const override { return static_cast<int64_t>(flows_.size()); }

 private:
  std::vector<FlowSpec> flows_;
  int64_t completed_ = 0;
  FlowIssuer& issuer_;
};

// Phases pipelined over chunks: chunk j enters phase p once it left phase p-1 and chunk j-1 left
// phase p (a phase works on one chunk at a time). With one chunk the phases run one after the
// other; with one phase and one chunk the sub-runs of that phase run side by side (channels).
// Tags carry the sub-run's phase and index.
class PipelineRun : public CollectiveRun, private FlowIssuer {
 public:
  using Factory =
      std::function<std::vector<std::unique_ptr<CollectiveRun>>(double bytes, FlowIssuer&)>;

  PipelineRun(std::vector<Factory> phases, double bytes, int chunks, FlowIssuer& issuer)
      : phases_(std::move(phases)),
        chunk_bytes_(bytes / chunks),
        chunks_(chunks),
        issuer_(issuer),
        current_(phases_.size()),
        unfinished_(phases_.size(), 0),
        running_(phases_.size(), -1),
        next_chunk_(phases_.size(), 0),
        left_(chunks, 0) {}

  void start() override {
    // Totals are known up front so done() and flows_total() do not depend on progress.
    for (auto& f : phases_)
      for (auto& r : f(chunk_bytes_, *this)) total_ += r->flows_total() * chunks_;
    try_start(0);
  }

  void on_flow_done(int64_t tag) override {
    ++completed_;
    const int64_t slot = tag >> kShift;
    const size_t p = static_cast<size_t>(slot >> kRunBits);
    const size_t r = static_cast<size_t>(slot & ((1 << kRunBits) - 1));
    issuing_ = slot;  // follow-up flows belong to the same run
    auto& run = current_[p][r];
    run->on_flow_done(tag & kMask);
    if (run->done() && --unfinished_[p] == 0) phase_done(p);
  }

  bool done() const override { return completed_ == total_; }
  int64_t flows_total() const override { return total_; }

 private:
  static constexpr int kShift = 40;
  static constexpr int kRunBits = 16;
  static constexpr int64_t kMask = (int64_t{1} << kShift) - 1;

  void issue(int src, int dst, double bytes, int64_t tag, int steps, bool alike) override {
    issuer_.issue(src, dst, bytes, (issuing_ << kShift) | tag, steps, alike);
  }

  void try_start(size_t p) {
    if (p >= phases_.size() || running_[p] >= 0) return;
    const int j = next_chunk_[p];
    if (j >= chunks_ || (p > 0 && left_[j] < static_cast<int>(p))) return;
    running_[p] = j;
    ++next_chunk_[p];
    current_[p] = phases_[p](chunk_bytes_, *this);
    unfinished_[p] = current_[p].size();
    for (size_t r = 0; r < current_[p].size(); ++r) {
      issuing_ = static_cast<int64_t>((p << kRunBits) | r);
      current_[p][r]->start();
      if (current_[p][r]->done()) --unfinished_[p];
    }
    if (unfinished_[p] == 0) phase_done(p);
  }

  void phase_done(size_t p) {
    const int j = running_[p];
    running_[p] = -1;
    left_[j] = static_cast<int>(p) + 1;
    try_start(p + 1);
    try_start(p);
  }

  std::vector<Factory> phases_;
  double chunk_bytes_;
  int chunks_;
  FlowIssuer& issuer_;
  std::vector<std::vector<std::unique_ptr<CollectiveRun>>> current_;
  std::vector<size_t> unfinished_;
  std::vector<int> running_;     // per phase: the chunk in it, -1 for none
  std::vector<int> next_chunk_;  // per phase: the next chunk it takes
  std::vector<int> left_;        // per chunk: phases it finished
  int64_t issuing_ = 0;
  int64_t completed_ = 0;
  int64_t total_ = 0;
};

std::vector<double> equal_blocks(int n, double bytes) {
  return std::vector<double>(static_cast<size_t>(n), n > 0 ? bytes / n : 0.0);
}

using Runs = std::vector<std::unique_ptr<CollectiveRun>>;

// One ring run per group (each group a ring of devices), `type` over `bytes` each.
PipelineRun::Factory rings_in_groups(std::vector<std::vector<int>> groups, CollectiveType type,
                                     int chunks) {
  return [groups = std::move(groups), type, chunks](double bytes, FlowIssuer& out) {
    Runs runs;
    for (const auto& ring : groups)
      runs.push_back(std::make_unique<RingRun>(
          type, ring, equal_blocks(static_cast<int>(ring.size()), bytes), chunks, out));
    return runs;
  };
}

// The all-reduce between servers of each local rank's 1/g of the chunk: a ring per local rank
// (local_rank_rings), or with `merge` one ring of the servers' first ranks carrying all of it
// (every such ring limited by one and the same link), or with `alike` the first ring alone, its
// flows standing for all the rings'.
PipelineRun::Factory rings_across_servers(const std::vector<std::vector<int>>& groups, int chunks,
                                          bool merge, bool alike) {
  return [rings = local_rank_rings(groups), chunks, merge, alike](double bytes, FlowIssuer& out) {
    const int g = static_cast<int>(rings.size());
    const int nodes = static_cast<int>(rings[0].size());
    Runs runs;
    if (merge || alike) {
      runs.push_back(std::make_unique<RingRun>(CollectiveType::kAllReduce, rings[0],
                                               equal_blocks(nodes, merge ? bytes : bytes / g),
                                               chunks, out, alike && !merge));
      return runs;
    }
    for (const auto& ring : rings)
      runs.push_back(std::make_unique<RingRun>(CollectiveType::kAllReduce, ring,
                                               equal_blocks(nodes, bytes / g), chunks, out));
    return runs;
  };
}

std::unique_ptr<CollectiveRun> hierarchical_allreduce(const Collective& c,
                                                      const CollectivePlan& plan,
                                                      FlowIssuer& issuer, bool alike) {
  const auto& groups = plan.groups;
  const int chunks = plan.chunks;
  return std::make_unique<PipelineRun>(
      std::vector<PipelineRun::Factory>{
          rings_in_groups(groups, CollectiveType::kReduceScatter, chunks),
          rings_across_servers(groups, chunks, plan.merge_inter, alike),
          rings_in_groups(groups, CollectiveType::kAllGather, chunks)},
      c.bytes, plan.pipeline, issuer);
}

// Flows between every device of `groups` and its endpoint (its group's, or the only one), of
// `share` x the chunk's bytes each; towards the endpoint when `in`.
PipelineRun::Factory fan(std::vector<std::vector<int>> groups, std::vector<int> endpoints,
                         double share, bool in) {
  return [groups = std::move(groups), endpoints = std::move(endpoints), share, in](
             double bytes, FlowIssuer& out) {
    std::vector<FlowSpec> flows;
    for (size_t q = 0; q < groups.size(); ++q) {
      const int e = endpoints[std::min(q, endpoints.size() - 1)];
      for (int d : groups[q])
        flows.push_back(in ? FlowSpec{d, e, share * bytes} : FlowSpec{e, d, share * bytes});
    }
    Runs runs;
    runs.push_back(std::make_unique<FlowSetRun>(std::move(flows), out));
    return runs;
  };
}

// NVLS: multimem loads make the switch read every rank's slices and return each rank its
// reduced slice; multimem stores make it write a rank's slice to every rank. Per rank and
// direction, AllReduce moves (n+1)/n of the buffer, ReduceScatter the buffer up and 1/n down,
// AllGather 1/n up and the buffer down.
std::unique_ptr<CollectiveRun> nvls_run(const Collective& c, const CollectivePlan& plan,
                                        FlowIssuer& issuer) {
  const double n = static_cast<double>(c.ranks.size());
  double up = 1.0, down = 1.0;
  if (c.type == CollectiveType::kAllReduce) up = down = (n + 1) / n;
  if (c.type == CollectiveType::kReduceScatter) down = 1.0 / n;
  if (c.type == CollectiveType::kAllGather) up = 1.0 / n;
  return std::make_unique<PipelineRun>(
      std::vector<PipelineRun::Factory>{fan(plan.groups, plan.endpoints, up, true),
                                        fan(plan.groups, plan.endpoints, down, false)},
      c.bytes, plan.pipeline, issuer);
}

// CollNet: reduce-scatter inside servers, each rank's shard reduced in the network switch and
// returned, all-gather inside.
std::unique_ptr<CollectiveRun> collnet_run(const Collective& c, const CollectivePlan& plan,
                                           FlowIssuer& issuer) {
  const double share = 1.0 / static_cast<double>(plan.groups[0].size());
  return std::make_unique<PipelineRun>(
      std::vector<PipelineRun::Factory>{
          rings_in_groups(plan.groups, CollectiveType::kReduceScatter, 1),
          fan(plan.groups, plan.endpoints, share, true),
          fan(plan.groups, plan.endpoints, share, false),
          rings_in_groups(plan.groups, CollectiveType::kAllGather, 1)},
      c.bytes, plan.pipeline, issuer);
}

// NVLS_TREE: NVLS reduce-scatter inside each server (every rank's buffer up to its switch, its
// reduced shard back), a ring all-reduce of each shard between the servers' ranks of the same
// local index over their NICs, and NVLS all-gather inside (the shard up, the buffer back).
std::unique_ptr<CollectiveRun> nvls_tree_run(const Collective& c, const CollectivePlan& plan,
                                             FlowIssuer& issuer, bool alike) {
  const auto& groups = plan.groups;
  const double share = 1.0 / static_cast<double>(groups[0].size());
  const PipelineRun::Factory inter = rings_across_servers(groups, 1, false, alike);
  return std::make_unique<PipelineRun>(
      std::vector<PipelineRun::Factory>{
          fan(groups, plan.endpoints, 1.0, true), fan(groups, plan.endpoints, share, false), inter,
          fan(groups, plan.endpoints, share, true), fan(groups, plan.endpoints, 1.0, false)},
      c.bytes, plan.pipeline, issuer);
}

// PAT: one phase per step, each a flow from every rank to the rank `distance` before it with
// that step's blocks; the steps run one after the other.
std::unique_ptr<CollectiveRun> pat_run(const Collective& c, const CollectivePlan& plan,
                                       FlowIssuer& issuer) {
  const std::vector<int>& ring = plan.channels.at(0);
  const int n = static_cast<int>(ring.size());
  std::vector<PipelineRun::Factory> phases;
  for (const PatStep& step : pat_steps(n, c.type))
    phases.push_back([ring, n, step](double bytes, FlowIssuer& out) {
      std::vector<FlowSpec> flows;
      for (int i = 0; i < n; ++i)
        flows.push_back({ring[i], ring[(i - step.distance + n) % n], step.blocks * bytes / n});
      Runs runs;
      runs.push_back(std::make_unique<FlowSetRun>(std::move(flows), out));
      return runs;
    });
  return std::make_unique<PipelineRun>(std::move(phases), c.bytes, 1, issuer);
}

// All-to-all in DeepEP's two legs, over N servers of g GPUs (n = N g), c.bytes a rank sends to
// the n - 1 others, a block each: what a GPU sends to another server goes over the network to
// the GPU of its own local index there (one flow of g blocks per remote server), which forwards
// it over NVLink to its targets together with its own server's blocks (N blocks to each local
// peer); chunks pipeline the legs.
std::unique_ptr<CollectiveRun> two_leg_alltoall(const Collective& c, const CollectivePlan& plan,
                                                FlowIssuer& issuer) {
  const auto& groups = plan.groups;
  const double nodes = static_cast<double>(groups.size());
  const double g = static_cast<double>(groups[0].size());
  const double others = nodes * g - 1;
  PipelineRun::Factory network = [groups, g, others](double bytes, FlowIssuer& out) {
    std::vector<FlowSpec> flows;
    for (size_t a = 0; a < groups.size(); ++a)
      for (size_t b = 0; b < groups.size(); ++b)
        if (a != b)
          for (size_t l = 0; l < groups[a].size(); ++l)
            flows.push_back({groups[a][l], groups[b][l], g * bytes / others});
    Runs runs;
    runs.push_back(std::make_unique<FlowSetRun>(std::move(flows), out));
    return runs;
  };
  PipelineRun::Factory nvlink = [groups, nodes, others](double bytes, FlowIssuer& out) {
    std::vector<FlowSpec> flows;
    for (const auto& node : groups)
      for (int a : node)
        for (int b : node)
          if (a != b) flows.push_back({a, b, nodes * bytes / others});
    Runs runs;
    runs.push_back(std::make_unique<FlowSetRun>(std::move(flows), out));
    return runs;
  };
  return std::make_unique<PipelineRun>(std::vector<PipelineRun::Factory>{network, nvlink}, c.bytes,
                                       plan.pipeline, issuer);
}

// Runs side by side as one collective (channels, the two trees). Tags carry the run's index.
class ParallelRun : public CollectiveRun, private FlowIssuer {
 public:
  explicit ParallelRun(FlowIssuer& issuer) : issuer_(issuer) {}
  FlowIssuer& inner() { return *this; }
  void add(std::unique_ptr<CollectiveRun> run) {
    total_ += run->flows_total();
    runs_.push_back(std::move(run));
  }

  void start() override {
    for (size_t r = 0; r < runs_.size(); ++r) {
      issuing_ = static_cast<int64_t>(r);
      runs_[r]->start();
    }
  }
  void on_flow_done(int64_t tag) override {
    ++completed_;
    issuing_ = tag >> kShift;
    runs_[static_cast<size_t>(issuing_)]->on_flow_done(tag & kMask);
  }
  bool done() const override { return completed_ == total_; }
  int64_t flows_total() const override { return total_; }

 private:
  static constexpr int kShift = 40;
  static constexpr int64_t kMask = (int64_t{1} << kShift) - 1;
  void issue(int src, int dst, double bytes, int64_t tag, int steps, bool alike) override {
    issuer_.issue(src, dst, bytes, (issuing_ << kShift) | tag, steps, alike);
  }

  FlowIssuer& issuer_;
  Runs runs_;
  int64_t issuing_ = 0;
  int64_t completed_ = 0;
  int64_t total_ = 0;
};

}  // namespace

int64_t ring_flows_per_rank(int64_t steps) {
  if (steps <= 0) return 0;
  const int64_t group = steps_per_flow(steps);
  return (steps + group - 1) / group;
}

CollectiveAlgo resolve_collective_algo(const Collective& c, const std::vector<int>& node_of) {
  const bool allreduce = c.type == CollectiveType::kAllReduce;
  const bool rooted = c.type == CollectiveType::kBroadcast || c.type == CollectiveType::kReduce;
  if (c.type == CollectiveType::kAllToAll || c.type == CollectiveType::kSendRecv)
    return CollectiveAlgo::kDirect;
  auto hierarchical_ok = [&] {
    auto groups = uniform_node_groups(c.ranks, node_of);
    return allreduce && groups.size() > 1 && groups[0].size() > 1;
  };
  switch (c.algo) {
    case CollectiveAlgo::kTree:
      return allreduce || rooted ? CollectiveAlgo::kTree : CollectiveAlgo::kRing;
    case CollectiveAlgo::kHierarchical:
      return hierarchical_ok() ? CollectiveAlgo::kHierarchical : CollectiveAlgo::kRing;
    case CollectiveAlgo::kAuto:
      if (hierarchical_ok()) return CollectiveAlgo::kHierarchical;
      if (allreduce && c.bytes < 64 * 1024) return CollectiveAlgo::kTree;
      return CollectiveAlgo::kRing;
    default:
      return CollectiveAlgo::kRing;
  }
}

namespace {

// Each ring's steps, place i the step from its i-th device to the next.
std::vector<std::vector<std::pair<int, int>>> ring_steps(
    const std::vector<std::vector<int>>& rings) {
  std::vector<std::vector<std::pair<int, int>>> flows;
  for (const auto& ring : rings) {
    auto& f = flows.emplace_back();
    for (size_t i = 0; i < ring.size(); ++i) f.emplace_back(ring[i], ring[(i + 1) % ring.size()]);
  }
  return flows;
}

// The trees each copy of a tree all-reduce runs: copy t the trees on chain t, the mirror's after
// the tree's. Empty unless every chain carries as many trees.
std::vector<std::vector<size_t>> tree_copies(const CollectivePlan& plan) {
  const size_t k = static_cast<size_t>(std::max(plan.tree_chains, 0));
  const size_t trees = plan.tree.size();
  if (k < 2 || (trees != k && trees != 2 * k)) return {};
  std::vector<std::vector<size_t>> copies(k);
  for (size_t t = 0; t < trees; ++t) copies[t % k].push_back(t);
  return copies;
}

// A tree all-reduce's copies' edges both ways, each pair once (a tree's edge up may be its
// mirror's edge down), as places; empty where the copies do not map pair for pair.
std::vector<std::vector<std::pair<int, int>>> tree_edges(const CollectivePlan& plan) {
  const auto copies = tree_copies(plan);
  if (copies.empty()) return {};
  std::vector<std::vector<std::pair<int, int>>> flows(copies.size());
  for (size_t t = 0; t < copies.size(); ++t)
    for (size_t tree : copies[t])
      for (size_t p = 1; p < plan.tree[tree].size(); ++p) {
        const int child = plan.tree[tree][p], parent = plan.tree[tree][plan.parent[tree][p]];
        flows[t].emplace_back(child, parent);
        flows[t].emplace_back(parent, child);
      }
  // Places by the first copy's pair: a pair seen before must map to the same pair in every copy.
  std::map<std::pair<int, int>, size_t> seen;
  std::vector<size_t> keep;
  for (size_t i = 0; i < flows[0].size(); ++i) {
    auto [it, fresh] = seen.emplace(flows[0][i], i);
    if (fresh) {
      keep.push_back(i);
      continue;
    }
    for (const auto& copy : flows)
      if (copy[i] != copy[it->second]) return {};
  }
  for (auto& copy : flows) {
    std::vector<std::pair<int, int>> kept;
    for (size_t i : keep) kept.push_back(copy[i]);
    copy = std::move(kept);
  }
  return flows;
}

}  // namespace

AlikeRings alike_rings(const Collective& c, const CollectivePlan& plan) {
  AlikeRings a;
  const auto& groups = plan.groups;
  const bool across = groups.size() > 1 && groups[0].size() > 1;
  if (plan.algo == CollectiveAlgo::kHierarchical && c.type != CollectiveType::kAllToAll &&
      !plan.merge_inter && across) {
    a.flows = ring_steps(local_rank_rings(groups));
    for (const auto& g : groups)
      for (size_t k = 0; k < g.size(); ++k) a.others.emplace_back(g[k], g[(k + 1) % g.size()]);
  } else if (plan.algo == CollectiveAlgo::kNvlsTree && across) {
    a.flows = ring_steps(local_rank_rings(groups));
    for (size_t q = 0; q < groups.size(); ++q)
      for (int d : groups[q]) {
        a.others.emplace_back(d, plan.endpoints[q]);
        a.others.emplace_back(plan.endpoints[q], d);
      }
  } else if (plan.algo == CollectiveAlgo::kRing && plan.channels.size() > 1 && c.counts.empty() &&
             c.type != CollectiveType::kBroadcast && c.type != CollectiveType::kReduce &&
             std::all_of(plan.channels.begin(), plan.channels.end(),
                         [&](const auto& r) { return r.size() == plan.channels[0].size(); })) {
    a.flows = ring_steps(plan.channels);
  } else if (plan.algo == CollectiveAlgo::kTree && c.type == CollectiveType::kAllReduce) {
    a.flows = tree_edges(plan);
  }
  return a;
}

std::unique_ptr<CollectiveRun> make_collective_run(const Collective& c, const CollectivePlan& plan,
                                                   FlowIssuer& issuer, bool alike) {
  const int n = static_cast<int>(c.ranks.size());
  switch (plan.algo) {
    case CollectiveAlgo::kDirect: {
      std::vector<FlowSpec> flows;
      if (c.type == CollectiveType::kSendRecv) {
        for (int i = 0; n > 1 && i < n; ++i)
          flows.push_back({c.ranks[i], c.ranks[(i + 1) % n], c.bytes});
      } else {
        for (int i = 0; i < n; ++i) {
          double per_peer = n > 1 ? (c.counts.empty() ? c.bytes : c.counts[i]) / (n - 1) : 0.0;
          for (int k = 1; k < n; ++k) flows.push_back({c.ranks[i], c.ranks[(i + k) % n], per_peer});
        }
      }
      return std::make_unique<FlowSetRun>(std::move(flows), issuer);
    }
    case CollectiveAlgo::kTree: {
      const double share = c.bytes / static_cast<double>(plan.tree.size());
      // Alike channels as the first chain's trees (alike_rings named them).
      std::vector<size_t> trees;
      if (alike)
        trees = tree_copies(plan).at(0);
      else
        for (size_t t = 0; t < plan.tree.size(); ++t) trees.push_back(t);
      if (trees.size() == 1)
        return std::make_unique<TreeRun>(c.type, plan.tree[trees[0]], plan.parent[trees[0]], share,
                                         plan.chunks, issuer, alike);
      auto all = std::make_unique<ParallelRun>(issuer);
      for (size_t t : trees)
        all->add(std::make_unique<TreeRun>(c.type, plan.tree[t], plan.parent[t], share, plan.chunks,
                                           all->inner(), alike));
      return all;
    }
    case CollectiveAlgo::kHierarchical:
      if (c.type == CollectiveType::kAllToAll) return two_leg_alltoall(c, plan, issuer);
      return hierarchical_allreduce(c, plan, issuer, alike);
    case CollectiveAlgo::kNvls:
      return nvls_run(c, plan, issuer);
    case CollectiveAlgo::kCollNet:
      return collnet_run(c, plan, issuer);
    case CollectiveAlgo::kNvlsTree:
      return nvls_tree_run(c, plan, issuer, alike);
    case CollectiveAlgo::kPat:
      return pat_run(c, plan, issuer);
    default:
      break;
  }
  // Ring: one run per channel, each with an equal share of the bytes; alike channels as the first.
  const double k = static_cast<double>(plan.channels.size());
  if (alike && plan.algo == CollectiveAlgo::kRing)
    return std::make_unique<RingRun>(c.type, plan.channels[0], equal_blocks(n, c.bytes / k),
                                     plan.chunks, issuer, true);
  auto channels = std::make_unique<ParallelRun>(issuer);
  FlowIssuer& out = plan.channels.size() == 1 ? issuer : channels->inner();
  Runs runs;
  for (const auto& ring : plan.channels) {
    if (c.type == CollectiveType::kBroadcast || c.type == CollectiveType::kReduce) {
      std::vector<int> order = ring;  // starts at the root
      // Reduce flows towards the root: root+1 -> root+2 -> ... -> root.
      if (c.type == CollectiveType::kReduce)
        std::rotate(order.begin(), order.begin() + 1, order.end());
      runs.push_back(std::make_unique<ChainRun>(order, c.bytes / k, plan.chunks, out));
      continue;
    }
    std::vector<double> blocks;
    if (c.counts.empty()) {
      blocks = equal_blocks(n, c.bytes / k);
    } else {
      // Blocks follow their ranks into the channel's ring order.
      for (int d : ring) {
        size_t p = std::find(c.ranks.begin(), c.ranks.end(), d) - c.ranks.begin();
        blocks.push_back(c.counts[p] / k);
      }
    }
    runs.push_back(std::make_unique<RingRun>(c.type, ring, blocks, plan.chunks, out));
  }
  if (runs.size() == 1) return std::move(runs[0]);
  for (auto& r : runs) channels->add(std::move(r));
  return channels;
}

}  // namespace orrery
