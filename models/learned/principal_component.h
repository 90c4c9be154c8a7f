// The principal component (Tianshu section 3.2.2): an op's theoretical time
// complexity, found automatically. Each parameter is linear, inversely proportional, null or a
// mode selection; a candidate complexity is the product of the linear parameters divided by
// the product of the inverse ones. Pruning rules decide which kinds each parameter may take;
// every remaining combination is a candidate, and training picks the best (trainer.h).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "models/learned/op_params.h"

namespace orrery {

enum class ParamKind : unsigned char { kLinear, kInverse, kNull, kMode };
const char* param_kind_name(ParamKind k);  // "linear", "inverse", "null", "mode"
bool parse_param_kind(const std::string& s, ParamKind* out);

// What the pruning rules look at: the parameter's type and how many values the data holds.
struct ParamStats {
  bool is_string = false;
  bool is_dim = false;  // a dimension of an input tensor's shape (or of TF's *_sizes)
  size_t distinct = 0;  // distinct values in the training data
};

inline constexpr size_t kMaxModeValues = 5;

// Section 3.2.2, step 1, in order:
//   1. at most 5 distinct values: mode selection;
//   2. a string: null or mode selection; with more than 5 values one model per value would
//      starve each model of data, so Orrery takes it as null;
//   3. a tensor dimension: linear or null;
//   otherwise (a numeric attribute with more than 5 values): linear, inverse or null (a mode
//   selection with that many values is excluded for the reason of rule 2).
std::vector<ParamKind> allowed_kinds(const ParamStats& s);

struct Candidate {
  std::vector<int> linear;   // parameter indices, ascending
  std::vector<int> inverse;  // parameter indices, ascending
  bool empty() const { return linear.empty() && inverse.empty(); }
  bool operator==(const Candidate& o) const { return linear == o.linear && inverse == o.inverse; }
};

// Every complexity function the allowed kinds leave (the product over parameters of the number
// of their kinds that take part: linear, inverse or null). Mode and null parameters never enter
// a function. Deterministic order: the all-null function (no principal component) first, then
// counting with the first parameter varying fastest.
std::vector<Candidate> enumerate_candidates(const std::vector<std::vector<ParamKind>>& allowed);

// log of the candidate's value for one op: sum of log max(v, 1) over linear parameters minus
// the same over inverse ones (values below 1, e.g. a zero padding, count as 1).
double log_principal_component(const Candidate& c, const std::vector<ParamValue>& values);

// "a.M*a.K*b.N", "x.N*x.C/stride_h", "1" for the empty candidate.
std::string candidate_text(const Candidate& c, const std::vector<ParamDef>& params);

}  // namespace orrery
