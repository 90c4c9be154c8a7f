// Pricing a table of ops without a scenario: a CSV whose rows name an op and its shape in the
// columns of the measured GPU kernel data (op, B, M, N, K, ...; workloads/op_query.h), priced
// on a device by the cost model. Every column passes through and `predicted_ms` is appended,
// so users check the model against their own measurements (`orrery cost --csv`).
//
// Columns with a meaning of their own (any other column passes through unread):
//   op          required: the op, as workloads/op_query.h names it
//   device      each row's device (a spec name or alias, "Tesla T4" style names included);
//               required unless CostTableOptions::device names one for every row
//   dtype       the row's element type (common/dtype.h names); an empty cell, or no such
//               column, means CostTableOptions::dtype (`--dtype`)
//   latency_ms  the row's measured time: a non-negative number, empty when not measured; rows
//               with a positive one give relative_errors (0 is a time too short to record)
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "common/dtype.h"
#include "models/cost_model.h"
#include "platforms/device_spec.h"

namespace orrery {

struct CostTableOptions {
  // The device of every row; empty: each row's `device` column names its own.
  std::string device;
  DType dtype = DType::kFP32;  // rows without a `dtype` of their own
};

struct CostTable {
  std::string csv;  // the input's columns plus predicted_ms, one line per row
  size_t rows = 0;
  size_t default_dtype_rows = 0;  // rows priced in CostTableOptions::dtype (no dtype of their own)
  // Rows that carry a measured `latency_ms`: |predicted - measured| / measured of each.
  std::vector<double> relative_errors;
  // One line per reason some rows were priced in another dtype than their own (an fp8 or fp4
  // GEMM on a GPU without those Tensor Cores, see op_on_device), with how many rows and the
  // first one's line: "ops.csv: 3 rows from line 2 priced in bf16: A100-SXM4-80GB has no FP8
  // Tensor Cores (Ada, Hopper and later have them)". Empty when every row ran as given.
  std::vector<std::string> notes;
};

// The rows of such a CSV, read once and priced many times (the kernel-model fit prices the
// measured data again for every trial of its coefficients).
struct OpRows {
  std::vector<std::string> lines;  // the header, then each row's line as read
  std::vector<int> line_numbers;   // per row, its line in the file (1: the header)
  std::vector<ModelOp> ops;        // one per row
  std::vector<int> device;         // per row, an index into devices
  std::vector<bool> own_dtype;     // per row: its dtype cell named its type (not the default)
  std::vector<DeviceSpec> devices;
  std::vector<double> measured_ms;  // per row, latency_ms; NaN when empty or no such column
};

// Reads every row of `csv_text`, with the errors price_cost_table documents.
OpRows read_op_rows(const std::string& csv_text, const std::string& origin,
                    const CostTableOptions& options);

// Prices every row of `csv_text` (`origin` names it in messages). Throws InputError naming the
// origin, the line and the column for a missing `op` column, an unknown op, device or dtype, a
// bad shape, a latency_ms that is no non-negative number, or a malformed line.
CostTable price_cost_table(const std::string& csv_text, const std::string& origin,
                           const CostTableOptions& options, const CostModel& cost);

// `op` as `dev` runs it. An fp8 or fp4 GEMM or convolution on a GPU without Tensor Cores for
// its type runs in a 16-bit type instead, as a language model's low-precision recipe falls back
// (strategies/llm_precision.h): bf16, or fp16 where the GPU's fp16 peak is the higher (Volta,
// Turing, the P100); its FLOPs and bytes are counted again in that type. `why` (optional) gets
// the reason, "" when the op runs as given.
ModelOp op_on_device(const ModelOp& op, const DeviceSpec& dev, std::string* why = nullptr);

}  // namespace orrery
