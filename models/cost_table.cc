#include "models/cost_table.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "common/csv.h"
#include "common/errors.h"
#include "workloads/op_query.h"

namespace orrery {
namespace {

std::string ms(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", seconds * 1e3);
  return buf;
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
    DType dtype = options.dtype;
    if (auto d = row.find("dtype"); d != row.end() && !parse_dtype(d->second, &dtype))
      throw InputError(where + ": dtype: unknown \"" + d->second + "\"");
    out.device.push_back(device(options.device.empty() ? row["device"] : options.device, where));
    out.ops.push_back(query_op(row["op"], row, dtype, where));
    out.lines.push_back(line);
    double measured = NAN;
    if (auto m = row.find("latency_ms"); m != row.end()) {
      char* end = nullptr;
      const double v = std::strtod(m->second.c_str(), &end);
      if (end != m->second.c_str() && *end == '\0' && v > 0) measured = v;
    }
    out.measured_ms.push_back(measured);
  }
  if (header.empty()) throw InputError(origin + ": empty file (expected a CSV header)");
  return out;
}

CostTable price_cost_table(const std::string& csv_text, const std::string& origin,
                           const CostTableOptions& options, const CostModel& cost) {
  const OpRows rows = read_op_rows(csv_text, origin, options);
  CostTable out;
  std::ostringstream csv;
  csv << rows.lines[0] << ",predicted_ms\n";
  for (size_t i = 0; i < rows.ops.size(); ++i) {
    const double t = cost.estimate(rows.ops[i], rows.devices[rows.device[i]]).seconds;
    csv << rows.lines[i + 1] << "," << ms(t) << "\n";
    const double measured = rows.measured_ms[i];
    if (measured > 0) out.relative_errors.push_back(std::fabs(t * 1e3 - measured) / measured);
  }
  out.rows = rows.ops.size();
  out.csv = csv.str();
  return out;
}

}  // namespace orrery
