#include "models/learned/evaluation.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "common/errors.h"
#include "models/learned/op_params.h"
#include "platforms/device_spec.h"

namespace orrery {
namespace {

std::string pct(double e) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f%%", 100.0 * e);
  return buf;
}

std::string arch_of(const ScaledNet& n) {
  return "L" + std::to_string(n.net.layers()) + "N" + std::to_string(n.net.neurons());
}

// Per group, the mode parameters whose values differ between groups, leaving out one that
// always equals an earlier one (pad_w with pad_h).
std::vector<std::string> group_labels(const OpModel& m) {
  std::vector<int> mode_params;
  for (size_t i = 0; i < m.params.size(); ++i)
    if (m.params[i].kind == ParamKind::kMode) mode_params.push_back(static_cast<int>(i));
  std::vector<std::vector<std::string>> columns(mode_params.size());
  for (const auto& g : m.groups)
    for (size_t k = 0; k < mode_params.size(); ++k) columns[k].push_back(g.mode[k]);
  std::vector<size_t> shown;
  for (size_t k = 0; k < columns.size(); ++k) {
    bool varies = std::set<std::string>(columns[k].begin(), columns[k].end()).size() > 1;
    bool repeat = false;
    for (size_t j : shown) repeat = repeat || columns[j] == columns[k];
    if (varies && !repeat) shown.push_back(k);
  }
  std::vector<std::string> labels;
  for (size_t g = 0; g < m.groups.size(); ++g) {
    std::string s;
    for (size_t k : shown)
      s += (s.empty() ? "" : " ") + m.schema.params[mode_params[k]].name + "=" + columns[k][g];
    labels.push_back(s);
  }
  return labels;
}

// The op model for a row's device as the estimator would find it: by the row's device name,
// or, when that names a device spec, by the spec's name and aliases.
const OpModel* find_model(const LearnedModel& model, const std::string& op,
                          const std::string& device) {
  if (const OpModel* m = model.find(op, device)) return m;
  try {
    DeviceSpec spec = device_spec(device);
    if (const OpModel* m = model.find(op, spec.name)) return m;
    for (const auto& a : spec.aliases)
      if (const OpModel* m = model.find(op, a)) return m;
  } catch (const InputError&) {
  }
  return nullptr;
}

}  // namespace

std::vector<OpAccuracy> evaluate_learned_model(const LearnedModel& model, const ProfileDb& db,
                                               bool held_out_only) {
  std::vector<OpAccuracy> out;
  for (const auto& m : model.ops) {
    OpAccuracy a;
    a.op = m.op;
    a.device = m.device;
    a.pc = candidate_text(m.pc, m.schema.params);
    std::set<std::string> held(m.held_out.begin(), m.held_out.end());
    std::map<std::vector<std::string>, GroupAccuracy> groups;
    std::vector<std::string> labels = group_labels(m);
    for (size_t i = 0; i < m.groups.size(); ++i) {
      const ModeGroup& g = m.groups[i];
      GroupAccuracy& ga = groups[g.mode];
      ga.label = labels[i];
      ga.mode = m.mode_text(g.mode);
      ga.arch = arch_of(g.model);
    }
    for (const auto& r : db.rows()) {
      if (r.op != m.op || find_model(model, r.op, r.device) != &m) continue;
      if (held_out_only && !held.count(row_key(r))) continue;
      ModelOp op = op_from_row(r);
      auto p = predict_op(m, op);
      if (!p) {
        ++a.declined;
        continue;
      }
      double e = std::fabs(p->seconds - r.time_s) / r.time_s;
      double e0 = std::fabs(p->no_pc_seconds - r.time_s) / r.time_s;
      GroupAccuracy& ga = groups[m.mode_of(*extract_params(m.schema, op))];
      ++ga.rows;
      ga.error += e;
      ga.no_pc_error += e0;
      ++a.rows;
      a.error += e;
      a.no_pc_error += e0;
      if (p->in_range)
        a.error_in_range += e;
      else
        ++a.out_of_range;
    }
    for (auto& [mode, ga] : groups) {
      if (ga.rows) ga.error /= ga.rows, ga.no_pc_error /= ga.rows;
      a.groups.push_back(ga);
    }
    if (a.rows) a.error /= a.rows, a.no_pc_error /= a.rows;
    if (a.rows > a.out_of_range) a.error_in_range /= a.rows - a.out_of_range;
    out.push_back(std::move(a));
  }
  return out;
}

std::string accuracy_table(const std::vector<OpAccuracy>& acc) {
  std::string s =
      "| op | principal component | best model | error | no-PC error | rows |\n"
      "|---|---|---|---|---|---|\n";
  double sum = 0.0, sum0 = 0.0;
  size_t n = 0;
  for (const auto& a : acc) {
    std::string arch;
    for (const auto& g : a.groups) {
      if (!arch.empty()) arch += ", ";
      arch += g.arch;
      if (a.groups.size() > 1) arch += " (" + g.label + ")";
    }
    s += "| " + a.op + " | " + a.pc + " | " + arch + " | " + pct(a.error) + " | " +
         pct(a.no_pc_error) + " | " + std::to_string(a.rows) +
         (a.out_of_range ? " (" + std::to_string(a.out_of_range) + " out of range)" : "") +
         (a.declined ? " (+" + std::to_string(a.declined) + " without a network)" : "") + " |\n";
    if (a.rows) {
      sum += a.error;
      sum0 += a.no_pc_error;
      ++n;
    }
  }
  if (n) s += "| average | | | " + pct(sum / n) + " | " + pct(sum0 / n) + " | |\n";
  return s;
}

std::string input_form_table(const LearnedModel& model) {
  std::string s =
      "| op | parameters | principal component | validation error | no-PC validation error |\n"
      "|---|---|---|---|---|\n";
  for (const auto& m : model.ops)
    for (const auto& f : m.input_forms)
      s += "| " + m.op + " | " + (f.log_inputs ? "log" : "values") +
           (f.log_inputs == m.log_inputs ? " (chosen)" : "") + " | " +
           candidate_text(f.pc, m.schema.params) + " | " + pct(f.val_error) + " | " +
           pct(f.no_pc_val_error) + " |\n";
  return s;
}

}  // namespace orrery
