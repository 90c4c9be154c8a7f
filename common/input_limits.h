// The accepted range of every magnitude Orrery reads (bandwidths, latencies, sizes, op costs,
// counts), in one place, and the process-wide run limits (simulated time, graph size) that
// command-line flags may lift.
//
// The ranges are physical plausibility with wide margins, not tuning: a value outside them is a
// typo or a unit mistake (`bandwidth: 1e-300Bps`, an op of 1e300 seconds), and letting it through
// makes the simulation spin for hours or produce inf/NaN. Every reader and checker tests its
// numbers against these constants, so the ranges printed in messages and in docs/platforms.md
// ("Accepted ranges") and docs/user-guide.md ("Limits") all come from here.
#pragma once

#include <cmath>
#include <cstddef>
#include <string>

namespace orrery {

enum class Quantity {
  kBandwidth,
  kTime,
  kSize,
  kFlopCount,
  kFlopRate,
  kFrequency,
  kPower,
  kLength,
  kCount,
  kNumber
};

// An interval of one quantity, [lo, hi] unless an end is open; NaN and infinities are never
// inside.
struct Range {
  double lo;
  double hi;
  Quantity quantity;
  bool open_lo = false;  // lo itself is outside: (0, 1] for a fraction that must be positive
  bool open_hi = false;

  bool contains(double v) const {
    return std::isfinite(v) && (open_lo ? v > lo : v >= lo) && (open_hi ? v < hi : v <= hi);
  }
  // "between 1 KB/s and 100000 TB/s" ("above 0 and at most 1" with an open end), in units
  // common/units.h parses back.
  std::string text() const;
};

// Formats `v` in the quantity's unit ("2.5 GB/s", "nan", "1e+300 s").
std::string format_quantity(double v, Quantity q);
// "1e-300 B/s is outside the accepted range, between 1 KB/s and 100000 TB/s": the tail of an
// error message, after the key or field it is about.
std::string out_of_range(double v, const Range& r);

namespace limits {

// Links, NICs, memory and interconnect rates, bytes/s: a 1980s modem to far beyond any link
// or HBM stack built (HBM3e is about 5 TB/s).
inline constexpr Range kBandwidth{1e3, 1e17, Quantity::kBandwidth};
// Link and switch latencies, seconds: up to an hour (a satellite hop is 0.3 s).
inline constexpr Range kLatency{0, 3600, Quantity::kTime};
// One op's fixed duration, seconds: up to a day (a training step of a day is not one op).
inline constexpr Range kOpDuration{0, 86400, Quantity::kTime};
// One op's, transfer's or collective's bytes, and a tensor's: up to 1 PB.
inline constexpr Range kBytes{0, 1e15, Quantity::kSize};
// One op's floating-point operations: 1e21 is a day at 10 PFLOP/s.
inline constexpr Range kOpFlops{0, 1e21, Quantity::kFlopCount};
// Compute rate of one device or host core, flop/s: 1 MFLOP/s to 1 EFLOP/s.
inline constexpr Range kFlopRate{1e6, 1e18, Quantity::kFlopRate};
// GPUs (or devices) in one platform or graph, and servers in a cluster.
inline constexpr Range kGpus{1, 1e6, Quantity::kCount};
inline constexpr Range kServers{1, 1e6, Quantity::kCount};
// GPUs in one server, one PCIe tree with every host pair routed explicitly (route building
// grows with the cube of this: 256 GPUs take seconds, 1,024 minutes).
inline constexpr Range kGpusPerServer{1, 256, Quantity::kCount};
// Per-server counts: CPU sockets, PCIe switches per socket, NICs (one per GPU in an NVL72
// rack of 72), NVLinks per GPU.
inline constexpr Range kPerServerParts{0, 256, Quantity::kCount};
// Streaming multiprocessors (or cores) of one device.
inline constexpr Range kSms{1, 1e5, Quantity::kCount};
// Pipelining chunks of one collective: each chunk of each step is one flow.
inline constexpr Range kCollectiveChunks{1, 65536, Quantity::kCount};
// Samples per replica per step (the zoo's `batch`): keeps tensor sizes far from int64 overflow.
inline constexpr Range kBatch{1, 1e7, Quantity::kCount};
// Fat-tree oversubscription (leaf downlink / uplink capacity).
inline constexpr Range kOversubscription{1, 1e3, Quantity::kNumber};

// Plain factors and fractions read from scenarios, presets and device files.
// Shares of a peak that a link, a kernel or a collective reaches.
inline constexpr Range kEfficiency{0, 1, Quantity::kNumber, true};
// Shares of a transfer lost to protocol headers.
inline constexpr Range kOverhead{0, 1, Quantity::kNumber, false, true};
// A GPU's speed relative to its kind (stragglers, throttling, a faster bin).
inline constexpr Range kSpeedFactor{0, 10, Quantity::kNumber, true};
// The standard deviation of drawn speed factors.
inline constexpr Range kSpeedStdev{0, 1, Quantity::kNumber};
// A MoE router's capacity factor (tokens an expert takes over the even share).
inline constexpr Range kCapacityFactor{0, 64, Quantity::kNumber, true};
// Relative weights (job types of a mix), and the share of GPUs a mix keeps busy.
inline constexpr Range kWeight{0, 1e9, Quantity::kNumber};
inline constexpr Range kLoad{0, 1, Quantity::kNumber, true};
// Prices in any currency, per item or per hour.
inline constexpr Range kPrice{0, 1e12, Quantity::kNumber};
// Gradient buckets and other chunkings of a transfer, bytes: above nothing, up to 1 PB.
inline constexpr Range kBucketBytes{0, 1e15, Quantity::kSize, true};
// When a job starts, seconds after the run does: up to the default simulated-time limit.
inline constexpr Range kStartTime{0, 30 * 86400.0, Quantity::kTime};
// A device's board power, watts, and its process node, nm.
inline constexpr Range kPowerWatts{1, 1e5, Quantity::kPower};
inline constexpr Range kProcessNm{1, 100, Quantity::kLength};
// CUDA compute capabilities run from 1.0 (Tesla) to 12.x (Blackwell workstation parts).
inline constexpr Range kComputeCapability{1, 20, Quantity::kNumber};
// A device's clock, Hz.
inline constexpr Range kClockHz{1e6, 1e11, Quantity::kFrequency};

// Simulated time after which the replay stops with an error (--max-simulated-time).
inline constexpr double kDefaultMaxSimulatedSeconds = 30 * 86400.0;

// Size guards (engine/size_estimate.h), sized for a 24 GiB machine and runs of minutes:
// the replay moves about 1 M activities/s at best (docs/design.md) and far fewer with many
// flows in flight; an op costs about 400 bytes from graph to result file.
inline constexpr double kDefaultMaxOps = 2e7;
inline constexpr double kDefaultMaxActivities = 1e8;
inline constexpr double kDefaultMaxMemoryBytes = 16.0 * 1024 * 1024 * 1024;
// Ops of one zoo replica (the largest zoo models have tens of thousands).
inline constexpr size_t kMaxReplicaOps = 2000000;
// Points of one sweep: each is a scenario text hashed before anything runs (about 100 us), so a
// million points is minutes of silence first, and hours of simulation after.
inline constexpr double kDefaultMaxPoints = 100000;

}  // namespace limits

// Limits of this process, set once from the command line (--max-simulated-time,
// --no-size-limit, --max-ops, --max-flows, --max-memory, --max-points) before any scenario is
// read. Sweep
// points run in forked children and inherit them.
struct RunLimits {
  double max_simulated_seconds = limits::kDefaultMaxSimulatedSeconds;
  bool size_limits = true;  // false: --no-size-limit
  double max_ops = limits::kDefaultMaxOps;
  double max_activities = limits::kDefaultMaxActivities;
  double max_memory_bytes = limits::kDefaultMaxMemoryBytes;
  double max_points = limits::kDefaultMaxPoints;  // of a sweep or plan (--max-points)
};
RunLimits& run_limits();

}  // namespace orrery
