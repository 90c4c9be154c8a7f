#include "engine/graph_check.h"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/topological_sort.hpp>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "common/errors.h"
#include "common/input_limits.h"
#include "engine/size_estimate.h"

namespace orrery {

namespace {

// Edges run dep -> dependent, so Boost's finishing order reversed is an execution order.
using DepGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;

// A cycle message lists at most this many ops; a million-op cycle would be unreadable.
constexpr std::size_t kMaxCycleOpsShown = 20;

std::string item(const char* array, std::size_t i, const std::string& name) {
  return std::string(array) + "[" + std::to_string(i) + "] \"" + name + "\"";
}

// Shortest readable form ("-0.5", "nan"); std::to_string would print "-0.500000".
std::string number(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

[[noreturn]] void fail(const std::string& origin, const std::string& what) {
  throw InputError(origin + ": " + what);
}

std::string device_ref(const ExecutionGraph& g, int d) {
  return "device " + std::to_string(d) + " \"" + g.devices[d].name + "\"";
}

// The lowest op index whose name an earlier op already has, and that earlier op's index;
// {size, size} when the names are unique. Sorting hashes keeps this one allocation and a
// sequential pass, where a hash map of 150,000 names took a few percent of a trace import.
std::pair<std::size_t, std::size_t> first_duplicate_name(const std::vector<Op>& ops) {
  std::vector<std::pair<std::size_t, std::size_t>> keyed(ops.size());  // (hash, index)
  for (std::size_t i = 0; i < ops.size(); ++i)
    keyed[i] = {std::hash<std::string_view>{}(ops[i].name), i};
  std::sort(keyed.begin(), keyed.end());
  std::pair<std::size_t, std::size_t> found{ops.size(), ops.size()};
  for (std::size_t a = 0; a < keyed.size();) {
    std::size_t b = a + 1;
    while (b < keyed.size() && keyed[b].first == keyed[a].first) ++b;
    // Equal hashes, in index order: an op repeats the name of the lowest earlier equal one.
    for (std::size_t j = a + 1; j < b; ++j)
      for (std::size_t k = a; k < j; ++k)
        if (ops[keyed[k].second].name == ops[keyed[j].second].name) {
          if (keyed[j].second < found.first) found = {keyed[j].second, keyed[k].second};
          break;
        }
    a = b;
  }
  return found;
}

void check_devices(const ExecutionGraph& g, const std::string& origin) {
  std::unordered_map<std::string_view, std::size_t> first;
  first.reserve(g.devices.size());
  for (std::size_t i = 0; i < g.devices.size(); ++i) {
    const Device& d = g.devices[i];
    if (d.name.empty()) fail(origin, "devices[" + std::to_string(i) + "]: empty device name");
    auto [it, inserted] = first.emplace(d.name, i);
    if (!inserted) {
      fail(origin, item("devices", i, d.name) +
                       ": duplicate device name (first defined at devices[" +
                       std::to_string(it->second) + "])");
    }
  }
}

// Device::mirrors: in range, each mirror of one device and nothing else. Returns per device the
// device it mirrors, -1 for none (empty when no device has mirrors).
std::vector<int> check_mirrors(const ExecutionGraph& g, const std::string& origin) {
  std::vector<int> of;
  for (std::size_t i = 0; i < g.devices.size(); ++i) {
    const auto& m = g.devices[i].mirrors;
    if (m.empty()) continue;
    if (of.empty()) of.assign(g.devices.size(), -1);
    const std::string where = item("devices", i, g.devices[i].name) + ": mirrors";
    for (int d : m) {
      if (d < 0 || static_cast<std::size_t>(d) >= g.devices.size())
        fail(origin, where + ": device index " + std::to_string(d) + " out of range");
      if (static_cast<std::size_t>(d) == i || of[d] >= 0)
        fail(origin,
             where + ": " + device_ref(g, d) + " is already " +
                 (static_cast<std::size_t>(d) == i ? std::string("this device")
                                                   : "a mirror of " + device_ref(g, of[d])));
      of[d] = static_cast<int>(i);
    }
  }
  for (std::size_t i = 0; i < of.size(); ++i)
    if (of[i] >= 0 && !g.devices[i].mirrors.empty())
      fail(origin, item("devices", i, g.devices[i].name) + ": a mirror of " + device_ref(g, of[i]) +
                       " cannot have mirrors of its own");
  return of;
}

// A mirror runs no op of its own (no queue, no transfer end) and takes part in collectives;
// the devices with mirrors of a transfer, or of a collective whose flows are copied (none of
// its ranks a mirror), have as many (each copy sends to the same copy).
void check_mirror_ops(const ExecutionGraph& g, const std::vector<int>& mirror_of,
                      const std::string& origin) {
  if (mirror_of.empty()) return;
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    const Op& op = g.ops[i];
    std::size_t copies = 0;
    auto check = [&](int d) {
      if (mirror_of[d] >= 0)
        fail(origin, item("ops", i, op.name) + ": runs on " + device_ref(g, d) + ", a mirror of " +
                         device_ref(g, mirror_of[d]) +
                         " (a mirror runs no ops of its own, it takes part in collectives)");
      const std::size_t n = g.devices[d].mirrors.size();
      if (n == 0) return;
      if (copies > 0 && n != copies)
        fail(origin, item("ops", i, op.name) + ": " + device_ref(g, d) + " has " +
                         std::to_string(n) + " mirrors where another of its devices has " +
                         std::to_string(copies) + " (expected as many)");
      copies = n;
    };
    if (op.kind == OpKind::kCollective) {
      check(op.device);  // the rank whose comm queue runs it
      const Collective& c = g.collectives[op.collective];
      if (!c.analytical && copies_flows_for_mirrors(c, mirror_of))
        for (int d : c.ranks)
          if (d != op.device) check(d);
      continue;
    }
    check(op.device);
    if (op.kind == OpKind::kTransfer) {
      check(op.src);
      check(op.dst);
    }
  }
}

// Inside `range` (finite, >= 0, not absurdly large); `unset_ok` also admits the -1 sentinel of
// Op::duration.
bool valid_amount(double v, const Range& range, bool unset_ok) {
  return range.contains(v) || (unset_ok && v == -1.0);
}

void check_collective(const ExecutionGraph& g, const Collective& c, const std::string& where,
                      const std::string& origin) {
  const int num_devices = static_cast<int>(g.devices.size());
  if (c.ranks.empty()) fail(origin, where + ": collective has no ranks");
  std::vector<char> seen(g.devices.size(), 0);
  for (int r : c.ranks) {
    if (r < 0 || r >= num_devices) {
      fail(origin, where + ": collective rank device index " + std::to_string(r) +
                       " out of range (graph has " + std::to_string(num_devices) + " devices)");
    }
    if (seen[r]++)
      fail(origin, where + ": " + device_ref(g, r) + " appears twice in the collective");
  }
  if (!valid_amount(c.bytes, limits::kBytes, false))
    fail(origin, where + ": collective bytes " + out_of_range(c.bytes, limits::kBytes));
  if (!c.counts.empty()) {
    if (c.counts.size() != c.ranks.size()) {
      fail(origin, where + ": collective has " + std::to_string(c.counts.size()) +
                       " per-rank counts for " + std::to_string(c.ranks.size()) + " ranks");
    }
    for (double v : c.counts)
      if (!valid_amount(v, limits::kBytes, false))
        fail(origin, where + ": collective count " + out_of_range(v, limits::kBytes));
  }
  if (c.root < 0 || c.root >= static_cast<int>(c.ranks.size())) {
    fail(origin, where + ": collective root " + std::to_string(c.root) + " is not a rank index");
  }
  if (!limits::kCollectiveChunks.contains(c.chunks))
    fail(origin,
         where + ": collective chunks " + out_of_range(c.chunks, limits::kCollectiveChunks));
  if (c.repeat < 1 || c.repeat > 1000000)
    fail(origin, where + ": collective repeat " + std::to_string(c.repeat) +
                     " must be an integer in [1, 1000000]");
  if (c.repeat > 1 && !c.analytical)
    fail(origin, where + ": collective repeat " + std::to_string(c.repeat) +
                     " needs an analytical collective (flows cannot be repeated as one op)");
  if (c.max_rate != 0 && !valid_amount(c.max_rate, limits::kBandwidth, false))
    fail(origin, where + ": collective max_rate " + out_of_range(c.max_rate, limits::kBandwidth));
  if (!(c.sm_share >= 0 && c.sm_share < 1)) {
    fail(origin, where + ": collective sm_share " + number(c.sm_share) + " must be in [0, 1)");
  }
}

void check_op(const ExecutionGraph& g, std::size_t i, const std::string& origin) {
  const Op& op = g.ops[i];
  // Built only on failure: this runs once per op of graphs with millions of them.
  auto where = [&] { return item("ops", i, op.name); };
  const int num_devices = static_cast<int>(g.devices.size());
  const int num_ops = static_cast<int>(g.ops.size());

  if (op.device < 0 || op.device >= num_devices) {
    fail(origin, where() + ": unknown device index " + std::to_string(op.device) + " (graph has " +
                     std::to_string(num_devices) + " devices)");
  }
  if (op.stream.index < 0) {
    fail(origin, where() + ": negative stream index " + std::to_string(op.stream.index));
  }
  auto check_amount = [&](const char* field, double v, const Range& range, bool unset_ok) {
    if (valid_amount(v, range, unset_ok)) return;
    fail(origin, where() + ": " + field + " " + out_of_range(v, range) +
                     (unset_ok ? " (or -1 for unset)" : ""));
  };
  check_amount("duration", op.duration, limits::kOpDuration, /*unset_ok=*/true);
  check_amount("flops", op.flops, limits::kOpFlops, false);
  check_amount("bytes", op.bytes, limits::kBytes, false);
  check_amount("transfer_bytes", op.transfer_bytes, limits::kBytes, false);
  if (op.max_rate != 0) check_amount("max_rate", op.max_rate, limits::kBandwidth, false);

  if (op.kind == OpKind::kTransfer) {
    for (auto [field, d] : {std::pair<const char*, int>{"src", op.src}, {"dst", op.dst}}) {
      if (d < 0 || d >= num_devices) {
        fail(origin, where() + ": transfer " + field + " device index " + std::to_string(d) +
                         " out of range (graph has " + std::to_string(num_devices) + " devices)");
      }
    }
    if (op.src == op.dst) {
      fail(origin, where() + ": transfer src and dst are both " + device_ref(g, op.src));
    }
  } else if (op.kind == OpKind::kCollective) {
    if (op.collective < 0 || op.collective >= static_cast<int>(g.collectives.size())) {
      fail(origin, where() + ": collective index " + std::to_string(op.collective) +
                       " out of range (graph has " + std::to_string(g.collectives.size()) +
                       " collectives)");
    }
    check_collective(g, g.collectives[op.collective], where(), origin);
  } else if (op.duration < 0 && op.flops <= 0 && op.bytes <= 0) {
    fail(origin, where() + ": compute op has no cost: expected a duration >= 0 or flops/bytes > 0");
  }

  for (int dep : op.deps) {
    if (dep < 0 || dep >= num_ops) {
      fail(origin, where() + ": dependency index " + std::to_string(dep) +
                       " out of range (graph has " + std::to_string(num_ops) + " ops)");
    }
    if (dep == static_cast<int>(i)) fail(origin, where() + ": depends on itself");
  }
}

std::string cycle_message(const ExecutionGraph& g, const std::vector<int>& cycle) {
  std::string msg = "dependency cycle: ";
  const std::size_t n = cycle.size();
  const std::size_t head = n <= kMaxCycleOpsShown ? n : kMaxCycleOpsShown - 1;
  for (std::size_t k = 0; k < head; ++k) msg += g.ops[cycle[k]].name + " -> ";
  if (head < n) {
    msg +=
        "... (" + std::to_string(n - head - 1) + " more) -> " + g.ops[cycle[n - 1]].name + " -> ";
  }
  return msg + g.ops[cycle[0]].name;
}

// Throws boost::not_a_dag on a cycle.
std::vector<int> boost_topological_order(const ExecutionGraph& g) {
  DepGraph dg(g.ops.size());
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    for (int dep : g.ops[i].deps) boost::add_edge(static_cast<std::size_t>(dep), i, dg);
  }
  std::vector<std::size_t> finish;
  finish.reserve(g.ops.size());
  boost::topological_sort(dg, std::back_inserter(finish));
  return std::vector<int>(finish.rbegin(), finish.rend());
}

}  // namespace

std::vector<int> find_dependency_cycle(const ExecutionGraph& g) {
  enum Color : uint8_t { kWhite, kOnPath, kDone };
  std::vector<uint8_t> color(g.ops.size(), kWhite);
  // The DFS path (walking op -> dep) with, per frame, the next dep to visit.
  std::vector<std::pair<int, std::size_t>> path;
  for (std::size_t root = 0; root < g.ops.size(); ++root) {
    if (color[root] != kWhite) continue;
    color[root] = kOnPath;
    path.emplace_back(static_cast<int>(root), 0);
    while (!path.empty()) {
      auto& [op, next] = path.back();
      const std::vector<int>& deps = g.ops[op].deps;
      if (next == deps.size()) {
        color[op] = kDone;
        path.pop_back();
        continue;
      }
      int dep = deps[next++];
      if (color[dep] == kWhite) {
        color[dep] = kOnPath;
        path.emplace_back(dep, 0);
      } else if (color[dep] == kOnPath) {
        // The path from `dep` to the top closes a loop; each frame depends on the next, so
        // reversing it yields dependency order.
        std::vector<int> cycle;
        for (auto it = path.rbegin(); it != path.rend(); ++it) {
          cycle.push_back(it->first);
          if (it->first == dep) break;
        }
        std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
        return cycle;
      }
    }
  }
  return {};
}

std::vector<int> topological_order(const ExecutionGraph& g) {
  try {
    return boost_topological_order(g);
  } catch (const boost::not_a_dag&) {
    throw std::logic_error("topological_order: " + cycle_message(g, find_dependency_cycle(g)));
  }
}

void check_graph(const ExecutionGraph& g, const std::string& origin) {
  if (!limits::kGpus.contains(static_cast<double>(g.devices.size())) && !g.devices.empty())
    fail(origin, "the graph has " + std::to_string(g.devices.size()) + " devices, expected " +
                     limits::kGpus.text());
  check_devices(g, origin);
  const std::vector<int> mirror_of = check_mirrors(g, origin);
  const auto [duplicate, first] = first_duplicate_name(g.ops);
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    const std::string& name = g.ops[i].name;
    if (name.empty()) fail(origin, "ops[" + std::to_string(i) + "]: empty op name");
    if (i == duplicate)
      fail(origin, item("ops", i, name) + ": duplicate op name (first defined at ops[" +
                       std::to_string(first) + "])");
    check_op(g, i, origin);
  }
  check_mirror_ops(g, mirror_of, origin);
  // One walk over the deps in place (no copy of the graph): a third of the check's time on
  // 1,024 ranks of Chakra traces went to building Boost's adjacency list for the same answer.
  if (const std::vector<int> cycle = find_dependency_cycle(g); !cycle.empty())
    fail(origin, cycle_message(g, cycle));
  check_size(estimate_graph_size(g), origin, "replaying this workload");
}

}  // namespace orrery
