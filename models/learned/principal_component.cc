#include "models/learned/principal_component.h"

#include <algorithm>
#include <cmath>

namespace orrery {

const char* param_kind_name(ParamKind k) {
  switch (k) {
    case ParamKind::kLinear:
      return "linear";
    case ParamKind::kInverse:
      return "inverse";
    case ParamKind::kNull:
      return "null";
    case ParamKind::kMode:
      return "mode";
  }
  return "?";
}

bool parse_param_kind(const std::string& s, ParamKind* out) {
  for (ParamKind k : {ParamKind::kLinear, ParamKind::kInverse, ParamKind::kNull, ParamKind::kMode})
    if (s == param_kind_name(k)) {
      *out = k;
      return true;
    }
  return false;
}

std::vector<ParamKind> allowed_kinds(const ParamStats& s) {
  if (s.distinct <= kMaxModeValues) return {ParamKind::kMode};
  if (s.is_string) return {ParamKind::kNull};
  if (s.is_dim) return {ParamKind::kLinear, ParamKind::kNull};
  return {ParamKind::kLinear, ParamKind::kInverse, ParamKind::kNull};
}

std::vector<Candidate> enumerate_candidates(const std::vector<std::vector<ParamKind>>& allowed) {
  // Per parameter, the kinds that shape a function; null comes first so that counting starts
  // from the all-null function.
  std::vector<std::vector<ParamKind>> choices(allowed.size());
  for (size_t i = 0; i < allowed.size(); ++i) {
    const auto& a = allowed[i];
    auto has = [&](ParamKind k) { return std::find(a.begin(), a.end(), k) != a.end(); };
    if (has(ParamKind::kNull) || has(ParamKind::kMode) || a.empty())
      choices[i].push_back(ParamKind::kNull);
    if (has(ParamKind::kLinear)) choices[i].push_back(ParamKind::kLinear);
    if (has(ParamKind::kInverse)) choices[i].push_back(ParamKind::kInverse);
  }
  std::vector<Candidate> out;
  std::vector<size_t> digit(allowed.size(), 0);
  while (true) {
    Candidate c;
    for (size_t i = 0; i < digit.size(); ++i) {
      ParamKind k = choices[i][digit[i]];
      if (k == ParamKind::kLinear) c.linear.push_back(static_cast<int>(i));
      if (k == ParamKind::kInverse) c.inverse.push_back(static_cast<int>(i));
    }
    out.push_back(std::move(c));
    size_t i = 0;
    while (i < digit.size() && ++digit[i] == choices[i].size()) digit[i++] = 0;
    if (i == digit.size()) break;
  }
  return out;
}

double log_principal_component(const Candidate& c, const std::vector<ParamValue>& values) {
  double s = 0.0;
  for (int i : c.linear) s += std::log(std::max(values[i].value, 1.0));
  for (int i : c.inverse) s -= std::log(std::max(values[i].value, 1.0));
  return s;
}

std::string candidate_text(const Candidate& c, const std::vector<ParamDef>& params) {
  std::string s;
  for (int i : c.linear) s += (s.empty() ? "" : "*") + params[i].name;
  if (s.empty()) s = "1";
  for (int i : c.inverse) s += "/" + params[i].name;
  return s;
}

}  // namespace orrery
