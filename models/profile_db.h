// The profile database: measured op times keyed by op type, shapes and attributes, dtype and
// device (the ahead-of-time measurements of Tianshu, section 2.2: measure once,
// share, reuse). Rows come from scripts/profile_ops.py (N/M method) or anyone's contribution in
// the CSV format of docs/cost-models.md; `orrery profile import` compiles them into HDF5.
//
// Lookup, in order: an exact row for the op's key; else interpolation along the one dimension
// in which bracketing rows differ from the op (log time linear in log size between the nearest
// row below and the nearest row above); else nothing (the cost model falls back further).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "workloads/model_graph.h"

namespace orrery {

struct ProfileRow {
  std::string op;       // op type (workloads/op_counts.h)
  std::string dtype;    // "fp32", "fp16", ...
  std::string device;   // device spec name ("V100-SXM2") or a CPU description
  std::string inputs;   // input shapes, "64x256;256x256" (';' between tensors, 'x' between dims)
  std::string output;   // output shape, "64x256"
  std::string attrs;    // "pad_h=1;stride_h=2" sorted, default-valued attributes left out
  double time_s = 0.0;  // measured time of one op

  // Provenance of an N/M measurement (0 or empty when unknown).
  int64_t n = 0;
  int64_t m = 0;
  double t_n_s = 0.0;
  double t_m_s = 0.0;
  int64_t samples = 0;
  double stdev_s = 0.0;
  std::string source;

  std::string origin;  // "file:line" for messages; not stored
};

// Canonical text of shapes and attributes, as rows store them.
std::string shape_text(const Shape& s);
std::string shapes_text(const std::vector<Shape>& shapes);
// Attributes equal to their documented default (groups 1, stride 1, dilation 1, pad 0) are
// dropped so an op that spells them out matches a row that does not.
std::string attrs_text(const std::map<std::string, int64_t>& attrs);
// Parses shape_text/shapes_text/attrs_text forms; false on malformed text.
bool parse_shape_text(const std::string& text, Shape* out);
bool parse_shapes_text(const std::string& text, std::vector<Shape>* out);
bool parse_attrs_text(const std::string& text, std::map<std::string, int64_t>* out);

// The N/M estimate of one op's time (Tianshu eq. 1): (T_M - T_N) / (M - N).
// Throws std::invalid_argument unless M > N.
double nm_op_time(double t_n, double t_m, int64_t n, int64_t m);

struct DbMatch {
  double seconds = 0.0;
  bool exact = false;  // false: interpolated
  std::string detail;  // which rows it came from
};

class ProfileDb {
 public:
  // Adds a row after checking and normalising it (InputError naming row.origin when a field is
  // malformed). A row with the key of an earlier one replaces it; returns false then.
  bool add(ProfileRow row);
  void merge(const ProfileDb& other);

  const std::vector<ProfileRow>& rows() const { return rows_; }
  size_t size() const { return rows_.size(); }
  bool empty() const { return rows_.empty(); }

  // The measured or interpolated time of `op` on a device called any of `device_names`
  // (case-insensitive), or nothing.
  std::optional<DbMatch> lookup(const ModelOp& op,
                                const std::vector<std::string>& device_names) const;

 private:
  struct Entry {
    std::vector<int64_t> dims;  // every input dimension, then the output's
    size_t row;
  };
  std::vector<ProfileRow> rows_;
  std::unordered_map<std::string, size_t> exact_;                 // full key -> row
  std::unordered_map<std::string, std::vector<Entry>> families_;  // key without dims -> rows
};

}  // namespace orrery
