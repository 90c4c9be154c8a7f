#include "models/cost_table.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <utility>

#include "common/csv.h"
#include "common/errors.h"
#include "models/tensor_cores.h"
#include "workloads/op_counts.h"
#include "workloads/op_query.h"

namespace orrery {
namespace {

std::string ms(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", seconds * 1e3);
  return buf;
}

// A measured time in milliseconds: NaN for an empty cell; a non-negative finite number, else an
// InputError naming the cell.
double read_latency(const std::string& text, const std::string& where) {
  if (text.empty()) return NAN;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || errno == ERANGE || !std::isfinite(v) || v < 0)
    throw InputError(where +
                     ": latency_ms: expected a non-negative number of milliseconds, got \"" + text +
                     "\"");
  return v;
}

}  // namespace

OpRows read_op_rows(const std::string& csv_text, const std::string& origin,
                    const CostTableOptions& options) {
  OpRows out;
  std::istringstream in(csv_text);
  std::string line;
  std::vector<std::string> header, cells;
  int n = 0;
  std::map<std::string, int> by_name;  // device name a row gives -> index
  auto device = [&](const std::string& name, const std::string& where) {
    auto it = by_name.find(name);
    if (it != by_name.end()) return it->second;
    try {
      out.devices.push_back(device_spec(name));
    } catch (const InputError& e) {
      throw InputError(where + ": device: " + e.what());
    }
    return by_name[name] = static_cast<int>(out.devices.size()) - 1;
  };
  if (!options.device.empty()) device(options.device, origin);
  while (std::getline(in, line)) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string where = origin + ":" + std::to_string(n);
    if (line.empty()) continue;
    if (!split_csv_line(line, &cells)) throw InputError(where + ": unterminated quoted field");
    if (header.empty()) {
      header = cells;
      bool has_op = false, has_device = false;
      for (const auto& h : header) {
        has_op = has_op || h == "op";
        has_device = has_device || h == "device";
      }
      if (!has_op)
        throw InputError(where +
                         ": the header has no \"op\" column (expected op and the shape "
                         "columns of the op, e.g. op,B,M,N,K)");
      if (options.device.empty() && !has_device)
        throw InputError(where + ": no \"device\" column: give the device with --device");
      out.lines.push_back(line);
      continue;
    }
    if (cells.size() != header.size())
      throw InputError(where + ": " + std::to_string(cells.size()) + " fields, the header has " +
                       std::to_string(header.size()));
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < header.size(); ++i) row[header[i]] = cells[i];
    // A row's own dtype wins; an empty cell or no column means the default (--dtype).
    DType dtype = options.dtype;
    bool own = false;
    if (auto d = row.find("dtype"); d != row.end() && !d->second.empty()) {
      if (!parse_dtype(d->second, &dtype))
        throw InputError(where + ": dtype: unknown \"" + d->second + "\" (expected " +
                         dtype_names() + ")");
      own = true;
    }
    double measured = NAN;
    if (auto m = row.find("latency_ms"); m != row.end()) measured = read_latency(m->second, where);
    out.device.push_back(device(options.device.empty() ? row["device"] : options.device, where));
    out.ops.push_back(query_op(row["op"], row, dtype, where));
    out.own_dtype.push_back(own);
    out.lines.push_back(line);
    out.line_numbers.push_back(n);
    out.measured_ms.push_back(measured);
  }
  if (header.empty()) throw InputError(origin + ": empty file (expected a CSV header)");
  return out;
}

ModelOp op_on_device(const ModelOp& op, const DeviceSpec& dev, std::string* why) {
  if (why) why->clear();
  const DType runs_in = fallback_dtype(op.dtype, dev);
  if (runs_in == op.dtype || !has_tensor_core_kernels(op.type)) return op;
  const bool fp8 = op.dtype == DType::kFP8;
  ModelOp out = op;
  out.dtype = runs_in;
  const OpCounts c = count_op(out);
  out.flops = c.flops;
  out.bytes = c.bytes;
  if (why)
    *why = dev.name + (fp8 ? " has no FP8 Tensor Cores (Ada, Hopper and later have them)"
                           : " has no FP4 Tensor Cores (Blackwell and later have them)");
  return out;
}

CostTable price_cost_table(const std::string& csv_text, const std::string& origin,
                           const CostTableOptions& options, const CostModel& cost) {
  const OpRows rows = read_op_rows(csv_text, origin, options);
  CostTable out;
  std::ostringstream csv;
  csv << rows.lines[0] << ",predicted_ms\n";
  // Fallbacks by "priced in bf16: reason", in the order first met: rows and the first line.
  std::vector<std::pair<std::string, std::pair<size_t, int>>> fallbacks;
  std::string why;
  for (size_t i = 0; i < rows.ops.size(); ++i) {
    const DeviceSpec& dev = rows.devices[rows.device[i]];
    const ModelOp op = op_on_device(rows.ops[i], dev, &why);
    if (!why.empty()) {
      const std::string key = std::string("priced in ") + dtype_name(op.dtype) + ": " + why;
      auto it = std::find_if(fallbacks.begin(), fallbacks.end(),
                             [&](const auto& f) { return f.first == key; });
      if (it == fallbacks.end())
        fallbacks.push_back({key, {1, rows.line_numbers[i]}});
      else
        ++it->second.first;
    }
    const double t = cost.estimate(op, dev).seconds;
    csv << rows.lines[i + 1] << "," << ms(t) << "\n";
    const double measured = rows.measured_ms[i];
    if (measured > 0) out.relative_errors.push_back(std::fabs(t * 1e3 - measured) / measured);
    if (!rows.own_dtype[i]) ++out.default_dtype_rows;
  }
  for (const auto& [key, count] : fallbacks)
    out.notes.push_back(origin + ": " + std::to_string(count.first) +
                        (count.first == 1 ? " row at line " : " rows from line ") +
                        std::to_string(count.second) + " " + key);
  out.rows = rows.ops.size();
  out.csv = csv.str();
  return out;
}

}  // namespace orrery
