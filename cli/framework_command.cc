// `orrery frameworks [NAME]`: the built-in software-stack profiles (strategies/framework.h).
#include <algorithm>
#include <cstdio>
#include <string>

#include "cli/commands.h"
#include "common/units.h"
#include "strategies/framework.h"

namespace orrery {
namespace {

const char* yes(bool v) { return v ? "fused" : "eager"; }

std::string attention_text(const FrameworkProfile& f) {
  return f.flash_attention ? attention_impl_name(f.attention) : "materialized";
}

int show(const std::string& name) {
  const FrameworkProfile f = framework_profile(name);
  std::printf("%s: %s\n", f.name.c_str(), f.description.c_str());
  if (!f.aliases.empty()) {
    std::string a;
    for (const auto& s : f.aliases) a += (a.empty() ? "" : ", ") + s;
    std::printf("  aliases: %s\n", a.c_str());
  }
  std::printf(
      "  kernels: norm %s, rotary %s, gated activation %s, q/k/v and gate/up %s, loss %s, "
      "optimizer %s, FP8 casts %s\n",
      yes(f.fused.norm), yes(f.fused.rope), yes(f.fused.gated_activation),
      f.fused.projections ? "one GEMM each" : "separate GEMMs", yes(f.fused.cross_entropy),
      yes(f.fused.optimizer), f.fused.quantize ? "in the kernel before" : "separate");
  std::printf("  attention %s, CUDA graphs %s, weights %s\n", attention_text(f).c_str(),
              f.cuda_graphs ? "yes" : "no",
              f.fp32_weights ? "FP32 (autocast casts them)" : "16-bit, FP32 master copies");
  std::printf("  data parallel: bucket %s, ZeRO %s\n",
              f.bucket_bytes < 0
                  ? "the strategy's"
                  : (f.bucket_bytes == 0 ? "per layer" : format_size(f.bucket_bytes).c_str()),
              f.zero < 0 ? "the strategy's" : std::to_string(f.zero).c_str());
  std::printf("  sources:\n");
  for (const auto& s : f.sources) std::printf("    - %s\n", s.c_str());
  return 0;
}

int list() {
  const auto names = framework_names();
  int width = 9;
  for (const auto& n : names) width = std::max(width, static_cast<int>(n.size()));
  std::printf("%-*s %s\n", width, "framework", "description");
  for (const auto& n : names)
    std::printf("%-*s %s\n", width, n.c_str(), framework_profile(n).description.c_str());
  std::printf(
      "\nA scenario names one with `framework: NAME` (default: megatron-te for type: llm, pytorch\n"
      "otherwise), changes one with {base: NAME, ...} or gives its own file; docs/frameworks.md.\n"
      "orrery frameworks NAME shows a profile.\n");
  return 0;
}

}  // namespace

void register_framework_commands(CLI::App& app, CommandList& out) {
  static std::string name;
  auto* cmd = app.add_subcommand(
      "frameworks", "List the built-in software-stack profiles (framework:), or show one in full");
  cmd->add_option("name", name, "A profile name or alias");
  out.push_back({cmd, [] { return name.empty() ? list() : show(name); }});
}

}  // namespace orrery
