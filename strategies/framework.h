// The software stack a model is trained with, as an input: which op sequences its kernels fuse,
// which attention kernel it calls, whether it replays the step as a CUDA graph, and how it
// keeps weights. Real step times depend on these as much as on the GPU (docs/frameworks.md).
// The built-in profiles are strategies/frameworks/*.yaml (compiled in as the embedded set
// "frameworks"), each citing its sources; a scenario names one or writes its own:
//   framework: megatron-te
//   framework: {base: pytorch, cuda_graphs: true, fused: {norm: true}}
//   framework: my-stack.yaml           (a profile file beside the scenario)
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "workloads/attention_impl.h"
#include "workloads/kernel_fusion.h"

namespace orrery {

// Which op sequences run as one kernel (each way). false: the framework's eager decomposition,
// one kernel per PyTorch op (docs/frameworks.md lists the kernels and bytes of each).
struct FusedKernels {
  bool norm = true;              // RMSNorm as one kernel (eager: 8 forward kernels in FP32)
  bool rope = true;              // rotary embedding of q and k as one kernel (eager: 5 each)
  bool gated_activation = true;  // SwiGLU's SiLU and product as one kernel (eager: 2)
  bool projections = true;       // q, k, v as one GEMM, gate and up as one (eager: separate)
  bool cross_entropy = true;     // the loss without an FP32 copy of the logits
  bool optimizer = true;         // Adam as one multi-tensor pass (eager foreach: 7 passes)
  bool quantize = true;  // FP8/FP4 GEMM inputs written by the kernel before (no cast kernel)
  // Model graphs (zoo models, model files): workloads/kernel_fusion.h's rules. Off by default:
  // an op graph's ops are kernels unless the profile says they fuse.
  FusionRules model_graph;
};

struct FrameworkProfile {
  std::string name;  // file stem, "megatron-te"
  std::string description;
  std::vector<std::string> aliases;
  std::vector<std::string> sources;

  FusedKernels fused;
  // The attention core: fused (flash attention, `attention` the kernel) or materialized scores
  // (two batched GEMMs and a softmax).
  bool flash_attention = true;
  AttentionImpl attention = AttentionImpl::kAuto;
  // The step replays as captured CUDA graphs: no host time per kernel (the platform's per-op
  // launch cost, device host_overheads, applies otherwise).
  bool cuda_graphs = false;
  // Weights stay in FP32 and autocast casts each to the compute type when a forward pass uses
  // it (stock PyTorch AMP); false: 16-bit weights beside FP32 master copies in the optimizer
  // (Megatron, DeepSpeed, FSDP's mixed precision).
  bool fp32_weights = false;
  // Data parallelism as the framework sets it up when the scenario's strategy does not say:
  // gradient bucket bytes (0: one bucket per layer; < 0: the strategy's default) and ZeRO
  // stage (< 0: the strategy's default, 0).
  double bucket_bytes = -1;
  int zero = -1;
  // Tensor-parallel all-gathers and reduce-scatters beside the GEMMs they feed and drain
  // (Megatron's --tp-comm-overlap; needs sequence parallelism, which the strategy sets).
  bool tp_comm_overlap = false;
  // Pipeline sends block the sending stage until done (Megatron-LM's p2p).
  bool pp_sync = false;
  // Gradients accumulated in FP32 beside 16-bit weights (Megatron-LM's main_grad buffers).
  bool fp32_grads = false;
  // Activation checkpointing as the framework sets it up when the strategy does not say:
  // "" (the strategy's default, none), "none", "selective" (with recompute_modules) or "full".
  std::string recompute;
  std::vector<std::string> recompute_modules;

  // Keys a scenario changed from the named profile.
  std::vector<std::string> overridden;
};

// Names of the built-in profiles (file stems), sorted.
std::vector<std::string> framework_names();

// The built-in profile called `name` or with that alias (case-insensitive). Throws InputError
// listing the known names when there is none.
FrameworkProfile framework_profile(const std::string& name);

// Reads a profile's text (a profile file; `origin` names it). Throws InputError naming the file,
// line and key for unknown keys and bad values; `sources` is required.
FrameworkProfile parse_framework_file(const std::string& yaml_text, const std::string& name,
                                      const std::string& origin);

// A scenario's `framework:` value: a built-in name, a profile file (ending .yaml or .yml,
// relative to `base_dir`), or a mapping {base: NAME, KEY: value...} that changes keys of a
// built-in profile. Errors name `origin`, the line and `key_path`.
FrameworkProfile parse_framework(const YAML::Node& node, const std::string& origin,
                                 const std::string& base_dir,
                                 const std::string& key_path = "framework");

// The profile a workload runs with when the scenario names none: Megatron-Core with Transformer
// Engine for language models (`type: llm`), stock PyTorch eager for everything else.
std::string default_framework(bool language_model);

class YamlMap;
// The profile of a scenario (or job) mapping: its `framework` key, else the default above.
FrameworkProfile scenario_framework(const YamlMap& root, const std::string& base_dir,
                                    bool language_model);

// "megatron-te", or "pytorch with cuda_graphs changed".
std::string framework_label(const FrameworkProfile& f);

}  // namespace orrery
