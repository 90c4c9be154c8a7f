// Pricing a table of ops without a scenario: a CSV whose rows name an op and its shape in the
// columns of the measured GPU kernel data (op, B, M, N, K, ...; workloads/op_query.h), priced
// on a device by the cost model. Every column passes through and `predicted_ms` is appended,
// so users check the model against their own measurements (`orrery cost --csv`).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "common/dtype.h"
#include "models/cost_model.h"
#include "platforms/device_spec.h"

namespace orrery {

struct CostTableOptions {
  // The device of every row; empty: each row's `device` column names its own (a spec name or
  // alias, "Tesla T4" style names included).
  std::string device;
  DType dtype = DType::kFP32;  // rows without a `dtype` column
};

struct CostTable {
  std::string csv;  // the input's columns plus predicted_ms, one line per row
  size_t rows = 0;
  // Rows that carry a measured `latency_ms`: |predicted - measured| / measured of each.
  std::vector<double> relative_errors;
};

// The rows of such a CSV, read once and priced many times (the kernel-model fit prices the
// measured data again for every trial of its coefficients).
struct OpRows {
  std::vector<std::string> lines;  // the header, then each row's line as read
  std::vector<ModelOp> ops;        // one per row
  std::vector<int> device;         // per row, an index into devices
  std::vector<DeviceSpec> devices;
  std::vector<double> measured_ms;  // per row, latency_ms or NaN
};

// Reads every row of `csv_text`, with the errors price_cost_table documents.
OpRows read_op_rows(const std::string& csv_text, const std::string& origin,
                    const CostTableOptions& options);

// Prices every row of `csv_text` (`origin` names it in messages). Throws InputError naming the
// origin, the line and the column for a missing `op` column, an unknown op or device, a bad
// shape or a malformed line.
CostTable price_cost_table(const std::string& csv_text, const std::string& origin,
                           const CostTableOptions& options, const CostModel& cost);

}  // namespace orrery
