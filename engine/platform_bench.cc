#include "engine/platform_bench.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <sstream>

#include "common/errors.h"
#include "engine/replay.h"
#include "platforms/platform_spec.h"
#include "platforms/routing.h"

namespace orrery {
namespace {

const char* const kColumnOrder[] = {"QPI",    "Root complex", "PCIe switch", "NVLink 2-hop",
                                    "NVLink", "NVSwitch",     "Network"};

class BenchGraph {
 public:
  int device(const std::string& host) {
    auto it = index_.find(host);
    if (it != index_.end()) return it->second;
    Device d;
    d.name = d.host = d.launch_host = host;
    g_.devices.push_back(d);
    return index_[host] = static_cast<int>(g_.devices.size()) - 1;
  }

  int transfer(const std::string& src, const std::string& dst, double bytes, StreamClass stream,
               std::vector<int> deps) {
    const int from = device(src), to = device(dst);
    // The copy runs on the queue of the GPU end (the source for GPU -> GPU).
    return append_transfer(g_, "t" + std::to_string(g_.ops.size()) + "_" + src + "_" + dst,
                           stream == StreamClass::kCopyH2D ? to : from, {stream, 0}, from, to,
                           bytes, "", std::move(deps));
  }

  const ExecutionGraph& graph() const { return g_; }

 private:
  ExecutionGraph g_;
  std::map<std::string, int> index_;
};

struct Measure {
  std::vector<int> ops;
  double bytes;
};

double rate(const RunResult& r, const Measure& m) {
  if (m.ops.empty()) return std::numeric_limits<double>::quiet_NaN();
  double start = r.timeline[m.ops[0]].start, end = 0;
  for (int op : m.ops) {
    start = std::min(start, r.timeline[op].start);
    end = std::max(end, r.timeline[op].end);
  }
  return m.bytes / (end - start);
}

std::string mbps(double bytes_per_s) {
  if (std::isnan(bytes_per_s)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", bytes_per_s / 1e6);
  return buf;
}

}  // namespace

std::vector<BenchPair> default_bench_pairs(const Topology& topo) {
  RouteFinder finder(topo);
  std::map<std::string, BenchPair> found;
  std::vector<std::string> gpus = gpu_hosts(topo);
  auto consider = [&](const std::string& a, const std::string& b) {
    std::string relation = route_relation(finder, finder.route(a, b));
    if (!found.count(relation)) found[relation] = {relation, a, b, launch_host_of(topo, a)};
  };
  std::vector<std::string> first;  // the GPUs of server 0
  for (const auto& g : gpus)
    if (g.rfind("n0_", 0) == 0) first.push_back(g);
  for (size_t i = 0; i < first.size(); ++i)
    for (size_t j = i + 1; j < first.size(); ++j) consider(first[i], first[j]);
  for (const auto& g : gpus)
    if (g.rfind("n1_", 0) == 0 && !first.empty()) {
      consider(first[0], g);
      break;
    }
  std::vector<BenchPair> out;
  for (const char* label : kColumnOrder)
    if (found.count(label)) out.push_back(found[label]);
  return out;
}

std::vector<BenchColumn> run_platform_bench(const PlatformSource& platform,
                                            const std::vector<BenchPair>& pairs, double bytes) {
  if (!(bytes > 0)) throw InputError("platform bench: the transfer size must be positive");
  BenchGraph g;
  std::vector<std::array<Measure, 4>> measures;
  std::vector<int> last;  // measurements run one after another, never overlapping
  auto after = [&](std::vector<int> ops) {
    last = ops;
    return ops;
  };
  for (const auto& p : pairs) {
    if (p.a == p.b) throw InputError("platform bench: pair " + p.a + " - " + p.b + " is one GPU");
    std::array<Measure, 4> m;
    m[0] = {after({g.transfer(p.a, p.b, bytes, StreamClass::kComm, last)}), bytes};
    int there = g.transfer(p.a, p.b, bytes, StreamClass::kComm, last);
    int back = g.transfer(p.b, p.a, bytes, StreamClass::kComm, last);
    m[1] = {after({there, back}), 2 * bytes};
    if (!p.host.empty()) {
      m[2] = {after({g.transfer(p.host, p.a, bytes, StreamClass::kCopyH2D, last)}), bytes};
      m[3] = {after({g.transfer(p.a, p.host, bytes, StreamClass::kCopyD2H, last)}), bytes};
    }
    measures.push_back(m);
  }
  ReplayOptions options;
  options.record_timeline = true;
  RunResult r = replay_isolated(platform, g.graph(), options);
  std::vector<BenchColumn> out;
  for (size_t i = 0; i < pairs.size(); ++i) {
    const auto& m = measures[i];
    out.push_back({pairs[i], rate(r, m[0]), rate(r, m[1]), rate(r, m[2]), rate(r, m[3])});
  }
  return out;
}

std::string format_bench_table(const std::vector<BenchColumn>& columns) {
  std::vector<std::vector<std::string>> rows = {{"Scenario (MB/s)"},      {"GPU to GPU uni-direct"},
                                                {"GPU to GPU bi-direct"}, {"Host to GPU"},
                                                {"GPU to Host"},          {"  pair"}};
  for (const auto& c : columns) {
    rows[0].push_back(c.pair.label);
    rows[1].push_back(mbps(c.uni));
    rows[2].push_back(mbps(c.bi));
    rows[3].push_back(mbps(c.host_to_gpu));
    rows[4].push_back(mbps(c.gpu_to_host));
    rows[5].push_back(c.pair.a + ":" + c.pair.b);
  }
  // Pairs named on the command line are their own titles: no need to say them twice.
  bool titled = false;
  for (const auto& c : columns) titled = titled || c.pair.label != c.pair.a + ":" + c.pair.b;
  if (!titled) rows.pop_back();
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& row : rows)
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  std::ostringstream o;
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) {
      std::string cell = row[i];
      cell.resize(width[i], ' ');
      o << (i ? "  " : "") << cell;
    }
    o << "\n";
  }
  return o.str();
}

}  // namespace orrery
