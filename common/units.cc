#include "common/units.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

namespace orrery {
namespace {

// Splits "25 Gbps" into 25 and "Gbps"; false if there is no leading number.
bool split(const std::string& text, double* value, std::string* unit) {
  const char* s = text.c_str();
  char* end = nullptr;
  *value = std::strtod(s, &end);
  if (end == s) return false;
  while (*end && std::isspace(static_cast<unsigned char>(*end))) ++end;
  *unit = end;
  while (!unit->empty() && std::isspace(static_cast<unsigned char>(unit->back()))) unit->pop_back();
  return std::isfinite(*value);
}

bool scaled(const std::string& text, const std::vector<std::pair<const char*, double>>& table,
            double* out) {
  double v;
  std::string unit;
  if (!split(text, &v, &unit)) return false;
  if (unit.empty()) {
    *out = v;
    return true;
  }
  for (const auto& [name, factor] : table)
    if (unit == name) {
      *out = v * factor;
      return true;
    }
  return false;
}

std::string format_scaled(double v, const std::vector<std::pair<const char*, double>>& table) {
  char buf[64];
  for (const auto& [name, factor] : table)
    if (std::fabs(v) >= factor || factor == table.back().second) {
      std::snprintf(buf, sizeof buf, "%.4g %s", v / factor, name);
      return buf;
    }
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

}  // namespace

bool parse_bandwidth(const std::string& text, double* out) {
  static const std::vector<std::pair<const char*, double>> t = {
      {"bps", 1.0 / 8},   {"Kbps", 1e3 / 8}, {"Mbps", 1e6 / 8}, {"Gbps", 1e9 / 8},
      {"Tbps", 1e12 / 8}, {"Gb/s", 1e9 / 8}, {"Mb/s", 1e6 / 8}, {"Bps", 1},
      {"KBps", 1e3},      {"MBps", 1e6},     {"GBps", 1e9},     {"TBps", 1e12},
      {"B/s", 1},         {"KB/s", 1e3},     {"MB/s", 1e6},     {"GB/s", 1e9},
      {"TB/s", 1e12}};
  return scaled(text, t, out);
}

bool parse_time(const std::string& text, double* out) {
  static const std::vector<std::pair<const char*, double>> t = {
      {"s", 1},     {"ms", 1e-3}, {"us", 1e-6}, {"µs", 1e-6},
      {"ns", 1e-9}, {"min", 60},  {"h", 3600},  {"d", 86400}};
  return scaled(text, t, out);
}

bool parse_power(const std::string& text, double* out) {
  static const std::vector<std::pair<const char*, double>> t = {{"W", 1}, {"kW", 1e3}, {"MW", 1e6}};
  return scaled(text, t, out);
}

bool parse_size(const std::string& text, double* out) {
  static const std::vector<std::pair<const char*, double>> t = {
      {"B", 1},           {"KB", 1e3},           {"MB", 1e6},
      {"GB", 1e9},        {"TB", 1e12},          {"KiB", 1024.0},
      {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0}};
  return scaled(text, t, out);
}

bool parse_flops(const std::string& text, double* out) {
  static const std::vector<std::pair<const char*, double>> t = {
      {"flops", 1},      {"Kflops", 1e3},  {"Mflops", 1e6},  {"Gflops", 1e9},
      {"Tflops", 1e12},  {"Pflops", 1e15}, {"GFLOP/s", 1e9}, {"TFLOP/s", 1e12},
      {"PFLOP/s", 1e15}, {"GF", 1e9},      {"TF", 1e12},     {"f", 1}};
  return scaled(text, t, out);
}

bool parse_frequency(const std::string& text, double* out) {
  static const std::vector<std::pair<const char*, double>> t = {
      {"Hz", 1}, {"kHz", 1e3}, {"MHz", 1e6}, {"GHz", 1e9}};
  return scaled(text, t, out);
}

std::string format_bandwidth(double v) {
  return format_scaled(v,
                       {{"TB/s", 1e12}, {"GB/s", 1e9}, {"MB/s", 1e6}, {"KB/s", 1e3}, {"B/s", 1}});
}

std::string format_time(double v) {
  return format_scaled(v, {{"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}});
}

std::string format_size(double v) {
  return format_scaled(v, {{"TiB", 1099511627776.0},
                           {"GiB", 1073741824.0},
                           {"MiB", 1048576.0},
                           {"KiB", 1024.0},
                           {"B", 1}});
}

std::string format_grouped(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", v);
  std::string s = buf;
  const int first = s[0] == '-' ? 1 : 0;  // the sign takes no separator after it
  for (int i = static_cast<int>(s.size()) - 3; i > first; i -= 3) s.insert(i, ",");
  return s;
}

std::string format_exact(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

}  // namespace orrery
