#include "strategies/framework.h"

#include <filesystem>

#include "common/embedded_data.h"
#include "common/errors.h"
#include "common/input_file.h"
#include "common/input_limits.h"
#include "common/named_set.h"
#include "common/suggest.h"
#include "common/yaml_reader.h"
#include "strategies/parallel_plan.h"

namespace orrery {
namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The value keys of a profile, read into `f` where present; `seen` collects their dotted names.
void read_fields(const YamlMap& m, FrameworkProfile* f, std::vector<std::string>* seen) {
  auto flag = [&](const YamlMap& at, const char* key, const std::string& path, bool* v) {
    if (!at.has(key)) return;
    *v = at.boolean(key, *v);
    seen->push_back(path);
  };
  if (m.has("fused")) {
    const YamlMap fm = m.map("fused");
    flag(fm, "norm", "fused.norm", &f->fused.norm);
    flag(fm, "rope", "fused.rope", &f->fused.rope);
    flag(fm, "gated_activation", "fused.gated_activation", &f->fused.gated_activation);
    flag(fm, "projections", "fused.projections", &f->fused.projections);
    flag(fm, "cross_entropy", "fused.cross_entropy", &f->fused.cross_entropy);
    flag(fm, "optimizer", "fused.optimizer", &f->fused.optimizer);
    flag(fm, "quantize", "fused.quantize", &f->fused.quantize);
    FusionRules& g = f->fused.model_graph;
    flag(fm, "bn_activation", "fused.bn_activation", &g.bn_activation);
    flag(fm, "dropout_add_norm", "fused.dropout_add_norm", &g.dropout_add_norm);
    flag(fm, "softmax_mask", "fused.softmax_mask", &g.softmax_mask);
    flag(fm, "casts", "fused.casts", &g.casts);
    flag(fm, "elementwise", "fused.elementwise", &g.elementwise);
    fm.reject_unknown_keys();
  }
  if (m.has("attention")) {
    const std::string a = m.str("attention", "auto");
    f->flash_attention = a != "materialized";
    f->attention = AttentionImpl::kAuto;
    if (f->flash_attention && !parse_attention_impl(a, &f->attention))
      m.fail("attention",
             "expected materialized, " + attention_impl_names() + ", got \"" + a + "\"");
    seen->push_back("attention");
  }
  flag(m, "cuda_graphs", "cuda_graphs", &f->cuda_graphs);
  flag(m, "fp32_weights", "fp32_weights", &f->fp32_weights);
  flag(m, "tp_comm_overlap", "tp_comm_overlap", &f->tp_comm_overlap);
  flag(m, "pp_sync", "pp_sync", &f->pp_sync);
  flag(m, "fp32_grads", "fp32_grads", &f->fp32_grads);
  if (m.has("recompute")) {
    f->recompute = m.str("recompute", "none");
    Recompute r;
    if (!parse_recompute(f->recompute, &r))
      m.fail("recompute", "expected " + recompute_choices() + ", got \"" + f->recompute + "\"");
    seen->push_back("recompute");
  }
  if (m.has("recompute_modules")) {
    f->recompute_modules = m.str_list("recompute_modules");
    for (const std::string& name : f->recompute_modules) {
      unsigned bit = 0;
      if (!parse_recompute_module(name, &bit))
        m.fail("recompute_modules",
               "expected " + recompute_module_choices() + ", got \"" + name + "\"");
    }
    seen->push_back("recompute_modules");
  }
  if (m.has("bucket")) {
    f->bucket_bytes = m.size("bucket", 0.0, limits::kBucketBytes);
    seen->push_back("bucket");
  }
  if (m.has("zero")) {
    f->zero = m.integer("zero", 0, 0, 3);
    seen->push_back("zero");
  }
}

const NamedSet<FrameworkProfile>& registry() {
  static const NamedSet<FrameworkProfile> reg = [] {
    NamedSet<FrameworkProfile> r("framework", "strategies/frameworks");
    for (const auto& [stem, text] : embedded_files("frameworks")) {
      FrameworkProfile f =
          parse_framework_file(text, stem, "strategies/frameworks/" + stem + ".yaml");
      const std::vector<std::string> aliases = f.aliases;
      r.add(stem, std::move(f), aliases);
    }
    return r;
  }();
  return reg;
}

}  // namespace

std::vector<std::string> framework_names() { return registry().names(); }

FrameworkProfile framework_profile(const std::string& name) {
  return registry().get(name, "; or a profile file ending .yaml");
}

FrameworkProfile parse_framework_file(const std::string& yaml_text, const std::string& name,
                                      const std::string& origin) {
  const YAML::Node root = load_yaml_text(yaml_text, origin);
  const YamlMap m(root, origin);
  FrameworkProfile f;
  f.name = name;
  f.description = m.str("description", "");
  if (m.has("aliases")) f.aliases = m.str_list("aliases");
  if (m.has("sources")) f.sources = m.str_list("sources");
  if (f.sources.empty()) m.fail("sources", "is required: say where the profile comes from");
  std::vector<std::string> seen;
  read_fields(m, &f, &seen);
  m.reject_unknown_keys();
  return f;
}

FrameworkProfile parse_framework(const YAML::Node& node, const std::string& origin,
                                 const std::string& base_dir, const std::string& key_path) {
  const std::string line = node ? ":" + std::to_string(node.Mark().line + 1) : "";
  if (node && node.IsScalar()) {
    const std::string value = node.Scalar();
    try {
      if (ends_with(value, ".yaml") || ends_with(value, ".yml")) {
        std::filesystem::path p(value);
        if (p.is_relative() && !base_dir.empty()) p = std::filesystem::path(base_dir) / p;
        return parse_framework_file(read_input_file(p.string(), "framework profile"),
                                    p.stem().string(), p.string());
      }
      return framework_profile(value);
    } catch (const InputError& e) {
      throw InputError(origin + line + ": " + key_path + ": " + e.what());
    }
  }
  const YamlMap m(node, origin, key_path);
  if (!m.has("base"))
    m.fail("base",
           "is required: the built-in profile to change (" + join_names(framework_names()) + ")");
  FrameworkProfile f;
  try {
    f = framework_profile(m.required_str("base"));
  } catch (const InputError& e) {
    m.fail("base", e.what());
  }
  std::vector<std::string> seen;
  read_fields(m, &f, &seen);
  m.reject_unknown_keys();
  f.overridden = seen;
  return f;
}

std::string default_framework(bool language_model) {
  return language_model ? "megatron-te" : "pytorch";
}

FrameworkProfile scenario_framework(const YamlMap& root, const std::string& base_dir,
                                    bool language_model) {
  if (root.has("framework")) return parse_framework(root.raw("framework"), root.origin(), base_dir);
  return framework_profile(default_framework(language_model));
}

std::string framework_label(const FrameworkProfile& f) {
  if (f.overridden.empty()) return f.name;
  std::string s = f.name + " with ";
  for (size_t i = 0; i < f.overridden.size(); ++i) s += (i ? ", " : "") + f.overridden[i];
  return s + " changed";
}

}  // namespace orrery
