#include "models/learned/learned_model.h"

#include <cctype>
#include <cmath>
#include <cstdio>

#include "common/units.h"

namespace orrery {
namespace {

bool same_name(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

}  // namespace

double ScaledNet::predict_log(const std::vector<double>& features) const {
  std::vector<double> x(features.size());
  for (size_t i = 0; i < x.size(); ++i) x[i] = (features[i] - x_mean[i]) / x_scale[i];
  return net.predict(x.data()) * y_scale + y_mean;
}

std::vector<int> OpModel::feature_params() const {
  std::vector<int> out;
  for (size_t i = 0; i < params.size(); ++i)
    if (params[i].kind != ParamKind::kMode && !schema.params[i].is_string())
      out.push_back(static_cast<int>(i));
  return out;
}

std::vector<double> OpModel::features(const std::vector<ParamValue>& v, bool with_pc) const {
  std::vector<double> f;
  for (int i : feature_params())
    f.push_back(!log_inputs                 ? v[i].value
                : schema.params[i].is_dim() ? std::log(v[i].value)
                                            : std::log1p(v[i].value));
  if (with_pc) f.push_back(log_principal_component(pc, v));
  return f;
}

std::vector<std::string> OpModel::mode_of(const std::vector<ParamValue>& v) const {
  std::vector<std::string> out;
  for (size_t i = 0; i < params.size(); ++i)
    if (params[i].kind == ParamKind::kMode) out.push_back(param_value_text(schema.params[i], v[i]));
  return out;
}

const ModeGroup* OpModel::group(const std::vector<std::string>& mode) const {
  for (const auto& g : groups)
    if (g.mode == mode) return &g;
  return nullptr;
}

std::string OpModel::mode_text(const std::vector<std::string>& mode) const {
  std::string s;
  size_t k = 0;
  for (size_t i = 0; i < params.size() && k < mode.size(); ++i)
    if (params[i].kind == ParamKind::kMode)
      s += (s.empty() ? "" : " ") + schema.params[i].name + "=" + mode[k++];
  return s;
}

const OpModel* LearnedModel::find(const std::string& type, const std::string& device) const {
  for (const auto& m : ops)
    if (m.op == type && same_name(m.device, device)) return &m;
  return nullptr;
}

std::string param_value_text(const ParamDef& def, const ParamValue& v) {
  if (def.is_string()) return v.text;
  return format_exact(v.value);
}

std::optional<OpPrediction> predict_op(const OpModel& m, const ModelOp& op) {
  auto values = extract_params(m.schema, op);
  if (!values) return std::nullopt;
  const ModeGroup* g = m.group(m.mode_of(*values));
  if (!g || g->model.empty()) return std::nullopt;
  OpPrediction p;
  std::vector<double> f = m.features(*values, true);
  p.seconds = std::exp(g->model.predict_log(f));
  if (!g->no_pc.empty()) {
    f.pop_back();
    p.no_pc_seconds = std::exp(g->no_pc.predict_log(f));
  }
  std::vector<int> fp = m.feature_params();
  for (size_t k = 0; k < fp.size() && k < g->lo.size(); ++k) {
    double v = (*values)[fp[k]].value;
    if (v < g->lo[k] || v > g->hi[k]) p.in_range = false;
  }
  return p;
}

}  // namespace orrery
