#include "models/profile_db.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <stdexcept>

#include "common/errors.h"
#include "common/input_limits.h"
#include "workloads/op_counts.h"

namespace orrery {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool parse_int(const std::string& s, int64_t* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (*end != '\0' || errno == ERANGE) return false;  // past 64 bits is no dimension
  *out = v;
  return true;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == sep) {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  return out;
}

bool is_default_attr(const std::string& k, int64_t v) {
  if (k == "groups" || k == "stride_h" || k == "stride_w" || k == "dilation_h" || k == "dilation_w")
    return v == 1;
  if (k == "pad_h" || k == "pad_w") return v == 0;
  return false;
}

// The parts of a key: "op|dtype|device|attrs|ranks" names a family of rows that differ only in
// their dimensions; the dims complete it.
struct Key {
  std::string family;
  std::vector<int64_t> dims;
  std::string full() const {
    std::string s = family + "|";
    for (int64_t d : dims) s += std::to_string(d) + ",";
    return s;
  }
};

// An element-wise op's output, when not given, is shaped like its first input (op_counts.h).
Key make_key(const std::string& op, const std::string& dtype, const std::string& device,
             const std::string& attrs, const std::vector<Shape>& inputs, Shape output) {
  if (output.empty() && !inputs.empty()) output = inputs[0];
  Key k;
  k.family = op + "|" + dtype + "|" + lower(device) + "|" + attrs + "|";
  for (const auto& s : inputs) {
    k.family += std::to_string(s.size()) + ",";
    k.dims.insert(k.dims.end(), s.begin(), s.end());
  }
  k.family += ">" + std::to_string(output.size());
  k.dims.insert(k.dims.end(), output.begin(), output.end());
  return k;
}

[[noreturn]] void bad_row(const ProfileRow& r, const std::string& what) {
  throw InputError((r.origin.empty() ? std::string("profile row") : r.origin) + ": " + what);
}

}  // namespace

std::string shape_text(const Shape& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) out += (i ? "x" : "") + std::to_string(s[i]);
  return out;
}

std::string shapes_text(const std::vector<Shape>& shapes) {
  std::string out;
  for (size_t i = 0; i < shapes.size(); ++i) out += (i ? ";" : "") + shape_text(shapes[i]);
  return out;
}

std::string attrs_text(const std::map<std::string, int64_t>& attrs) {
  std::string out;
  for (const auto& [k, v] : attrs) {
    if (is_default_attr(k, v)) continue;
    out += (out.empty() ? "" : ";") + k + "=" + std::to_string(v);
  }
  return out;
}

bool parse_shape_text(const std::string& text, Shape* out) {
  out->clear();
  if (text.empty()) return true;
  for (const auto& part : split(text, 'x')) {
    int64_t v;
    if (!parse_int(part, &v) || v < 0) return false;
    out->push_back(v);
  }
  return true;
}

bool parse_shapes_text(const std::string& text, std::vector<Shape>* out) {
  out->clear();
  if (text.empty()) return true;
  for (const auto& part : split(text, ';')) {
    Shape s;
    if (!parse_shape_text(part, &s)) return false;
    out->push_back(s);
  }
  return true;
}

bool parse_attrs_text(const std::string& text, std::map<std::string, int64_t>* out) {
  out->clear();
  if (text.empty()) return true;
  for (const auto& part : split(text, ';')) {
    size_t eq = part.find('=');
    int64_t v;
    if (eq == std::string::npos || eq == 0 || !parse_int(part.substr(eq + 1), &v)) return false;
    (*out)[part.substr(0, eq)] = v;
  }
  return true;
}

double nm_op_time(double t_n, double t_m, int64_t n, int64_t m) {
  if (m <= n) throw std::invalid_argument("N/M method needs M > N");
  return (t_m - t_n) / static_cast<double>(m - n);
}

bool ProfileDb::add(ProfileRow r) {
  if (r.op.empty()) bad_row(r, "op is empty");
  if (!is_known_op_type(r.op))
    bad_row(r, "unknown op type \"" + r.op + "\" (workloads/op_counts.h lists the known ones)");
  DType dt;
  if (!parse_dtype(r.dtype, &dt)) bad_row(r, "unknown dtype \"" + r.dtype + "\"");
  if (r.device.empty()) bad_row(r, "device is empty");
  std::vector<Shape> inputs;
  Shape output;
  std::map<std::string, int64_t> attrs;
  if (!parse_shapes_text(r.inputs, &inputs))
    bad_row(r, "inputs \"" + r.inputs + "\": expected shapes like 64x256;256x256");
  if (!parse_shape_text(r.output, &output))
    bad_row(r, "output \"" + r.output + "\": expected a shape like 64x256");
  if (!parse_attrs_text(r.attrs, &attrs))
    bad_row(r, "attrs \"" + r.attrs + "\": expected key=integer pairs separated by ';'");
  // A convolution's geometry: pads are never negative, strides, dilations and groups at least
  // 1. Other attributes keep their sign (a reduction's dim=-1 counts from the end).
  for (const auto& [k, v] : attrs) {
    const bool pad = k == "pad_h" || k == "pad_w";
    const bool at_least_one =
        k == "groups" || k.rfind("stride", 0) == 0 || k.rfind("dilation", 0) == 0;
    if ((pad && v < 0) || (at_least_one && v < 1))
      bad_row(r, "attrs: " + k + " = " + std::to_string(v) + ": " +
                     (pad ? "a pad is never negative" : "must be at least 1"));
  }
  if (!(r.time_s > 0) || !std::isfinite(r.time_s))
    bad_row(r, "time_s must be a positive number of seconds");
  // The ranges a scenario's own values are held to (common/input_limits.h): an op of 1e300 s
  // or a shape of 2^62 elements is a damaged row, not a measurement.
  const std::pair<const char*, double> times[] = {
      {"time_s", r.time_s}, {"t_n_s", r.t_n_s}, {"t_m_s", r.t_m_s}, {"stdev_s", r.stdev_s}};
  for (const auto& [column, v] : times)
    if (!limits::kOpDuration.contains(v))
      bad_row(r, std::string(column) + ": " + out_of_range(v, limits::kOpDuration));
  if (r.time_s < 1e-12)
    bad_row(r, "time_s: " + std::to_string(r.time_s) + " s is below a picosecond: no kernel is");
  // The N/M method (Tianshu, eq. 1) times n and m > n back-to-back runs; a billion is no run.
  const std::pair<const char*, int64_t> counts[] = {{"n", r.n}, {"m", r.m}, {"samples", r.samples}};
  for (const auto& [column, v] : counts) {
    if (v < 0)
      bad_row(r,
              "column " + std::string(column) + ": must not be negative, got " + std::to_string(v));
    if (v > 1000000000)
      bad_row(r, "column " + std::string(column) + ": " + std::to_string(v) +
                     " runs, more than a billion");
  }
  if (r.n > 0 && r.m > 0 && r.m <= r.n)
    bad_row(r, "column m: the N/M method times m > n runs, got n = " + std::to_string(r.n) +
                   " and m = " + std::to_string(r.m));
  auto elements = [](const Shape& s) {
    double n = 1;
    for (int64_t d : s) n *= static_cast<double>(d);
    return n;
  };
  constexpr double kMaxElements = 1e15;  // limits::kBytes in one-byte elements
  for (const Shape& s : inputs)
    if (elements(s) > kMaxElements)
      bad_row(r, "inputs \"" + r.inputs + "\": a shape of more than 1e15 elements");
  if (elements(output) > kMaxElements)
    bad_row(r, "output \"" + r.output + "\": a shape of more than 1e15 elements");
  // Canonical text, so rows written by hand with defaults or odd order still match.
  r.inputs = shapes_text(inputs);
  r.output = shape_text(output);
  r.attrs = attrs_text(attrs);

  Key k = make_key(r.op, r.dtype, r.device, r.attrs, inputs, output);
  auto [it, fresh] = exact_.emplace(k.full(), rows_.size());
  if (!fresh) {
    rows_[it->second] = std::move(r);
    return false;
  }
  families_[k.family].push_back({k.dims, rows_.size()});
  rows_.push_back(std::move(r));
  return true;
}

void ProfileDb::merge(const ProfileDb& other) {
  for (const auto& r : other.rows_) add(r);
}

std::optional<DbMatch> ProfileDb::lookup(const ModelOp& op,
                                         const std::vector<std::string>& device_names) const {
  if (rows_.empty()) return std::nullopt;
  const std::string dtype = dtype_name(op.dtype);
  const std::string attrs = attrs_text(op.attrs);
  for (const auto& dev : device_names) {
    Key k = make_key(op.type, dtype, dev, attrs, op.inputs, op.output);
    auto hit = exact_.find(k.full());
    if (hit != exact_.end()) {
      const ProfileRow& r = rows_[hit->second];
      return DbMatch{r.time_s, true, "row " + r.inputs + " -> " + r.output};
    }
  }
  for (const auto& dev : device_names) {
    Key k = make_key(op.type, dtype, dev, attrs, op.inputs, op.output);
    auto fam = families_.find(k.family);
    if (fam == families_.end()) continue;

    // Rows that differ from the op in one underlying size: every differing position holds the
    // same value v in the row and the same value q in the op (M of a GEMM appears in a and y).
    struct Side {
      const Entry* e = nullptr;
      double v = 0;
    };
    struct Group {
      std::vector<size_t> positions;
      double q = 0;
      Side lo, hi;
    };
    std::vector<Group> groups;
    for (const Entry& e : fam->second) {
      std::vector<size_t> diff;
      int64_t v = -1, q = -1;
      bool single = true;
      for (size_t i = 0; i < e.dims.size() && single; ++i) {
        if (e.dims[i] == k.dims[i]) continue;
        if ((v >= 0 && e.dims[i] != v) || (q >= 0 && k.dims[i] != q)) single = false;
        v = e.dims[i];
        q = k.dims[i];
        diff.push_back(i);
      }
      if (!single || diff.empty() || v <= 0 || q <= 0) continue;
      Group* g = nullptr;
      for (auto& cand : groups)
        if (cand.positions == diff) g = &cand;
      if (!g) {
        groups.push_back({diff, static_cast<double>(q), {}, {}});
        g = &groups.back();
      }
      double dv = static_cast<double>(v);
      if (dv < g->q && (!g->lo.e || dv > g->lo.v)) g->lo = {&e, dv};
      if (dv > g->q && (!g->hi.e || dv < g->hi.v)) g->hi = {&e, dv};
    }
    const Group* best = nullptr;
    double best_span = std::numeric_limits<double>::infinity();
    for (const auto& g : groups) {
      if (!g.lo.e || !g.hi.e) continue;  // interpolation only, never extrapolation
      double span = std::log(g.hi.v / g.lo.v);
      if (span < best_span) {
        best_span = span;
        best = &g;
      }
    }
    if (!best) continue;
    const ProfileRow& lo = rows_[best->lo.e->row];
    const ProfileRow& hi = rows_[best->hi.e->row];
    double w = std::log(best->q / best->lo.v) / best_span;
    double t = std::exp(std::log(lo.time_s) + w * (std::log(hi.time_s) - std::log(lo.time_s)));
    return DbMatch{t, false, "between rows " + lo.inputs + " and " + hi.inputs};
  }
  return std::nullopt;
}

}  // namespace orrery
