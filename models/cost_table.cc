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

CostTable price_cost_table(const std::string& csv_text, const std::string& origin,
                           const CostTableOptions& options, const CostModel& cost) {
  CostTable out;
  std::istringstream in(csv_text);
  std::string line;
  std::vector<std::string> header, cells;
  int n = 0;
  std::map<std::string, DeviceSpec> devices;  // by the name a row gives
  auto device = [&](const std::string& name, const std::string& where) -> const DeviceSpec& {
    auto it = devices.find(name);
    if (it != devices.end()) return it->second;
    try {
      return devices.emplace(name, device_spec(name)).first->second;
    } catch (const InputError& e) {
      throw InputError(where + ": device: " + e.what());
    }
  };
  if (!options.device.empty()) device(options.device, origin);
  std::ostringstream csv;
  while (std::getline(in, line)) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string where = origin + ":" + std::to_string(n);
    if (line.empty()) continue;
    if (!split_csv_line(line, &cells)) throw InputError(where + ": unterminated quoted field");
    if (header.empty()) {
      header = cells;
      bool has_op = false;
      for (const auto& h : header) has_op = has_op || h == "op";
      if (!has_op)
        throw InputError(where + ": the header has no \"op\" column (expected op and the shape "
                                 "columns of the op, e.g. op,B,M,N,K)");
      if (options.device.empty() && [&] {
            for (const auto& h : header)
              if (h == "device") return false;
            return true;
          }())
        throw InputError(where + ": no \"device\" column: give the device with --device");
      csv << line << ",predicted_ms\n";
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
    const DeviceSpec& dev = device(options.device.empty() ? row["device"] : options.device, where);
    const ModelOp op = query_op(row["op"], row, dtype, where);
    const double t = cost.estimate(op, dev).seconds;
    csv << line << "," << ms(t) << "\n";
    ++out.rows;
    if (auto m = row.find("latency_ms"); m != row.end()) {
      char* end = nullptr;
      const double measured = std::strtod(m->second.c_str(), &end);
      if (end != m->second.c_str() && *end == '\0' && measured > 0)
        out.relative_errors.push_back(std::fabs(t * 1e3 - measured) / measured);
    }
  }
  if (header.empty()) throw InputError(origin + ": empty file (expected a CSV header)");
  out.csv = csv.str();
  return out;
}

}  // namespace orrery
