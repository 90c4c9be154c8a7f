#include "common/size_guard.h"

#include <cstdio>

#include "common/errors.h"
#include "common/input_limits.h"

namespace orrery {
namespace {

std::string gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g GiB", bytes / (1024.0 * 1024 * 1024));
  return buf;
}

}  // namespace

std::string approximate_count(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, v < 1e6 ? "%.0f" : "%.3g", v);
  return buf;
}

SizeEstimate& SizeEstimate::operator+=(const SizeEstimate& o) {
  ops += o.ops;
  activities += o.activities;
  memory_bytes += o.memory_bytes;
  if (!o.basis.empty()) basis += (basis.empty() ? "" : "; ") + o.basis;
  return *this;
}

void check_size(const SizeEstimate& e, const std::string& origin, const std::string& what) {
  const RunLimits& lim = run_limits();
  auto refuse = [&](const std::string& amount, const std::string& limit, const char* flag) {
    throw InputError(origin + ": " + what + " would need about " + amount + " (" + e.basis +
                     "), over the limit of " + limit + "; lift it with " + flag +
                     " or --no-size-limit");
  };
  if (!lim.size_limits) {
    // Op indices are 32-bit: this limit holds even with --no-size-limit.
    constexpr double kMaxIndexedOps = 2147483647.0;
    if (!(e.ops <= kMaxIndexedOps))
      throw InputError(origin + ": " + what + " would need about " + approximate_count(e.ops) + " ops (" +
                       e.basis + "), more than the 2^31 - 1 ops a graph can index");
    return;
  }
  if (!(e.ops <= lim.max_ops))
    refuse(approximate_count(e.ops) + " ops", approximate_count(lim.max_ops) + " ops", "--max-ops N");
  if (!(e.activities <= lim.max_activities))
    refuse(approximate_count(e.activities) + " simulated activities (ops and flows)",
           approximate_count(lim.max_activities) + " activities", "--max-flows N");
  if (!(e.memory_bytes <= lim.max_memory_bytes))
    refuse(gib(e.memory_bytes) + " of memory", gib(lim.max_memory_bytes), "--max-memory SIZE");
}

}  // namespace orrery
