#include "engine/collective_bench.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "common/csv.h"
#include "common/errors.h"
#include "common/input_file.h"
#include "common/quantile.h"
#include "common/units.h"
#include "engine/replay.h"

namespace orrery {
namespace {

bool is_gather_like(CollectiveType t) {
  return t == CollectiveType::kAllGather || t == CollectiveType::kReduceScatter ||
         t == CollectiveType::kAllToAll;
}

// nccl-tests' names: all_reduce_perf prints "sum", all_gather "none", broadcast "none".
const char* redop(CollectiveType t) {
  switch (t) {
    case CollectiveType::kAllReduce:
    case CollectiveType::kReduceScatter:
    case CollectiveType::kReduce:
      return "sum";
    default:
      return "none";
  }
}

bool rooted(CollectiveType t) {
  return t == CollectiveType::kBroadcast || t == CollectiveType::kReduce;
}

std::string format_row_bw(double bytes_per_s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", bytes_per_s / 1e9);
  return buf;
}

}  // namespace

int datatype_size(const std::string& d) {
  static const std::map<std::string, int> sizes = {
      {"int8", 1},     {"uint8", 1},   {"char", 1},   {"half", 2},   {"float16", 2},
      {"bfloat16", 2}, {"int32", 4},   {"uint32", 4}, {"int", 4},    {"float", 4},
      {"float32", 4},  {"int64", 8},   {"uint64", 8}, {"double", 8}, {"float64", 8},
      {"fp8_e4m3", 1}, {"fp8_e5m2", 1}};
  auto it = sizes.find(d);
  return it == sizes.end() ? 0 : it->second;
}

std::vector<double> bench_sizes(const CollectiveBenchOptions& opt, int ranks) {
  const double elem = datatype_size(opt.datatype);
  // All-gather, reduce-scatter and all-to-all split the buffer into one block per rank.
  const double unit = is_gather_like(opt.type) ? elem * ranks : elem;
  std::vector<double> out;
  for (double s = opt.min_bytes; s <= opt.max_bytes * (1 + 1e-12); s *= opt.factor) {
    double size = std::max(unit, std::floor(s / unit) * unit);
    if (out.empty() || size > out.back()) out.push_back(size);
    if (opt.factor <= 1) break;
  }
  return out;
}

double busbw_factor(CollectiveType type, int n) {
  switch (type) {
    case CollectiveType::kAllReduce:
      return 2.0 * (n - 1) / n;
    case CollectiveType::kAllGather:
    case CollectiveType::kReduceScatter:
    case CollectiveType::kAllToAll:
      return static_cast<double>(n - 1) / n;
    default:
      return 1.0;
  }
}

std::vector<CollectiveBenchRow> run_collective_bench(const PlatformSource& platform,
                                                     const std::vector<BenchRank>& ranks,
                                                     const CollectiveBenchOptions& opt,
                                                     CollectiveBenchStats* stats) {
  const int n = static_cast<int>(ranks.size());
  if (n < 2)
    throw InputError("a collective bench needs at least two GPUs, got " + std::to_string(n));
  if (datatype_size(opt.datatype) == 0)
    throw InputError("unknown data type \"" + opt.datatype +
                     "\" (expected int8, uint8, half, bfloat16, float, int32, int64, double...)");
  if (!(opt.min_bytes > 0) || !(opt.max_bytes >= opt.min_bytes))
    throw InputError("the sizes must satisfy 0 < min <= max");
  if (!(opt.factor > 1)) throw InputError("the size factor must be greater than 1");
  // A factor just above 1 makes a size per step: millions of collectives and gigabytes before
  // the first result. Refused with the count, before any is built.
  constexpr double kMaxSizes = 10000;
  const double steps =
      std::floor(std::log(opt.max_bytes / opt.min_bytes) / std::log(opt.factor)) + 1;
  if (!(steps <= kMaxSizes))
    throw InputError("the size factor " + format_exact(opt.factor) + " makes " +
                     std::to_string(static_cast<long long>(std::min(steps, 1e15))) +
                     " sizes from the minimum to the maximum; at most " +
                     std::to_string(static_cast<int>(kMaxSizes)) +
                     " (use a larger factor, or a narrower range)");
  if (rooted(opt.type) && (opt.root < 0 || opt.root >= n))
    throw InputError("root " + std::to_string(opt.root) + " is not a rank of the " +
                     std::to_string(n) + " GPUs");

  ExecutionGraph g;
  for (const auto& r : ranks) g.devices.push_back({r.host, r.host, r.host, r.node, {}});
  const auto sizes = bench_sizes(opt, n);
  std::vector<int> order(n);
  for (int i = 0; i < n; ++i) order[i] = i;
  int prev = -1;
  for (size_t k = 0; k < sizes.size(); ++k) {
    Collective c;
    c.type = opt.type;
    c.algo = opt.algo;
    c.protocol = opt.protocol;
    c.analytical = opt.analytical;
    c.ranks = order;
    c.root = opt.root;
    // nccl-tests' all-to-all size counts the block each rank keeps for itself; Orrery's
    // collective counts what crosses to the others.
    c.bytes = opt.type == CollectiveType::kAllToAll ? sizes[k] * (n - 1) / n : sizes[k];
    prev = append_collective(g, "size" + std::to_string(k), std::move(c), "comm",
                             prev < 0 ? std::vector<int>{} : std::vector<int>{prev});
  }
  ReplayOptions ro;
  ro.record_timeline = true;
  RunResult r = replay_isolated(platform, g, ro);
  if (stats) *stats = {r.activities, r.wall_seconds};

  std::vector<CollectiveBenchRow> rows;
  const double elem = datatype_size(opt.datatype);
  for (size_t k = 0; k < sizes.size(); ++k) {
    CollectiveBenchRow row;
    row.bytes = sizes[k];
    row.count = static_cast<int64_t>(std::llround(sizes[k] / elem));
    row.seconds = r.timeline[k].end - r.timeline[k].start + opt.host_overhead;
    row.algbw = row.seconds > 0 ? row.bytes / row.seconds : 0.0;
    row.busbw = row.algbw * busbw_factor(opt.type, n);
    if (k < r.collectives.size()) row.choice = r.collectives[k];
    rows.push_back(row);
  }
  return rows;
}

std::string format_collective_bench(const std::vector<CollectiveBenchRow>& rows,
                                    const CollectiveBenchOptions& opt, int ranks) {
  std::ostringstream out;
  char line[256];
  out << "#  " << collective_type_name(opt.type) << " on " << ranks << " GPUs, "
      << (opt.analytical ? "analytical" : "flow") << " mode, algorithm "
      << collective_algo_name(opt.algo) << ", protocol " << collective_protocol_name(opt.protocol)
      << (opt.host_overhead > 0 ? ", each call with the caller's host work" : "") << "\n#\n";
  std::snprintf(line, sizeof line, "#%11s %13s %9s %7s %6s %10s %8s %8s %7s  %-12s %6s %4s\n",
                "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong",
                "algorithm", "proto", "ch");
  out << line;
  std::snprintf(line, sizeof line, "#%11s %13s %9s %7s %6s %10s %8s %8s %7s\n", "(B)", "(elements)",
                "", "", "", "(us)", "(GB/s)", "(GB/s)", "");
  out << line;
  double sum = 0;
  for (const auto& r : rows) {
    std::snprintf(line, sizeof line,
                  "%12.0f %13lld %9s %7s %6d %10.2f %8s %8s %7s  %-12s %6s %4d\n", r.bytes,
                  static_cast<long long>(r.count), opt.datatype.c_str(), redop(opt.type),
                  rooted(opt.type) ? opt.root : -1, r.seconds * 1e6, format_row_bw(r.algbw).c_str(),
                  format_row_bw(r.busbw).c_str(), "N/A", collective_algo_name(r.choice.algo),
                  collective_protocol_name(r.choice.protocol), r.choice.channels);
    out << line;
    sum += r.busbw;
  }
  std::snprintf(line, sizeof line, "# Avg bus bandwidth    : %g \n#\n",
                rows.empty() ? 0.0 : sum / rows.size() / 1e9);
  out << line;
  return out.str();
}

namespace {

// The comparison row of a predicted row, or null.
const BenchComparison* find_compared(const std::vector<BenchComparison>& c,
                                     const CollectiveBenchRow& r) {
  for (const auto& b : c)
    if (b.predicted == &r) return &b;
  return nullptr;
}

}  // namespace

std::string collective_bench_csv(const std::vector<CollectiveBenchRow>& rows,
                                 const CollectiveBenchOptions& opt,
                                 const std::vector<MeasuredRow>* measured) {
  const std::vector<BenchComparison> compared =
      measured ? compare_bench(rows, *measured) : std::vector<BenchComparison>{};
  std::ostringstream out;
  out << "size_bytes,count,type,redop,root,time_us,algbw_GBps,busbw_GBps,algorithm,protocol,"
         "channels"
      << (measured ? ",measured_time_us,measured_busbw_GBps,error" : "") << "\n";
  char line[320];
  for (const auto& r : rows) {
    std::snprintf(line, sizeof line, "%.0f,%lld,%s,%s,%d,%.6g,%.6g,%.6g,%s,%s,%d", r.bytes,
                  static_cast<long long>(r.count), opt.datatype.c_str(), redop(opt.type),
                  rooted(opt.type) ? opt.root : -1, r.seconds * 1e6, r.algbw / 1e9, r.busbw / 1e9,
                  collective_algo_name(r.choice.algo), collective_protocol_name(r.choice.protocol),
                  r.choice.channels);
    out << line;
    if (measured) {
      if (const BenchComparison* c = find_compared(compared, r)) {
        std::snprintf(line, sizeof line, ",%.6g,%.6g,%.6g", c->measured.seconds * 1e6,
                      c->measured.busbw / 1e9, c->error);
        out << line;
      } else {
        out << ",,,";
      }
    }
    out << "\n";
  }
  return out.str();
}

std::string collective_bench_json(const std::vector<CollectiveBenchRow>& rows,
                                  const CollectiveBenchOptions& opt, int ranks,
                                  const std::vector<MeasuredRow>* measured) {
  const std::vector<BenchComparison> compared =
      measured ? compare_bench(rows, *measured) : std::vector<BenchComparison>{};
  std::ostringstream out;
  char line[512];
  std::snprintf(line, sizeof line,
                "{\"collective\": \"%s\", \"ranks\": %d, \"datatype\": \"%s\", \"redop\": "
                "\"%s\", \"root\": %d, \"rows\": [",
                collective_type_name(opt.type), ranks, opt.datatype.c_str(), redop(opt.type),
                rooted(opt.type) ? opt.root : -1);
  out << line;
  for (size_t i = 0; i < rows.size(); ++i) {
    const CollectiveBenchRow& r = rows[i];
    std::snprintf(line, sizeof line,
                  "%s\n  {\"size_bytes\": %.0f, \"count\": %lld, \"time_us\": %.6g, "
                  "\"algbw_GBps\": %.6g, \"busbw_GBps\": %.6g, \"algorithm\": \"%s\", "
                  "\"protocol\": \"%s\", \"channels\": %d",
                  i ? "," : "", r.bytes, static_cast<long long>(r.count), r.seconds * 1e6,
                  r.algbw / 1e9, r.busbw / 1e9, collective_algo_name(r.choice.algo),
                  collective_protocol_name(r.choice.protocol), r.choice.channels);
    out << line;
    if (const BenchComparison* c = find_compared(compared, r)) {
      std::snprintf(line, sizeof line,
                    ", \"measured_time_us\": %.6g, \"measured_busbw_GBps\": %.6g, "
                    "\"error\": %.6g",
                    c->measured.seconds * 1e6, c->measured.busbw / 1e9, c->error);
      out << line;
    }
    out << "}";
  }
  out << "\n]}\n";
  return out.str();
}

std::vector<MeasuredRow> read_nccl_tests_log(const std::string& path) {
  const std::string text = read_input_file(path, "nccl-tests log", size_t{64} << 20);
  std::istringstream in(text);
  std::string line;
  std::vector<MeasuredRow> rows;
  int lineno = 0;
  auto number = [](const std::string& s, double* v) {
    char* end = nullptr;
    *v = std::strtod(s.c_str(), &end);
    return end && *end == '\0' && !s.empty() && std::isfinite(*v);
  };
  while (std::getline(in, line)) {
    ++lineno;
    std::istringstream f(line);
    std::vector<std::string> w;
    for (std::string t; f >> t;) w.push_back(t);
    if (w.empty() || w[0][0] == '#') continue;
    double size = 0;
    // Only rows that start with a size and a count are results; banners and NCCL INFO lines
    // are skipped like comments.
    double count = 0;
    if (!number(w[0], &size) || w.size() < 2 || !number(w[1], &count)) continue;
    // size count type redop [root] time algbw busbw #wrong ...: the root column exists since
    // nccl-tests 2.10; a number in the fifth column that is followed by three more numbers is
    // the root.
    size_t t = 4;
    double probe = 0;
    if (w.size() > 8 && number(w[4], &probe) && number(w[5], &probe) && number(w[6], &probe) &&
        number(w[7], &probe) && w[4].find('.') == std::string::npos)
      t = 5;
    double time = 0, busbw = 0;
    if (w.size() < t + 3 || !number(w[t], &time) || !number(w[t + 2], &busbw) || time <= 0)
      throw InputError(path + ":" + std::to_string(lineno) +
                       ": expected an nccl-tests row (size, count, type, redop, [root,] time in "
                       "us, algbw, busbw in GB/s), got \"" +
                       line + "\"");
    rows.push_back({size, time * 1e-6, busbw * 1e9});
  }
  if (rows.empty())
    throw InputError(path +
                     ": no nccl-tests result rows (expected lines of size, count, type, "
                     "redop, root, time, algbw, busbw)");
  return rows;
}

std::vector<BenchComparison> compare_bench(const std::vector<CollectiveBenchRow>& predicted,
                                           const std::vector<MeasuredRow>& measured) {
  std::vector<BenchComparison> out;
  for (const auto& m : measured) {
    auto it = std::find_if(predicted.begin(), predicted.end(), [&](const CollectiveBenchRow& p) {
      return std::fabs(p.bytes - m.bytes) <= 1e-9 * m.bytes;
    });
    if (it == predicted.end()) continue;
    // From the times, not the busbw columns: nccl-tests prints 0.00 GB/s at latency-bound
    // sizes, so its busbw is rounded away there. The same sign either way.
    out.push_back({&*it, m, m.seconds / it->seconds - 1});
  }
  return out;
}

std::string format_bench_comparison(const std::vector<CollectiveBenchRow>& predicted,
                                    const std::vector<MeasuredRow>& measured) {
  std::ostringstream out;
  char line[256];
  std::snprintf(line, sizeof line, "#%11s %12s %12s %10s %10s %8s\n", "size", "time pred",
                "time meas", "busbw pred", "busbw meas", "error");
  out << line;
  std::snprintf(line, sizeof line, "#%11s %12s %12s %10s %10s %8s\n", "(B)", "(us)", "(us)",
                "(GB/s)", "(GB/s)", "(%)");
  out << line;
  const std::vector<BenchComparison> compared = compare_bench(predicted, measured);
  std::vector<double> signed_errors, errors;
  for (const auto& c : compared) {
    const CollectiveBenchRow& p = *c.predicted;
    std::snprintf(line, sizeof line, "%12.0f %12.2f %12.2f %10.2f %10.2f %+8.1f\n",
                  c.measured.bytes, p.seconds * 1e6, c.measured.seconds * 1e6, p.busbw / 1e9,
                  c.measured.busbw / 1e9, 100 * c.error);
    out << line;
    signed_errors.push_back(100 * c.error);
    errors.push_back(100 * std::fabs(c.error));
  }
  if (errors.empty()) {
    out << "# no size of the log was predicted (check --min/--max and the collective)\n";
    return out.str();
  }
  std::snprintf(line, sizeof line,
                "# %zu sizes compared, median |error| %.1f%%, median error %+.1f%%, worst "
                "%.1f%% (error: predicted busbw / measured - 1, + is too fast)\n",
                errors.size(), quantile(errors, 0.5), quantile(signed_errors, 0.5),
                *std::max_element(errors.begin(), errors.end()));
  out << line;
  return out.str();
}

}  // namespace orrery
