#include "models/learned/evaluation.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "models/learned/op_params.h"

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
    for (const auto& g : m.groups) {
      GroupAccuracy& ga = groups[g.mode];
      ga.mode = m.mode_text(g.mode);
      ga.arch = arch_of(g.model);
    }
    for (const auto& r : db.rows()) {
      if (r.op != m.op || model.find(r.op, r.device) != &m) continue;
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
    }
    for (auto& [mode, ga] : groups) {
      if (ga.rows) ga.error /= ga.rows, ga.no_pc_error /= ga.rows;
      a.groups.push_back(ga);
    }
    if (a.rows) a.error /= a.rows, a.no_pc_error /= a.rows;
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
      if (a.groups.size() > 1) arch += " (" + g.mode + ")";
    }
    s += "| " + a.op + " | " + a.pc + " | " + arch + " | " + pct(a.error) + " | " +
         pct(a.no_pc_error) + " | " + std::to_string(a.rows) +
         (a.declined ? " (+" + std::to_string(a.declined) + " declined)" : "") + " |\n";
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
