#include "workloads/chakra/chakra_import.h"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <deque>
#include <map>
#include <tuple>
#include <unordered_map>

#include "common/errors.h"
#include "common/units.h"
#include "engine/graph_check.h"
#include "workloads/chakra/chakra_collectives.h"
#include "workloads/chakra/chakra_process_groups.h"

namespace orrery {

namespace {

using chakra::Node;
using chakra::Trace;

constexpr Stream kComputeStream{StreamClass::kCompute, 0};
constexpr Stream kCommStream{StreamClass::kComm, 0};
constexpr Stream kHostStream{StreamClass::kHost, 0};

std::string join(const std::vector<int>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return "[" + s + "]";
}

// One collective instance or one send/receive pair: who takes part and who has arrived. Members
// are slots of `ranks`, so a collective of n ranks costs O(n) once, not a map per rank.
struct Rendezvous {
  bool collective = false;
  std::vector<int> ranks;     // collective: the group in ring order; p2p: {src, dst}
  std::string group;          // collective: pg_name ("" = all ranks); p2p: "tag <t>"
  int64_t sequence = 0;       // k-th of its kind
  std::vector<int> position;  // per slot: the member's node position, -1 until a trace lists it
  std::vector<char> arrived;  // per slot: its dependencies are done
  int members = 0, arrivals = 0;

  // Slots of the ranks that are (or, with `present` false, are not) members, in rank order.
  std::vector<int> member_ranks(bool present) const {
    std::vector<int> out;
    for (size_t i = 0; i < ranks.size(); ++i)
      if ((position[i] >= 0) == present) out.push_back(ranks[i]);
    std::sort(out.begin(), out.end());
    return out;
  }
};

// A process group as the importer uses it: its ranks in ring order and each rank's slot there.
struct Group {
  std::vector<int> ranks;
  std::vector<int> slot;  // per rank of the job: its index in `ranks`, -1 outside the group
};

// Chakra's PyTorch converter records the execution trace's schema ("1.1.1-chakra.0.0.4") in the
// GlobalMetadata. Its ctrl_deps are PyTorch's call tree (caller -> callee), which the converter
// has already turned into execution order in data_deps, and they may name nodes it dropped as
// dangling (the process root): ASTRA-sim's feeder reads data_deps only, and so do we for them.
bool from_pytorch(const chakra::Trace& t) {
  for (const chakra::Attr& a : t.metadata) {
    std::string schema;
    if (a.name == "schema" && a.text(&schema) && schema.find("chakra") != std::string::npos)
      return true;
  }
  return false;
}

class Importer {
 public:
  Importer(const std::vector<Trace>& traces, const ChakraImportOptions& options)
      : traces_(traces), options_(options), ranks_(static_cast<int>(traces.size())) {}

  ExecutionGraph run() {
    if (ranks_ == 0) throw InputError("Chakra import: no trace files");
    make_devices();
    size_t nodes = 0;
    for (const Trace& t : traces_) nodes += t.nodes.size();
    g_.ops.reserve(nodes);  // one op per node but for metadata; collective flows add more
    ranks_state_.resize(ranks_);
    for (int r = 0; r < ranks_; ++r) index_rank(r);
    for (int r = 0; r < ranks_; ++r) assign_rendezvous(r);
    check_rendezvous_members();
    for (int r = 0; r < ranks_; ++r)
      for (int p = 0; p < static_cast<int>(traces_[r].nodes.size()); ++p)
        if (state(r).remaining[p] == 0) ready_.push_back({r, p});
    while (!ready_.empty()) {
      auto [r, p] = ready_.front();
      ready_.pop_front();
      process(r, p);
    }
    report_stall();
    check_graph(g_, traces_[0].origin);
    return std::move(g_);
  }

 private:
  // A list of positions per node, all in one array (a node's list: items[start[p]..start[p+1])).
  struct NodeLists {
    std::vector<int> start{0}, items;
    struct Range {
      const int *b, *e;
      const int* begin() const { return b; }
      const int* end() const { return e; }
      size_t size() const { return static_cast<size_t>(e - b); }
    };
    Range operator[](int p) const { return {items.data() + start[p], items.data() + start[p + 1]}; }
  };
  struct RankState {
    NodeLists deps;  // positions, data and control merged
    NodeLists succ;
    std::vector<int> remaining;
    // The ops after which each node is complete: most nodes have one, held in place; the
    // others' lists in done_many.
    std::vector<int> done_one;  // that op, or -1 when done_many holds the list
    std::vector<std::vector<int>> done_many;
    NodeLists::Range done_ops(int p) const {
      if (done_one[p] >= 0) return {&done_one[p], &done_one[p] + 1};
      return {done_many[p].data(), done_many[p].data() + done_many[p].size()};
    }
    std::vector<char> done;
    std::vector<int> rendezvous;  // index in rendezvous_ for send/recv/collective nodes, else -1
    std::vector<int> slot;        // the rank's slot in that rendezvous
  };

  RankState& state(int r) { return ranks_state_[r]; }
  const Node& node(int r, int p) const { return traces_[r].nodes[p]; }

  std::string where(int r, int p) const {
    const Node& n = node(r, p);
    std::string s = traces_[r].origin + ": node id " + std::to_string(n.id);
    if (!n.name.empty()) s += " \"" + n.name + "\"";
    return s;
  }
  [[noreturn]] void fail(int r, int p, const std::string& what) const {
    throw InputError(where(r, p) + ": " + what);
  }

  // Integer attribute of any integer type; false when absent.
  bool int_attr(int r, int p, const char* name, int64_t* out) const {
    const chakra::Attr* a = node(r, p).attr(name);
    if (a == nullptr) return false;
    if (!a->integer(out))
      fail(r, p, std::string("attribute ") + name + " must be an integer, got " + a->value_name());
    return true;
  }
  double size_attr(int r, int p, const char* name) const {
    const chakra::Attr* a = node(r, p).attr(name);
    double v = 0;
    if (a == nullptr) return 0.0;
    if (!a->number(&v) || !(v >= 0) || !std::isfinite(v))
      fail(r, p,
           std::string("attribute ") + name + " must be a finite number >= 0, got " +
               (a->number(&v) ? format_exact(v) : std::string(a->value_name())));
    return v;
  }
  int rank_attr(int r, int p, const char* name) const {
    int64_t v = 0;
    if (!int_attr(r, p, name, &v))
      fail(r, p, std::string(chakra::node_type_name(node(r, p).type)) + " needs attribute " + name);
    if (v < 0 || v >= ranks_)
      fail(r, p,
           std::string(name) + " " + std::to_string(v) + " is not a rank (0.." +
               std::to_string(ranks_ - 1) + ")");
    return static_cast<int>(v);
  }

  // A send's destination or a receive's source: comm_dst / comm_src, or, when the node has none
  // (Chakra's PyTorch converter records no peer), the other rank of its two-rank process group.
  int p2p_peer(int r, int p, bool send) const {
    const char* name = send ? "comm_dst" : "comm_src";
    if (node(r, p).attr(name) != nullptr) return rank_attr(r, p, name);
    std::string pg;
    if (const chakra::Attr* a = node(r, p).attr("pg_name"); a && !a->text(&pg))
      fail(r, p, std::string("attribute pg_name must be a string, got ") + a->value_name());
    auto it = options_.comm_groups.find(pg);
    if (pg.empty() || it == options_.comm_groups.end())
      fail(r, p,
           std::string(chakra::node_type_name(node(r, p).type)) + " needs attribute " + name +
               (pg.empty() ? std::string(" (or a pg_name of a two-rank process group)")
                           : " (its process group \"" + pg + "\" is not in the comm groups)"));
    const std::vector<int>& g = it->second;
    if (g.size() != 2 || std::find(g.begin(), g.end(), r) == g.end())
      fail(r, p,
           std::string(chakra::node_type_name(node(r, p).type)) + " has no " + name +
               " and its process group \"" + pg + "\" is " + join(g) +
               ": the peer follows from the group only for two ranks, one of them this rank " +
               std::to_string(r));
    return g[0] == r ? g[1] : g[0];
  }

  void make_devices() {
    if (!options_.device_hosts.empty() && static_cast<int>(options_.device_hosts.size()) < ranks_) {
      throw InputError("Chakra import: " + std::to_string(ranks_) + " rank files but only " +
                       std::to_string(options_.device_hosts.size()) + " device hosts");
    }
    auto part = [&](const std::vector<std::string>& v, const char* what) {
      if (!v.empty() && v.size() != options_.device_hosts.size())
        throw InputError(std::string("Chakra import: ") + std::to_string(v.size()) + " " + what +
                         " for " + std::to_string(options_.device_hosts.size()) + " device hosts");
    };
    part(options_.device_nodes, "device servers");
    part(options_.device_launch_hosts, "launch hosts");
    for (int r = 0; r < ranks_; ++r) {
      Device d;
      d.name = "rank" + std::to_string(r);
      d.host = options_.device_hosts.empty() ? d.name : options_.device_hosts[r];
      d.launch_host =
          options_.device_launch_hosts.empty() ? d.host : options_.device_launch_hosts[r];
      d.node = options_.device_nodes.empty() ? d.host : options_.device_nodes[r];
      g_.devices.push_back(d);
    }
  }

  // Node id -> position in its file: an array when the ids are about as many as the nodes, a
  // sorted array otherwise (Orrery's own exports number nodes across ranks, so a rank's ids are
  // sparse); no allocation per node either way.
  class IdIndex {
   public:
    explicit IdIndex(const std::vector<Node>& nodes) {
      uint64_t top = 0;
      for (const Node& n : nodes) top = std::max(top, n.id);
      dense_ = top < 4 * static_cast<uint64_t>(nodes.size()) + 1024;
      const int n = static_cast<int>(nodes.size());
      if (dense_) {
        positions_.assign(top + 1, -1);
        for (int p = 0; p < n; ++p) {
          int& first = positions_[nodes[p].id];
          if (first < 0) {
            first = p;
          } else if (p < duplicate_) {
            duplicate_ = p;
            duplicate_of_ = first;
          }
        }
        return;
      }
      sorted_.reserve(nodes.size());
      for (int p = 0; p < n; ++p) sorted_.push_back({nodes[p].id, p});
      std::sort(sorted_.begin(), sorted_.end());
      for (size_t i = 1; i < sorted_.size(); ++i) {
        if (sorted_[i].first != sorted_[i - 1].first) continue;
        size_t run = i - 1;  // the run's first entry holds the lowest position
        while (run > 0 && sorted_[run - 1].first == sorted_[i].first) --run;
        if (sorted_[i].second < duplicate_) {
          duplicate_ = sorted_[i].second;
          duplicate_of_ = sorted_[run].second;
        }
      }
    }
    // The lowest position whose id an earlier node already has (INT_MAX if none) and that
    // earlier node's position.
    int duplicate() const { return duplicate_; }
    int duplicate_of() const { return duplicate_of_; }
    // The first position holding `id`; -1 if none.
    int find(uint64_t id) const {
      if (dense_) return id < positions_.size() ? positions_[id] : -1;
      auto it = std::lower_bound(sorted_.begin(), sorted_.end(), std::pair<uint64_t, int>{id, -1});
      return it != sorted_.end() && it->first == id ? it->second : -1;
    }

   private:
    bool dense_;
    std::vector<int> positions_;
    std::vector<std::pair<uint64_t, int>> sorted_;  // (id, position)
    int duplicate_ = INT_MAX, duplicate_of_ = -1;
  };

  void index_rank(int r) {
    RankState& s = state(r);
    const auto& nodes = traces_[r].nodes;
    const int n = static_cast<int>(nodes.size());
    IdIndex index(nodes);
    for (int p = 0; p < n; ++p) {
      if (p == index.duplicate())
        fail(r, p, "duplicate node id (also node #" + std::to_string(index.duplicate_of()) + ")");
      const int t = nodes[p].type;
      if (chakra::node_type_name(t) == nullptr)
        fail(r, p,
             "unknown node type " + std::to_string(t) +
                 " (expected 1..10, see et_def.proto NodeType)");
      if (t == chakra::kInvalidNode) fail(r, p, "node type INVALID_NODE (0): the type is unset");
    }
    s.remaining.assign(n, 0);
    s.done_one.assign(n, -1);
    s.done_many.resize(n);
    s.done.assign(n, 0);
    s.rendezvous.assign(n, -1);
    s.slot.assign(n, -1);
    const bool call_tree = from_pytorch(traces_[r]);
    s.deps.start.reserve(n + 1);
    std::vector<int> fan_out(n + 1, 0);
    for (int p = 0; p < n; ++p) {
      const size_t first = s.deps.items.size();
      for (const auto* list : {&nodes[p].data_deps, &nodes[p].ctrl_deps}) {
        if (call_tree && list == &nodes[p].ctrl_deps) continue;
        for (uint64_t id : *list) {
          const int q = index.find(id);
          if (q < 0)
            fail(r, p, "depends on node id " + std::to_string(id) + ", which is not in the file");
          if (q == p) fail(r, p, "depends on itself");
          if (std::find(s.deps.items.begin() + first, s.deps.items.end(), q) ==
              s.deps.items.end()) {
            s.deps.items.push_back(q);
            ++fan_out[q + 1];
          }
        }
      }
      s.deps.start.push_back(static_cast<int>(s.deps.items.size()));
      s.remaining[p] = static_cast<int>(s.deps.items.size() - first);
    }
    // Successors: the same pairs turned around, each list in the order of its successors.
    for (int p = 0; p < n; ++p) fan_out[p + 1] += fan_out[p];
    s.succ.start = fan_out;
    s.succ.items.resize(s.deps.items.size());
    for (int p = 0; p < n; ++p)
      for (int q : s.deps[p]) s.succ.items[fan_out[q]++] = p;
    check_acyclic(r);
  }

  // Kahn's algorithm over one rank; on failure walks unfinished dependencies to a cycle.
  void check_acyclic(int r) {
    const RankState& s = state(r);
    const int n = static_cast<int>(s.remaining.size());
    std::vector<int> left = s.remaining;
    std::vector<int> queue;
    for (int p = 0; p < n; ++p)
      if (left[p] == 0) queue.push_back(p);
    size_t seen = 0;
    while (seen < queue.size()) {
      int p = queue[seen++];
      for (int q : s.succ[p])
        if (--left[q] == 0) queue.push_back(q);
    }
    if (static_cast<int>(seen) == n) return;
    int v = 0;
    while (left[v] == 0) ++v;
    std::vector<int> path;
    std::vector<int> pos_in_path(n, -1);
    while (pos_in_path[v] < 0) {
      pos_in_path[v] = static_cast<int>(path.size());
      path.push_back(v);
      for (int d : s.deps[v])
        if (left[d] > 0) {
          v = d;
          break;
        }
    }
    // path[pos_in_path[v]..] walks "depends on": reverse it into dependency order.
    std::vector<int> cycle(path.begin() + pos_in_path[v], path.end());
    std::reverse(cycle.begin(), cycle.end());
    std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
    std::string text;
    for (int p : cycle) text += std::to_string(node(r, p).id) + " -> ";
    throw InputError(traces_[r].origin + ": dependency cycle among node ids " + text +
                     std::to_string(node(r, cycle.front()).id) + " (\"a -> b\": b depends on a)");
  }

  // The group a collective of process group `pg` spans, checked once per group and rank.
  const Group& group_of(int r, int p, const std::string& pg) {
    const bool world = pg.empty() || options_.comm_groups.empty();
    auto [it, fresh] = groups_.try_emplace(world ? std::string() : pg);
    Group& g = it->second;
    if (fresh) {
      if (world) {
        for (int i = 0; i < ranks_; ++i) g.ranks.push_back(i);
      } else {
        auto found = options_.comm_groups.find(pg);
        if (found == options_.comm_groups.end()) {
          groups_.erase(it);
          fail(r, p, "process group \"" + pg + "\" is not in the comm groups");
        }
        for (int x : found->second)
          if (x < 0 || x >= ranks_) {
            groups_.erase(it);
            fail(r, p,
                 "process group \"" + pg + "\" lists rank " + std::to_string(x) + " of " +
                     std::to_string(ranks_));
          }
        g.ranks = found->second;
      }
      g.slot.assign(ranks_, -1);
      for (size_t i = 0; i < g.ranks.size(); ++i)
        if (g.slot[g.ranks[i]] < 0) g.slot[g.ranks[i]] = static_cast<int>(i);
    }
    if (g.slot[r] < 0)
      fail(r, p,
           "rank " + std::to_string(r) + " is not in its process group \"" + pg + "\" " +
               join(g.ranks));
    return g;
  }

  // Numbers the rank's collectives per process group and its transfers per (source,
  // destination, tag): the k-th of each on every rank it names is one rendezvous.
  void assign_rendezvous(int r) {
    std::map<std::string, int64_t> collectives;
    std::map<std::tuple<int, int, int64_t, bool>, int64_t> transfers;
    RankState& s = state(r);
    const int n = static_cast<int>(traces_[r].nodes.size());
    for (int p = 0; p < n; ++p) {
      const int t = node(r, p).type;
      std::vector<int>* sequence = nullptr;  // rendezvous ids of this kind, by k
      int64_t k = 0;
      int slot = 0;
      Rendezvous proto;
      if (t == chakra::kCommCollNode) {
        std::string pg;
        if (const chakra::Attr* a = node(r, p).attr("pg_name"); a && !a->text(&pg))
          fail(r, p, std::string("attribute pg_name must be a string, got ") + a->value_name());
        const Group& g = group_of(r, p, pg);
        slot = g.slot[r];
        k = collectives[pg]++;
        sequence = &collective_ids_[pg];
        if (static_cast<size_t>(k) == sequence->size()) {
          proto.collective = true;
          proto.group = pg;
          proto.ranks = g.ranks;
        }
      } else if (t == chakra::kCommSendNode || t == chakra::kCommRecvNode) {
        const bool send = t == chakra::kCommSendNode;
        const int peer = p2p_peer(r, p, send);
        if (peer == r) fail(r, p, "sends to or receives from its own rank");
        int64_t tag = 0;
        int_attr(r, p, "comm_tag", &tag);
        const int src = send ? r : peer, dst = send ? peer : r;
        slot = send ? 0 : 1;
        // A send and its receive share one rendezvous: the direction counts apart but is not
        // part of the rendezvous.
        k = transfers[{src, dst, tag, send}]++;
        sequence = &transfer_ids_[{src, dst, tag}];
        proto.ranks = {src, dst};
        proto.group = "tag " + std::to_string(tag);
      } else {
        continue;
      }
      while (sequence->size() <= static_cast<size_t>(k)) {
        sequence->push_back(static_cast<int>(rendezvous_.size()));
        Rendezvous fresh = proto;
        fresh.sequence = static_cast<int64_t>(sequence->size()) - 1;
        fresh.position.assign(fresh.ranks.size(), -1);
        fresh.arrived.assign(fresh.ranks.size(), 0);
        rendezvous_.push_back(std::move(fresh));
      }
      const int id = (*sequence)[k];
      Rendezvous& rv = rendezvous_[id];
      if (rv.position[slot] >= 0) fail(r, p, "internal: rank listed twice in one rendezvous");
      rv.position[slot] = p;
      ++rv.members;
      s.rendezvous[p] = id;
      s.slot[p] = slot;
    }
  }

  void check_rendezvous_members() const {
    for (const Rendezvous& rv : rendezvous_) {
      // The lowest member rank names the node in the message.
      int r = -1, p = -1;
      for (size_t i = 0; i < rv.ranks.size(); ++i)
        if (rv.position[i] >= 0 && (r < 0 || rv.ranks[i] < r)) r = rv.ranks[i], p = rv.position[i];
      if (rv.collective) {
        std::vector<int> missing;
        for (size_t i = 0; i < rv.ranks.size(); ++i)
          if (rv.position[i] < 0) missing.push_back(rv.ranks[i]);
        if (!missing.empty()) {
          fail(r, p,
               "collective #" + std::to_string(rv.sequence) + " of process group \"" + rv.group +
                   "\" is in the traces of ranks " + join(rv.member_ranks(true)) +
                   " but not of ranks " + join(missing) +
                   " (they list fewer collectives of this group)");
        }
      } else if (rv.members != 2) {
        const bool is_send = node(r, p).type == chakra::kCommSendNode;
        fail(r, p,
             std::string(is_send ? "COMM_SEND_NODE to rank " : "COMM_RECV_NODE from rank ") +
                 std::to_string(is_send ? rv.ranks[1] : rv.ranks[0]) + " (" + rv.group + ", #" +
                 std::to_string(rv.sequence) + " of this pair) has no matching " +
                 (is_send ? "COMM_RECV_NODE" : "COMM_SEND_NODE") + " in rank " +
                 std::to_string(is_send ? rv.ranks[1] : rv.ranks[0]) + "'s trace");
      }
    }
  }

  // `into` followed by the ops of `from` it does not hold yet, in order. The stamp array marks
  // what `into` holds, so merging the dependencies of a collective's n ranks is O(n), not O(n^2).
  template <class Ops>
  void merge_into(std::vector<int>& into, const Ops& from) {
    if (from.size() == 0) return;
    if (into.empty() && from.size() == 1) {
      into.push_back(*from.begin());
      return;
    }
    if (stamp_.size() < g_.ops.size()) stamp_.resize(g_.ops.size() + g_.ops.size() / 2 + 16, 0);
    if (++stamp_now_ == 0) {  // wrapped: forget every old mark
      std::fill(stamp_.begin(), stamp_.end(), 0);
      stamp_now_ = 1;
    }
    for (int x : into) stamp_[x] = stamp_now_;
    for (int x : from)
      if (stamp_[x] != stamp_now_) {
        stamp_[x] = stamp_now_;
        into.push_back(x);
      }
  }
  std::vector<int> merged(std::vector<int> a, const std::vector<int>& b) {
    merge_into(a, b);
    return a;
  }

  std::vector<int> dep_ops(int r, int p) {
    std::vector<int> ops;
    for (int d : state(r).deps[p]) merge_into(ops, state(r).done_ops(d));
    return ops;
  }

  void complete(int r, int p, std::vector<int> ops) {
    RankState& s = state(r);
    if (ops.size() == 1) {
      s.done_one[p] = ops[0];
    } else {
      s.done_many[p] = std::move(ops);
    }
    mark_done(r, p);
  }
  void complete(int r, int p, int op) {
    state(r).done_one[p] = op;
    mark_done(r, p);
  }
  void mark_done(int r, int p) {
    RankState& s = state(r);
    s.done[p] = 1;
    for (int q : s.succ[p])
      if (--s.remaining[q] == 0) ready_.push_back({r, q});
  }

  // "r<rank>.<node id>[:<node name>]", built in place: one allocation per op of a large import.
  std::string op_name(int r, int p) const {
    const Node& n = node(r, p);
    char digits[48] = {'r'};
    char* end = std::to_chars(digits + 1, digits + sizeof digits, r).ptr;
    *end++ = '.';
    end = std::to_chars(end, digits + sizeof digits, n.id).ptr;
    std::string s;
    s.reserve(static_cast<size_t>(end - digits) + (n.name.empty() ? 0 : 1 + n.name.size()));
    s.append(digits, end);
    if (!n.name.empty()) s.append(":").append(n.name);
    return s;
  }

  int add_compute(int r, int p, Stream stream, const std::string& phase, double duration,
                  double flops, double bytes) {
    return append_compute(g_, op_name(r, p), r, stream, duration, phase, dep_ops(r, p), flops,
                          bytes);
  }

  void process(int r, int p) {
    const Node& n = node(r, p);
    const double micros = static_cast<double>(n.duration_micros) * 1e-6;
    switch (n.type) {
      case chakra::kCompNode: {
        int64_t cpu = 0;
        int_attr(r, p, "is_cpu_op", &cpu);
        const double flops = size_attr(r, p, "num_ops");
        const double bytes = size_attr(r, p, "tensor_size");
        const bool measured =
            n.duration_micros > 0 && (!options_.prefer_num_ops || (flops == 0 && bytes == 0));
        const bool priced = !measured && (flops > 0 || bytes > 0);
        complete(r, p,
                 add_compute(r, p, cpu ? kHostStream : kComputeStream, "compute",
                             priced ? -1.0 : micros, priced ? flops : 0.0, priced ? bytes : 0.0));
        return;
      }
      case chakra::kMemLoadNode:
      case chakra::kMemStoreNode: {
        const Stream s{
            n.type == chakra::kMemLoadNode ? StreamClass::kCopyH2D : StreamClass::kCopyD2H, 0};
        const double bytes = size_attr(r, p, "tensor_size");
        const bool priced = n.duration_micros == 0 && bytes > 0;
        complete(r, p,
                 add_compute(r, p, s, "io", priced ? -1.0 : micros, 0.0, priced ? bytes : 0.0));
        return;
      }
      case chakra::kCommCollNode:
      case chakra::kCommSendNode:
      case chakra::kCommRecvNode:
        arrive(r, p);
        return;
      default:  // metadata, storage, batch, checkpoint
        if (n.duration_micros > 0) {
          complete(r, p, add_compute(r, p, kHostStream, "host", micros, 0.0, 0.0));
        } else {
          complete(r, p, dep_ops(r, p));
        }
    }
  }

  void arrive(int r, int p) {
    Rendezvous& rv = rendezvous_[state(r).rendezvous[p]];
    rv.arrived[state(r).slot[p]] = 1;
    if (++rv.arrivals < rv.members) return;
    if (rv.collective) {
      expand_collective(rv);
    } else {
      connect(rv);
    }
  }

  void connect(const Rendezvous& rv) {
    const int s = rv.ranks[0], d = rv.ranks[1];
    const int sp = rv.position[0], dp = rv.position[1];
    const chakra::Attr* size = node(s, sp).attr("comm_size");
    if (size == nullptr) fail(s, sp, "COMM_SEND_NODE needs attribute comm_size");
    const double bytes = size_attr(s, sp, "comm_size");
    if (node(d, dp).attr("comm_size") != nullptr && size_attr(d, dp, "comm_size") != bytes)
      fail(d, dp,
           "receives " + std::to_string(size_attr(d, dp, "comm_size")) +
               " bytes but the matching send (" + where(s, sp) + ") sends " +
               std::to_string(bytes));
    const int index =
        append_transfer(g_, op_name(s, sp) + "->r" + std::to_string(d), s, kCommStream, s, d, bytes,
                        "comm", merged(dep_ops(s, sp), dep_ops(d, dp)));
    complete(s, sp, index);
    complete(d, dp, index);
  }

  void expand_collective(const Rendezvous& rv) {
    // Every rank must agree on what the collective is.
    const int r0 = rv.ranks[0], p0 = rv.position[0];
    int64_t type = 0;
    if (!int_attr(r0, p0, "comm_type", &type))
      fail(r0, p0, "COMM_COLL_NODE needs attribute comm_type");
    const char* type_name = chakra::collective_name(static_cast<int>(type));
    if (type_name == nullptr)
      fail(r0, p0,
           "unknown comm_type " + std::to_string(type) + " (see et_def.proto CollectiveCommType)");
    if (node(r0, p0).attr("comm_size") == nullptr && type != chakra::kBarrier)
      fail(r0, p0, "COMM_COLL_NODE needs attribute comm_size");
    const double bytes = type == chakra::kBarrier ? 0.0 : size_attr(r0, p0, "comm_size");
    chakra::RankDeps deps;
    for (size_t i = 0; i < rv.ranks.size(); ++i) {
      const int x = rv.ranks[i], px = rv.position[i];
      int64_t t = -1;
      int_attr(x, px, "comm_type", &t);
      const double b = type == chakra::kBarrier ? 0.0 : size_attr(x, px, "comm_size");
      if (t != type || b != bytes)
        fail(x, px,
             "collective #" + std::to_string(rv.sequence) + " of process group \"" + rv.group +
                 "\" differs across ranks: here comm_type " + std::to_string(t) + ", comm_size " +
                 std::to_string(b) + "; on rank " + std::to_string(r0) + " comm_type " +
                 std::to_string(type) + ", comm_size " + std::to_string(bytes));
      deps.push_back(dep_ops(x, px));
    }
    const std::string name = "coll." + (rv.group.empty() ? std::string("world") : rv.group) + "." +
                             std::to_string(rv.sequence) + ":" + type_name;
    chakra::RankDeps done;
    if (options_.engine_collectives) {
      done = engine_collective(rv, static_cast<int>(type), bytes, deps, name);
    } else {
      done = flows(rv, static_cast<int>(type), bytes, deps, name);
    }
    for (size_t i = 0; i < rv.ranks.size(); ++i) complete(rv.ranks[i], rv.position[i], done[i]);
  }

  chakra::RankDeps engine_collective(const Rendezvous& rv, int type, double bytes,
                                     const chakra::RankDeps& deps, const std::string& name) {
    const int r0 = rv.ranks[0], p0 = rv.position[0];
    Collective c;
    switch (type) {
      case chakra::kAllReduce:
      case chakra::kBarrier:
        c.type = CollectiveType::kAllReduce;
        break;
      case chakra::kAllGather:
        c.type = CollectiveType::kAllGather;
        break;
      case chakra::kReduceScatter:
      case chakra::kReduceScatterBlock:
        c.type = CollectiveType::kReduceScatter;
        break;
      case chakra::kAllToAll:
        c.type = CollectiveType::kAllToAll;
        break;
      case chakra::kBroadcast:
        c.type = CollectiveType::kBroadcast;
        break;
      case chakra::kReduce:
        c.type = CollectiveType::kReduce;
        break;
      default:
        fail(r0, p0,
             std::string("collective ") + chakra::collective_name(type) +
                 " is not supported (no engine collective for it)");
    }
    c.ranks = rv.ranks;
    // Chakra's ALL_TO_ALL comm_size is the whole buffer, of which each rank keeps its own 1/n
    // (ASTRA-sim's reading; the importer's own flows send bytes / n to each peer); an engine
    // all-to-all's bytes are what a rank sends.
    const double n = static_cast<double>(c.ranks.size());
    c.bytes = c.type == CollectiveType::kAllToAll && n > 1 ? bytes * (n - 1) / n : bytes;
    c.protocol = options_.protocol;
    c.algo = options_.algo;
    c.chunks = options_.chunks;
    c.pipeline = options_.pipeline;
    c.analytical = options_.analytical;
    std::vector<int> after;
    for (const auto& d : deps) merge_into(after, d);
    int op = append_collective(g_, name, std::move(c), "comm", std::move(after));
    return chakra::RankDeps(rv.ranks.size(), {op});
  }

  chakra::RankDeps flows(const Rendezvous& rv, int type, double bytes, const chakra::RankDeps& deps,
                         const std::string& name) {
    const int r0 = rv.ranks[0], p0 = rv.position[0];
    const char* type_name = chakra::collective_name(type);
    chakra::RankDeps done;
    switch (type) {
      case chakra::kAllReduce:
        // Reduce-scatter then all-gather: two ring passes of bytes/n per step.
        done =
            chakra::append_ring_pass(g_, rv.ranks, bytes, deps, name + ".rs", kCommStream, "comm");
        done =
            chakra::append_ring_pass(g_, rv.ranks, bytes, done, name + ".ag", kCommStream, "comm");
        break;
      case chakra::kAllGather:
      case chakra::kReduceScatter:
      case chakra::kReduceScatterBlock:
      case chakra::kBarrier:
        done = chakra::append_ring_pass(g_, rv.ranks, bytes, deps, name, kCommStream, "comm");
        break;
      case chakra::kAllToAll:
        done = chakra::append_all_to_all(g_, rv.ranks, bytes, deps, name, kCommStream, "comm");
        break;
      default:
        fail(r0, p0,
             std::string("collective ") + type_name +
                 " is not supported by the importer (supported: ALL_REDUCE, ALL_GATHER, "
                 "REDUCE_SCATTER, REDUCE_SCATTER_BLOCK, ALL_TO_ALL, BARRIER; or hand "
                 "collectives to the engine)");
    }
    return done;
  }

  // Nodes left undone with every per-rank cycle excluded: ranks wait on each other.
  void report_stall() const {
    for (int r = 0; r < ranks_; ++r) {
      const RankState& s = ranks_state_[r];
      for (size_t p = 0; p < s.done.size(); ++p) {
        if (s.done[p]) continue;
        for (const Rendezvous& rv : rendezvous_) {
          if (rv.arrivals == 0 || rv.arrivals == rv.members) continue;
          std::vector<int> waiting;
          int ar = -1, ap = -1;  // the lowest rank that arrived names the node
          for (size_t i = 0; i < rv.ranks.size(); ++i) {
            if (rv.position[i] < 0) continue;
            if (!rv.arrived[i]) {
              waiting.push_back(rv.ranks[i]);
            } else if (ar < 0 || rv.ranks[i] < ar) {
              ar = rv.ranks[i];
              ap = rv.position[i];
            }
          }
          std::sort(waiting.begin(), waiting.end());
          fail(ar, ap,
               std::string(rv.collective ? "collective" : "transfer") + " #" +
                   std::to_string(rv.sequence) + " (" +
                   (rv.collective ? "process group \"" + rv.group + "\"" : rv.group) +
                   ") deadlocks: ranks " + join(waiting) +
                   " reach it only after something that waits for it (mismatched "
                   "order of collectives or transfers across ranks)");
        }
        fail(r, static_cast<int>(p), "never becomes ready (internal error)");
      }
    }
  }

  const std::vector<Trace>& traces_;
  const ChakraImportOptions& options_;
  const int ranks_;
  std::vector<RankState> ranks_state_;
  std::vector<Rendezvous> rendezvous_;
  std::map<std::string, Group> groups_;  // by pg_name; "" = every rank
  // Rendezvous ids by sequence number, per process group and per (source, destination, tag).
  std::map<std::string, std::vector<int>> collective_ids_;
  std::map<std::tuple<int, int, int64_t>, std::vector<int>> transfer_ids_;
  std::vector<uint32_t> stamp_;  // merge_into's marks, per op
  uint32_t stamp_now_ = 0;
  std::deque<std::pair<int, int>> ready_;  // (rank, node position) whose deps are done
  ExecutionGraph g_;
};

}  // namespace

ExecutionGraph chakra_to_execution_graph(const std::vector<chakra::Trace>& traces,
                                         const ChakraImportOptions& options) {
  if (!options.comm_groups.empty()) return Importer(traces, options).run();
  ChakraImportOptions own = options;
  own.comm_groups = trace_process_groups(traces);
  return Importer(traces, own).run();
}

}  // namespace orrery
