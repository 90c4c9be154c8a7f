#include "scenario/sensitivity.h"

#include <algorithm>
#include <map>

#include "common/errors.h"
#include "scenario/gpu_speed.h"
#include "scenario/scenario_run.h"

namespace orrery {

const std::vector<UncertainInput>& uncertain_inputs() {
  static const std::vector<UncertainInput> inputs = {
      {"kernels", 0.13,
       "Tensor Core GEMM models, one GPU left out: 13% median error (docs/validation.md)"},
      {"links", 0.17,
       "collectives against AIConfigurator's nccl-tests: 17% median error (docs/collectives.md)"},
      {"host", 0.25,
       "per-kernel launch costs of Lin et al. (HiPC 2022), one value per platform: taken as "
       "good to 25%"},
  };
  return inputs;
}

bool scaled_input(const Scenario& sc, const std::string& input, double factor, Scenario* out) {
  if (input == "kernels") {
    std::map<std::string, double> speeds;
    for (const auto& h : sc.platform.topology.hosts)
      if (h.role == "gpu") speeds[h.name] = factor;
    if (speeds.empty())  // a SimGrid XML platform: every device of the graph runs kernels
      for (const auto& d : sc.graph.devices) speeds[d.host.empty() ? d.name : d.host] = factor;
    *out = sc;
    apply_gpu_speeds(speeds, &out->graph);
    return true;
  }
  if (input == "links") {
    if (sc.platform.topology.links.empty()) return false;
    *out = sc;
    for (auto& l : out->platform.topology.links) l.bandwidth *= factor;
    return true;
  }
  if (input == "host") {
    bool any = false;
    for (const auto& op : sc.graph.ops) any = any || op.stream.cls == StreamClass::kHost;
    if (!any) return false;
    *out = sc;
    for (auto& op : out->graph.ops)
      if (op.stream.cls == StreamClass::kHost && op.duration > 0) op.duration /= factor;
    return true;
  }
  return false;
}

namespace {

RunOptions quiet_child() {
  RunOptions quiet;
  quiet.isolated = true;
  quiet.replay.record_timeline = false;
  return quiet;
}

// The scenario built again from its own tree with `keys` set (and no sensitivity of its own).
Scenario rebuilt(const Scenario& sc, const std::vector<std::string>& keys) {
  YAML::Node root = YAML::Load(sc.resolved_yaml);
  apply_override(root, "output.sensitivity=false");
  for (const auto& k : keys) apply_override(root, k);
  Scenario out = build_scenario(root, sc.origin, sc.text);
  out.campaign.reset();
  return out;
}

SensitivityRow overlap_row(const Scenario& sc) {
  SensitivityRow row;
  row.input = "overlap";
  row.moved_by = "on/off";
  row.basis =
      "communication overlapped with compute as far as the stack allows, or not at all (an "
      "assumption of the software stack)";
  std::vector<std::string> off, on;
  if (sc.llm) {
    off = {"strategy.tp_comm_overlap=false", "strategy.pp_sync=true"};
    on = {"strategy.pp_sync=false"};
    if (sc.llm->plan.tp > 1 && sc.llm->plan.sequence_parallel)
      on.push_back("strategy.tp_comm_overlap=true");
  } else if (sc.traits.kind != "other" && !sc.graph.collectives.empty()) {
    off = {"strategy.overlap=false"};
  } else {
    return row;
  }
  if (sc.resolved_yaml.empty()) throw std::logic_error("sensitivity_runs: no resolved_yaml");
  double t[2];
  const std::vector<std::string>* sets[2] = {&off, &on};
  for (int k = 0; k < 2; ++k) {
    try {
      t[k] = run_scenario(rebuilt(sc, *sets[k]), quiet_child()).iteration_s;
    } catch (const InputError& e) {
      row.note = std::string("not applicable: ") + e.what();
      return row;
    }
  }
  row.applies = true;
  row.fast_s = std::min(t[0], t[1]);
  row.slow_s = std::max(t[0], t[1]);
  return row;
}

}  // namespace

std::vector<SensitivityRow> sensitivity_runs(const Scenario& sc) {
  std::vector<SensitivityRow> rows;
  for (const UncertainInput& in : uncertain_inputs()) {
    SensitivityRow row;
    row.input = in.name;
    row.moved_by = "+-" + std::to_string(static_cast<int>(100 * in.uncertainty + 0.5)) + "%";
    row.basis = in.basis;
    const double u = in.uncertainty;
    // Kernels and host take 1 + u of their time at the slow end; links carry 1 - u of their rate.
    const double slow = in.name == "links" ? 1 - u : 1 / (1 + u);
    const double fast = in.name == "links" ? 1 + u : 1 / (1 - u);
    Scenario a, b;
    if (scaled_input(sc, in.name, slow, &a) && scaled_input(sc, in.name, fast, &b)) {
      a.sensitivity = b.sensitivity = false;  // a variant has no variants of its own
      a.campaign.reset();
      b.campaign.reset();
      row.applies = true;
      row.slow_s = run_scenario(a, quiet_child()).iteration_s;
      row.fast_s = run_scenario(b, quiet_child()).iteration_s;
    }
    rows.push_back(std::move(row));
  }
  rows.push_back(overlap_row(sc));
  return rows;
}

std::vector<std::pair<std::string, double>> sensitivity_metrics(
    const std::vector<SensitivityRow>& rows) {
  std::vector<std::pair<std::string, double>> out;
  for (const auto& r : rows) {
    if (!r.applies) continue;
    out.emplace_back("sensitivity." + r.input + ".fast_s", r.fast_s);
    out.emplace_back("sensitivity." + r.input + ".slow_s", r.slow_s);
  }
  return out;
}

}  // namespace orrery
