#include "models/cost_model.h"

#include <cstdio>
#include <filesystem>

#include "common/errors.h"
#include "common/input_limits.h"
#include "models/embedding_model.h"
#include "models/learned/estimator.h"
#include "models/profile_io.h"
#include "models/roofline.h"
#include "models/tensor_cores.h"
#include "workloads/op_counts.h"

namespace orrery {
namespace {

std::string fixed(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

// A file a scenario names, relative to the scenario's folder.
std::string scenario_relative(const std::string& base_dir, const std::string& file) {
  std::filesystem::path p(file);
  if (p.is_relative() && !base_dir.empty()) p = std::filesystem::path(base_dir) / p;
  return p.string();
}

double read_efficiency(const YamlMap& m, const std::string& key, double fallback) {
  return m.number(key, fallback, limits::kEfficiency);
}

}  // namespace

const char* estimate_source_name(EstimateSource s) {
  switch (s) {
    case EstimateSource::kDatabase:
      return "db";
    case EstimateSource::kInterpolated:
      return "interpolated";
    case EstimateSource::kLearned:
      return "learned";
    case EstimateSource::kAnalytic:
      return "analytic";
    case EstimateSource::kKernelModel:
      return "kernel-model";
  }
  return "?";
}

bool parse_analytic_model(const std::string& name, AnalyticModel* out) {
  if (name == "kernel")
    *out = AnalyticModel::kKernel;
  else if (name == "roofline")
    *out = AnalyticModel::kRoofline;
  else
    return false;
  return true;
}

CostModelOptions parse_cost_model(const YamlMap& parent, const std::string& key,
                                  const std::string& base_dir) {
  if (!parent.has(key)) return CostModelOptions();
  YAML::Node n = parent.raw(key);
  if (n.IsScalar()) {
    CostModelOptions o;
    const std::string v = parent.str(key, "");
    if (!parse_analytic_model(v, &o.model))
      parent.fail(key,
                  "must be kernel, roofline or a mapping (docs/cost-models.md), got \"" + v + "\"");
    return o;
  }
  return parse_cost_model_options(parent.map(key), base_dir);
}

CostModelOptions parse_cost_model_options(const YamlMap& m, const std::string& base_dir) {
  CostModelOptions o;
  if (m.has("model")) {
    const std::string v = m.str("model", "kernel");
    if (!parse_analytic_model(v, &o.model))
      m.fail("model", "must be kernel or roofline, got \"" + v + "\"");
  }
  if (m.has("kernel_coefficients")) {
    try {
      o.kernel = std::make_shared<KernelCoefficients>(
          load_kernel_coefficients(scenario_relative(base_dir, m.str("kernel_coefficients", ""))));
    } catch (const InputError& e) {
      m.fail("kernel_coefficients", e.what());
    }
  }
  if (m.has("efficiency")) {
    YAML::Node n = m.raw("efficiency");
    if (n.IsScalar()) {
      o.efficiency.fill(read_efficiency(m, "efficiency", 0.7));
    } else {
      YamlMap e = m.map("efficiency");
      o.efficiency.fill(read_efficiency(e, "default", 0.7));
      for (int i = 0; i < kNumOpClasses; ++i) {
        const char* name = op_class_name(static_cast<OpClass>(i));
        o.efficiency[i] = read_efficiency(e, name, o.efficiency[i]);
      }
      e.reject_unknown_keys();
    }
  }
  o.allow_tf32 = m.boolean("allow_tf32", o.allow_tf32);
  o.cudnn_allow_tf32 = m.boolean("cudnn_allow_tf32", o.cudnn_allow_tf32);
  o.sustained_power = m.boolean("sustained_power", o.sustained_power);
  o.embedding_l2 = m.boolean("embedding_l2", o.embedding_l2);
  o.embedding_rows_per_block = m.integer("embedding_rows_per_block", o.embedding_rows_per_block);
  if (o.embedding_rows_per_block < 1) m.fail("embedding_rows_per_block", "must be at least 1");
  o.db_for_overridden_devices = m.boolean("db_for_overridden_devices", o.db_for_overridden_devices);
  if (m.has("profile_db")) {
    auto db = std::make_shared<ProfileDb>();
    for (const auto& f : m.str_list("profile_db")) {
      try {
        db->merge(load_profile_db(scenario_relative(base_dir, f)));
      } catch (const InputError& e) {
        m.fail("profile_db", e.what());
      }
    }
    o.db = std::move(db);
  }
  if (m.has("learned")) {
    try {
      o.learned = load_learned_estimator(scenario_relative(base_dir, m.str("learned", "")));
    } catch (const InputError& e) {
      m.fail("learned", e.what());
    }
  }
  m.reject_unknown_keys();
  return o;
}

CostModel::CostModel(CostModelOptions options) : options_(std::move(options)) {}

OpEstimate CostModel::estimate(const ModelOp& op, const DeviceSpec& dev) const {
  bool measured_ok = options_.db_for_overridden_devices || !dev.kernel_speed_overridden();
  if (options_.db && measured_ok) {
    std::vector<std::string> names{dev.name};
    names.insert(names.end(), dev.aliases.begin(), dev.aliases.end());
    if (auto hit = options_.db->lookup(op, names))
      return {hit->seconds, hit->exact ? EstimateSource::kDatabase : EstimateSource::kInterpolated,
              hit->detail};
  }
  if (options_.learned && measured_ok)
    if (auto t = options_.learned->estimate(op, dev)) return {*t, EstimateSource::kLearned, ""};
  return analytic(op, dev);
}

RooflineParts CostModel::roofline_parts(const ModelOp& op, const DeviceSpec& dev) const {
  RooflineParts p;
  p.efficiency = options_.efficiency_of(op_class(op.type));
  p.flops = op.flops;
  p.bytes = op.bytes;
  if (p.flops == 0 && p.bytes == 0 && is_known_op_type(op.type)) {
    OpCounts c = count_op(op);
    p.flops = c.flops;
    p.bytes = c.bytes;
  }
  p.mode = math_mode(op, dev, options_.allow_tf32, options_.cudnn_allow_tf32);
  p.peak_flops = dev.peak_flops(p.mode.dtype, p.mode.tensor_cores);
  p.time = roofline(p.flops, p.bytes, p.peak_flops, dev.mem_bw, p.efficiency);
  return p;
}

const KernelCoefficients& CostModel::coefficients() const {
  return options_.kernel ? *options_.kernel : shipped_kernel_coefficients();
}

std::optional<KernelEstimate> CostModel::kernel_estimate(const ModelOp& op,
                                                         const DeviceSpec& dev) const {
  if (!kernel_model_applies(dev) || op_class(op.type) == OpClass::kEmbedding) return std::nullopt;
  double flops = op.flops, bytes = op.bytes;
  if (flops == 0 && bytes == 0 && is_known_op_type(op.type)) {
    OpCounts c = count_op(op);
    flops = c.flops;
    bytes = c.bytes;
  }
  MathMode mode = math_mode(op, dev, options_.allow_tf32, options_.cudnn_allow_tf32);
  mode.sustained_power = options_.sustained_power;
  return kernel_time(op, dev, mode, flops, bytes, coefficients());
}

OpEstimate CostModel::analytic(const ModelOp& op, const DeviceSpec& dev) const {
  OpClass cls = op_class(op.type);
  double eff = options_.efficiency_of(cls);
  if (options_.model == AnalyticModel::kKernel)
    if (auto k = kernel_estimate(op, dev))
      return {k->seconds, EstimateSource::kKernelModel, k->model + ": " + k->detail};

  EmbeddingLookup lookup;
  if (cls == OpClass::kEmbedding && embedding_lookup_from_op(op, &lookup)) {
    EmbeddingTime t = embedding_lookup_time(lookup, dev, options_.embedding_rows_per_block,
                                            options_.embedding_l2, eff);
    return {t.seconds, EstimateSource::kAnalytic,
            "embedding model, L2 hit rate " + fixed("%.3g", t.hit_rate)};
  }

  const RooflineParts p = roofline_parts(op, dev);
  std::string detail = p.time.memory_bound ? "memory-bound" : "compute-bound";
  if (p.mode.tensor_cores) detail += std::string(", ") + dtype_name(p.mode.dtype) + " tensor cores";
  return {p.time.seconds, EstimateSource::kAnalytic, detail};
}

}  // namespace orrery
