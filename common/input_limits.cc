#include "common/input_limits.h"

#include <cstdio>
#include <utility>
#include <vector>

namespace orrery {
namespace {

using Units = std::vector<std::pair<const char*, double>>;

// Decimal units that common/units.h parses back, so a user can paste a bound into a file.
const Units& units_of(Quantity q) {
  static const Units bandwidth = {
      {"TB/s", 1e12}, {"GB/s", 1e9}, {"MB/s", 1e6}, {"KB/s", 1e3}, {"B/s", 1}};
  static const Units time = {{"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}};
  static const Units size = {{"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"B", 1}};
  static const Units flop_rate = {
      {"PFLOP/s", 1e15}, {"TFLOP/s", 1e12}, {"GFLOP/s", 1e9}, {"flops", 1}};
  static const Units frequency = {{"GHz", 1e9}, {"MHz", 1e6}, {"kHz", 1e3}, {"Hz", 1}};
  static const Units power = {{"kW", 1e3}, {"W", 1}};
  static const Units length = {{"nm", 1}};
  static const Units none = {{"", 1}};
  switch (q) {
    case Quantity::kBandwidth:
      return bandwidth;
    case Quantity::kTime:
      return time;
    case Quantity::kSize:
      return size;
    case Quantity::kFlopRate:
      return flop_rate;
    case Quantity::kFrequency:
      return frequency;
    case Quantity::kPower:
      return power;
    case Quantity::kLength:
      return length;
    default:
      return none;
  }
}

}  // namespace

std::string format_quantity(double v, Quantity q) {
  const Units& units = units_of(q);
  // The largest unit that leaves a value >= 1; far-out values (1e300, 1e-300) keep the base
  // unit so the exponent shows how far off they are.
  std::pair<const char*, double> unit = units.back();
  for (const auto& u : units)
    if (u.second == 1) unit = u;
  if (std::isfinite(v) && v != 0 && std::fabs(v) < 1e21 && std::fabs(v) > 1e-12)
    for (const auto& u : units)
      if (std::fabs(v) >= u.second) {
        unit = u;
        break;
      }
  char buf[64];
  // Whole seconds up to years read better than 2.592e+06 s.
  const bool seconds = q == Quantity::kTime && unit.second == 1 && std::fabs(v) < 1e12;
  // Counts print whole: "1000000000 GPUs" is what the user typed.
  const bool whole = q == Quantity::kCount && std::fabs(v) < 1e15 && v == std::floor(v);
  std::snprintf(buf, sizeof buf, whole ? "%.0f" : seconds ? "%.10g" : "%.6g", v / unit.second);
  std::string out = buf;
  if (*unit.first) out += std::string(" ") + unit.first;
  return out;
}

std::string Range::text() const {
  const std::string a = format_quantity(lo, quantity), b = format_quantity(hi, quantity);
  if (open_lo) return "above " + a + (open_hi ? " and below " : " and at most ") + b;
  if (open_hi) return "at least " + a + " and below " + b;
  return "between " + a + " and " + b;
}

std::string out_of_range(double v, const Range& r) {
  return format_quantity(v, r.quantity) + " is outside the accepted range, " + r.text();
}

RunLimits& run_limits() {
  static RunLimits limits;
  return limits;
}

}  // namespace orrery
