// nccl-tests for a platform you do not own (`orrery bench collective`): one collective per size,
// one after the other on the same ranks, replayed on the platform; each row reports what
// nccl-tests prints (size, count, type, redop, root, time, algbw, busbw) and the plan the tuner
// chose. A measured nccl-tests log can be read back for comparison.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/execution_graph.h"
#include "engine/run_result.h"
#include "platforms/simgrid_platform.h"

namespace orrery {

struct CollectiveBenchOptions {
  CollectiveType type = CollectiveType::kAllReduce;
  CollectiveAlgo algo = CollectiveAlgo::kAuto;
  CollectiveProtocol protocol = CollectiveProtocol::kAuto;
  bool analytical = false;
  double min_bytes = 8;
  double max_bytes = 8.0 * (1 << 30);
  double factor = 2;  // nccl-tests -f: sizes grow by this factor
  std::string datatype = "float";
  int root = 0;  // Broadcast / Reduce
  // Seconds the caller's loop adds to every call, beyond NCCL's launch: 0 for nccl-tests, whose
  // loop enqueues the next call while this one runs; a PyTorch loop that waits for each call
  // pays its dispatch (kPytorchCallOverhead).
  double host_overhead = 0.0;
};

// A torch.distributed all_reduce on NCCL, synchronized after every call, against nccl-tests on
// the same 8 x H200 (torch 2.14, NCCL 2.30.7): 36.6 against 15.2 us at 8 B, 41.7 against 20.9 at
// 32 KiB, 50.9 against 27.7 at 1 MiB (Stas Bekman, Machine Learning Engineering Open Book,
// network benchmarks chapter): about 21 us of PyTorch's per-call host work (the 8 B figure).
inline constexpr double kPytorchCallOverhead = 21.4e-6;

// Bytes per element of an nccl-tests data type name (int8, uint8, half, bfloat16, float,
// int32, double, ...); 0 for an unknown name.
int datatype_size(const std::string& datatype);

// The sizes nccl-tests runs from min to max (each rounded down to a whole number of elements
// per rank, and at least one element per rank).
std::vector<double> bench_sizes(const CollectiveBenchOptions& opt, int ranks);

// nccl-tests' bus-bandwidth factor: 2(n-1)/n for all-reduce, (n-1)/n for all-gather,
// reduce-scatter and all-to-all, 1 for broadcast, reduce and send/recv.
double busbw_factor(CollectiveType type, int ranks);

struct CollectiveBenchRow {
  double bytes = 0.0;  // nccl-tests' size column
  int64_t count = 0;   // elements
  double seconds = 0.0;
  double algbw = 0.0;  // bytes/s
  double busbw = 0.0;  // bytes/s
  CollectiveChoice choice;
};

struct BenchRank {
  std::string host;  // SimGrid host of the GPU
  std::string node;  // the server it sits in
};

struct CollectiveBenchStats {
  int64_t activities = 0;     // SimGrid activities the replay started
  double wall_seconds = 0.0;  // the replay's own time
};

// Replays the sweep in one child process (replay_isolated). Throws InputError for options that
// cannot run (fewer than two ranks, sizes out of order, an unknown data type).
std::vector<CollectiveBenchRow> run_collective_bench(const PlatformSource& platform,
                                                     const std::vector<BenchRank>& ranks,
                                                     const CollectiveBenchOptions& opt,
                                                     CollectiveBenchStats* stats = nullptr);

// nccl-tests' table: the header lines and one row per size, plus the algorithm, protocol and
// channel count the tuner chose; the footer gives the average bus bandwidth.
std::string format_collective_bench(const std::vector<CollectiveBenchRow>& rows,
                                    const CollectiveBenchOptions& opt, int ranks);

// One row of a measured nccl-tests log: size, and the out-of-place time and bus bandwidth.
struct MeasuredRow {
  double bytes = 0.0;
  double seconds = 0.0;
  double busbw = 0.0;  // bytes/s
};
// Reads the rows of an nccl-tests output (comment lines start with '#'; rows are size, count,
// type, redop, [root,] time, algbw, busbw, #wrong, ...). Throws InputError naming the file and
// line of a row it cannot read, or when the file holds no rows.
std::vector<MeasuredRow> read_nccl_tests_log(const std::string& path);

// A predicted size next to its measurement. The error is the predicted bus bandwidth over the
// measured one, minus one (= measured time over predicted time, minus one): + is too fast, as
// every validation table of Orrery gives it.
struct BenchComparison {
  const CollectiveBenchRow* predicted = nullptr;
  MeasuredRow measured;
  double error = 0.0;
};
// Every measured size that was predicted, in the log's order.
std::vector<BenchComparison> compare_bench(const std::vector<CollectiveBenchRow>& predicted,
                                           const std::vector<MeasuredRow>& measured);

// Predicted next to measured for every size both have: time and busbw each, and the error in
// percent; then the median absolute and the median signed error.
std::string format_bench_comparison(const std::vector<CollectiveBenchRow>& predicted,
                                    const std::vector<MeasuredRow>& measured);

// The rows for programs (nccl-tests prints only its table): CSV with a header line, or one JSON
// object {"collective", "ranks", "datatype", "rows": [...]}; with `measured` (may be null),
// each compared row also carries the measured time and busbw and the error (+ too fast).
std::string collective_bench_csv(const std::vector<CollectiveBenchRow>& rows,
                                 const CollectiveBenchOptions& opt,
                                 const std::vector<MeasuredRow>* measured = nullptr);
std::string collective_bench_json(const std::vector<CollectiveBenchRow>& rows,
                                  const CollectiveBenchOptions& opt, int ranks,
                                  const std::vector<MeasuredRow>* measured = nullptr);

}  // namespace orrery
