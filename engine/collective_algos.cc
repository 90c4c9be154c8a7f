#include "engine/collective_algos.h"

#include <algorithm>
#include <functional>
#include <map>
#include <stdexcept>

namespace orrery {
namespace {

// Ring over `ranks` (device indices). AllReduce: 2(n-1) steps, reduce-scatter then all-gather;
// AllGather: n-1 steps, rank i forwards block (i - k) mod n at step k; ReduceScatter: n-1 steps,
// block (i - k - 1) mod n. Each block moves as `chunks` consecutive chunks: chunk j of step k
// leaves rank i once rank i sent chunk j of step k-1 (it forwards what it received... from its own
// previous send), rank i-1 sent chunk j of step k-1 (the data arrived), and rank i sent chunk
// j-1 of step k (one chunk at a time per link).
class RingRun : public CollectiveRun {
 public:
  RingRun(CollectiveType type, std::vector<int> ranks, std::vector<double> block_bytes, int chunks,
          FlowIssuer& issuer)
      : type_(type),
        ranks_(std::move(ranks)),
        block_(std::move(block_bytes)),
        n_(static_cast<int>(ranks_.size())),
        c_(chunks),
        steps_(type == CollectiveType::kAllReduce ? 2 * (n_ - 1) : n_ - 1),
        sent_(static_cast<size_t>(n_) * c_, 0),
        busy_(static_cast<size_t>(n_) * c_, 0),
        issuer_(issuer) {}

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
  int64_t flows_total() const override { return static_cast<int64_t>(n_) * c_ * steps_; }

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

  void try_start(int i, int j) {
    if (busy_[idx(i, j)]) return;
    int k = sent_[idx(i, j)];
    if (k >= steps_) return;
    int prev = (i + n_ - 1) % n_;
    if (k > 0 && sent_[idx(prev, j)] < k) return;
    if (j > 0 && sent_[idx(i, j - 1)] <= k) return;
    busy_[idx(i, j)] = 1;
    issuer_.issue(ranks_[i], ranks_[(i + 1) % n_], block_[block_of(i, k)] / c_,
                  static_cast<int64_t>(i) * c_ + j);
  }

  CollectiveType type_;
  std::vector<int> ranks_;
  std::vector<double> block_;
  int n_, c_, steps_;
  std::vector<int> sent_;   // per (rank, chunk): steps sent
  std::vector<char> busy_;  // per (rank, chunk): a flow is in flight
  int64_t completed_ = 0;
  FlowIssuer& issuer_;
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

// Binary tree (position p's children are 2p+1 and 2p+2, the root at position 0), pipelined in
// chunks. AllReduce: chunks are reduced up to the root, then broadcast down; Reduce: up only;
// Broadcast: down only. Each tree edge carries one chunk at a time per direction.
class TreeRun : public CollectiveRun {
 public:
  TreeRun(CollectiveType type, std::vector<int> by_position, double bytes, int chunks,
          FlowIssuer& issuer)
      : up_(type != CollectiveType::kBroadcast),
        down_(type != CollectiveType::kReduce),
        pos_(std::move(by_position)),
        n_(static_cast<int>(pos_.size())),
        c_(chunks),
        chunk_bytes_(bytes / chunks),
        got_up_(static_cast<size_t>(n_) * c_, 0),
        sent_up_(n_, 0),
        up_busy_(n_, 0),
        have_down_(n_, 0),
        sent_down_(n_, 0),
        down_busy_(n_, 0),
        issuer_(issuer) {
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
    int parent = (p - 1) / 2;
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
  int children(int p) const { return (2 * p + 1 < n_) + (2 * p + 2 < n_); }
  bool reduced_at_root(int j) const {
    return got_up_[j] == children(0) && (j == 0 || have_down_[0] >= j);
  }

  // Sends p's next chunk up when all of p's children delivered it.
  void try_up(int p) {
    if (p == 0 || up_busy_[p]) return;
    int j = sent_up_[p];
    if (j >= c_ || got_up_[static_cast<size_t>(p) * c_ + j] < children(p)) return;
    up_busy_[p] = 1;
    issuer_.issue(pos_[p], pos_[(p - 1) / 2], chunk_bytes_, static_cast<int64_t>(p) << 1);
  }

  // Sends the next chunk over the edge parent(p) -> p when the parent holds it.
  void try_down(int p) {
    if (down_busy_[p]) return;
    int j = sent_down_[p];
    int parent = (p - 1) / 2;
    if (j >= c_ || have_down_[parent] <= j) return;
    down_busy_[p] = 1;
    issuer_.issue(pos_[parent], pos_[p], chunk_bytes_, (static_cast<int64_t>(p) << 1) | 1);
  }

  void try_down_children(int p) {
    for (int q : {2 * p + 1, 2 * p + 2})
      if (q < n_) try_down(q);
  }

  bool up_, down_;
  std::vector<int> pos_;
  int n_, c_;
  double chunk_bytes_;
  std::vector<int> got_up_;  // per (position, chunk): children that delivered the chunk
  std::vector<int> sent_up_;
  std::vector<char> up_busy_;
  std::vector<int> have_down_;  // chunks of the result a position holds
  std::vector<int> sent_down_;  // chunks sent over the edge into a position
  std::vector<char> down_busy_;
  int64_t completed_ = 0;
  FlowIssuer& issuer_;
};

// Every rank sends its block to every other rank at once.
class DirectRun : public CollectiveRun {
 public:
  DirectRun(std::vector<int> ranks, std::vector<double> per_peer, FlowIssuer& issuer)
      : ranks_(std::move(ranks)), per_peer_(std::move(per_peer)), issuer_(issuer) {}

  void start() override {
    int n = static_cast<int>(ranks_.size());
    for (int i = 0; i < n; ++i)
      for (int k = 1; k < n; ++k) issuer_.issue(ranks_[i], ranks_[(i + k) % n], per_peer_[i], 0);
  }
  void on_flow_done(int64_t) override { ++completed_; }
  bool done() const override { return completed_ == flows_total(); }
  int64_t flows_total() const override {
    int64_t n = static_cast<int64_t>(ranks_.size());
    return n * (n - 1);
  }

 private:
  std::vector<int> ranks_;
  std::vector<double> per_peer_;
  int64_t completed_ = 0;
  FlowIssuer& issuer_;
};

// Runs phases of independent sub-collectives one after the other; a phase starts when every
// sub-collective of the previous one is done. Tags carry the sub-collective's index.
class PhasedRun : public CollectiveRun, private FlowIssuer {
 public:
  using Factory = std::function<std::vector<std::unique_ptr<CollectiveRun>>(FlowIssuer&)>;

  PhasedRun(std::vector<Factory> phases, FlowIssuer& issuer)
      : phases_(std::move(phases)), issuer_(issuer) {}

  void start() override {
    // Totals are known up front so done() and flows_total() do not depend on progress.
    for (auto& f : phases_) {
      auto runs = f(*this);
      for (auto& r : runs) total_ += r->flows_total();
    }
    next_phase();
  }

  void on_flow_done(int64_t tag) override {
    ++completed_;
    issuing_ = static_cast<size_t>(tag >> kShift);  // follow-up flows belong to the same run
    auto& run = current_[issuing_];
    run->on_flow_done(tag & kMask);
    if (run->done() && ++finished_in_phase_ == current_.size()) next_phase();
  }

  bool done() const override { return completed_ == total_; }
  int64_t flows_total() const override { return total_; }

 private:
  static constexpr int kShift = 40;
  static constexpr int64_t kMask = (int64_t{1} << kShift) - 1;

  void issue(int src, int dst, double bytes, int64_t tag) override {
    issuer_.issue(src, dst, bytes, (static_cast<int64_t>(issuing_) << kShift) | tag);
  }

  void next_phase() {
    while (phase_ < phases_.size()) {
      current_ = phases_[phase_++](*this);
      finished_in_phase_ = 0;
      for (size_t r = 0; r < current_.size(); ++r) {
        issuing_ = r;
        current_[r]->start();
        if (current_[r]->done()) ++finished_in_phase_;
      }
      if (finished_in_phase_ < current_.size()) return;
    }
  }

  std::vector<Factory> phases_;
  FlowIssuer& issuer_;
  std::vector<std::unique_ptr<CollectiveRun>> current_;
  size_t phase_ = 0;
  size_t finished_in_phase_ = 0;
  size_t issuing_ = 0;
  int64_t completed_ = 0;
  int64_t total_ = 0;
};

// Ranks grouped by node, in order of first appearance; empty when nodes differ in size.
std::vector<std::vector<int>> uniform_node_groups(const std::vector<int>& ranks,
                                                  const std::vector<int>& node_of) {
  std::vector<std::vector<int>> groups;
  std::map<int, size_t> where;
  for (size_t p = 0; p < ranks.size(); ++p) {
    auto it = where.find(node_of[p]);
    if (it == where.end()) {
      it = where.emplace(node_of[p], groups.size()).first;
      groups.emplace_back();
    }
    groups[it->second].push_back(ranks[p]);
  }
  for (const auto& g : groups)
    if (g.size() != groups[0].size()) return {};
  return groups;
}

std::vector<double> equal_blocks(int n, double bytes) {
  return std::vector<double>(static_cast<size_t>(n), n > 0 ? bytes / n : 0.0);
}

// True when the inter-node ring of every local rank is limited by one and the same link.
bool inter_rings_share_bottleneck(const std::vector<std::vector<int>>& groups,
                                  const BottleneckLink& bottleneck) {
  if (!bottleneck || groups.size() < 2) return false;
  const size_t g = groups[0].size();
  for (size_t n = 0; n < groups.size(); ++n) {
    const auto& from = groups[n];
    const auto& to = groups[(n + 1) % groups.size()];
    int shared = bottleneck(from[0], to[0]);
    if (shared < 0) return false;
    for (size_t l = 1; l < g; ++l)
      if (bottleneck(from[l], to[l]) != shared) return false;
  }
  return true;
}

std::unique_ptr<CollectiveRun> hierarchical_allreduce(const Collective& c,
                                                      std::vector<std::vector<int>> groups,
                                                      FlowIssuer& issuer, bool merge_inter) {
  const int g = static_cast<int>(groups[0].size());
  const double bytes = c.bytes;
  const int chunks = c.chunks;
  auto intra = [groups, bytes, chunks](CollectiveType t) -> PhasedRun::Factory {
    return [=](FlowIssuer& out) {
      std::vector<std::unique_ptr<CollectiveRun>> runs;
      for (const auto& node : groups)
        runs.push_back(std::make_unique<RingRun>(
            t, node, equal_blocks(static_cast<int>(node.size()), bytes), chunks, out));
      return runs;
    };
  };
  PhasedRun::Factory inter = [groups, bytes, chunks, g, merge_inter](FlowIssuer& out) {
    std::vector<std::unique_ptr<CollectiveRun>> runs;
    const int nodes = static_cast<int>(groups.size());
    if (merge_inter) {
      std::vector<int> leaders;
      for (const auto& node : groups) leaders.push_back(node[0]);
      runs.push_back(std::make_unique<RingRun>(CollectiveType::kAllReduce, leaders,
                                               equal_blocks(nodes, bytes), chunks, out));
      return runs;
    }
    for (int l = 0; l < g; ++l) {
      std::vector<int> ring;
      for (const auto& node : groups) ring.push_back(node[l]);
      runs.push_back(std::make_unique<RingRun>(CollectiveType::kAllReduce, ring,
                                               equal_blocks(nodes, bytes / g), chunks, out));
    }
    return runs;
  };
  return std::make_unique<PhasedRun>(
      std::vector<PhasedRun::Factory>{intra(CollectiveType::kReduceScatter), inter,
                                      intra(CollectiveType::kAllGather)},
      issuer);
}

}  // namespace

CollectiveAlgo resolve_collective_algo(const Collective& c, const std::vector<int>& node_of) {
  const bool allreduce = c.type == CollectiveType::kAllReduce;
  const bool rooted = c.type == CollectiveType::kBroadcast || c.type == CollectiveType::kReduce;
  if (c.type == CollectiveType::kAllToAll) return CollectiveAlgo::kDirect;
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

std::unique_ptr<CollectiveRun> make_collective_run(const Collective& c, CollectiveAlgo algo,
                                                   const std::vector<int>& node_of,
                                                   FlowIssuer& issuer,
                                                   const BottleneckLink& bottleneck) {
  const int n = static_cast<int>(c.ranks.size());
  // Rank order starting at the root, for rooted collectives.
  std::vector<int> from_root(n);
  for (int p = 0; p < n; ++p) from_root[p] = c.ranks[(c.root + p) % n];

  switch (c.type) {
    case CollectiveType::kAllToAll: {
      std::vector<double> per_peer(n, 0.0);
      for (int i = 0; i < n; ++i)
        per_peer[i] = n > 1 ? (c.counts.empty() ? c.bytes : c.counts[i]) / (n - 1) : 0.0;
      return std::make_unique<DirectRun>(c.ranks, per_peer, issuer);
    }
    case CollectiveType::kBroadcast:
    case CollectiveType::kReduce: {
      if (algo == CollectiveAlgo::kTree)
        return std::make_unique<TreeRun>(c.type, from_root, c.bytes, c.chunks, issuer);
      std::vector<int> order = from_root;
      if (c.type == CollectiveType::kReduce) {
        // Towards the root: root+1 -> root+2 -> ... -> root.
        std::rotate(order.begin(), order.begin() + 1, order.end());
      }
      return std::make_unique<ChainRun>(order, c.bytes, c.chunks, issuer);
    }
    case CollectiveType::kAllReduce:
      if (algo == CollectiveAlgo::kTree)
        return std::make_unique<TreeRun>(c.type, c.ranks, c.bytes, c.chunks, issuer);
      if (algo == CollectiveAlgo::kHierarchical) {
        auto groups = uniform_node_groups(c.ranks, node_of);
        bool merge = inter_rings_share_bottleneck(groups, bottleneck);
        return hierarchical_allreduce(c, std::move(groups), issuer, merge);
      }
      [[fallthrough]];
    default: {
      std::vector<double> blocks = c.counts.empty() ? equal_blocks(n, c.bytes) : c.counts;
      return std::make_unique<RingRun>(c.type, c.ranks, blocks, c.chunks, issuer);
    }
  }
}

}  // namespace orrery
