// Size guards: cheap estimates of the ops, SimGrid activities and memory a run needs, checked
// against the process's RunLimits (common/input_limits.h) before the platform, the graph or the
// collectives' flows are built, so `gpus: 1000000000` or a batch of 10^12 is refused at once
// with the estimate and the limit instead of running until memory or time runs out.
//
// Every estimate takes plain numbers and works in doubles, so products of counts cannot
// overflow; each is an upper bound of the order of magnitude, not a prediction.
#pragma once

#include <string>

namespace orrery {

struct SizeEstimate {
  double ops = 0;           // execution-graph ops
  double activities = 0;    // SimGrid activities the replay starts (ops and collective flows)
  double memory_bytes = 0;  // peak memory of this process, roughly
  std::string basis;        // how it was counted, for the message ("4096 GPUs x 320 ops ...")

  SizeEstimate& operator+=(const SizeEstimate& o);
};

// What one item costs in memory, from the graph to the result file (measured on the
// resnet50-1024 bench: 287 MiB for 350 k ops, platform and SimGrid included).
inline constexpr double kBytesPerOp = 400;
inline constexpr double kBytesPerDep = 24;     // the dep, the successor list, the check's DAG
inline constexpr double kBytesPerHost = 4096;  // topology entry and SimGrid host
inline constexpr double kBytesPerLink = 2048;  // topology entry and SimGrid link
inline constexpr double kBytesPerRoute = 512;  // an explicit route of a few hops, both sides

// A count for these messages: all digits below a million, three significant ones above
// ("4096", "3.2e+09").
std::string approximate_count(double v);

// Throws InputError when `e` passes a limit of run_limits() (none with --no-size-limit):
//   "<origin>: <what> would need about 3.2e+09 ops (<basis>), over the limit of 2e+07 ops;
//    lift it with --max-ops N or --no-size-limit"
// With --no-size-limit only one limit remains: op indices are 32-bit, so 2^31 - 1 ops.
void check_size(const SizeEstimate& e, const std::string& origin, const std::string& what);

}  // namespace orrery
