// Mixed precision as a ModelGraph -> ModelGraph pass: choose each op's dtype under a precision
// policy, then insert cast ops (type "cast") wherever a tensor changes precision, so the casts
// are priced like any op. From Campo (docs/references.md):
//  - fp32: nothing changes.
//  - amp: the list rules of the framework's mixed-precision graph optimizer. An op runs in low
//    precision if (1) it is on the allowlist; (2) it is on the clearlist and its immediate
//    ancestors and descendants all run in low precision; (3) it is on the inferlist and no
//    denylist op is upstream of it. "Upstream" follows paths through infer/clear ops only, as
//    TensorFlow's auto_mixed_precision propagates deny (a downstream allowlist op re-casts its
//    inputs, so a deny op's numerical effect stops there). Denylist and unlisted ops keep FP32.
//  - cost-aware: start from amp's numerically safe set and keep an op in low precision only
//    where its FP16 gain exceeds the casts that choice adds (cast cost = r x size + C_I, Campo's
//    casting-cost model), deciding op by op until no choice changes.
//  - fp8: Transformer Engine's recipe (NVIDIA Transformer Engine documentation, "Using FP8 with
//    Transformer Engine"): amp's assignment in `low` (bf16 by default), then the GEMMs of linear
//    layers (their forward matmul, which owns weights, and the backward matmuls of the same
//    layer: fprop, dgrad and wgrad) in FP8 with higher-precision accumulation, their outputs
//    written in `low`. Casts into FP8 are inserted like any cast (activations, gradients and the
//    weights each step), and each FP8 GEMM gets its scaling op: "fp8_scale:<op>", the update of
//    the amax histories and scales of its three tensors (delayed scaling, 1024-entry history).
//    Attention products (bmm), norms, softmax and the optimizer keep their precision. On a GPU
//    without FP8 Tensor Cores nothing runs in FP8: the graph is amp's, and the report says why.
//  - mxfp8, nvfp4: the same GEMMs in Blackwell's block-scaled formats (OCP MXFP8: FP8 with an
//    E8M0 scale per 32 elements; NVFP4: FP4 with an E4M3 scale per 16), their casts writing the
//    scales too, and no amax history to update; on a GPU without FP4 Tensor Cores (the
//    generation that brought block scaling) the graph is amp's, and the report says why.
// Tensor Core speedups need aligned shapes (models/tensor_cores.h); the cost model applies that
// rule, so an unaligned FP16 GEMM gains only the CUDA-core FP16 rate and its halved bytes.
#pragma once

#include <set>
#include <string>

#include "common/yaml_reader.h"
#include "models/cost_model.h"
#include "platforms/device_spec.h"
#include "workloads/model_graph.h"

namespace orrery {

enum class PrecisionPolicy : unsigned char { kFP32 = 0, kAMP, kCostAware, kFP8, kMXFP8, kNVFP4 };
// "fp32", "amp", "cost-aware", "fp8", "mxfp8", "nvfp4"
const char* precision_policy_name(PrecisionPolicy p);
// fp8, mxfp8 and nvfp4: amp in bf16 with the linear layers' GEMMs in a low-precision format.
bool low_precision_gemms(PrecisionPolicy p);
bool parse_precision_policy(const std::string& s, PrecisionPolicy* out);

struct AmpLists {
  std::set<std::string> allow, deny, infer, clear;
  // Op types of workloads/op_counts.h sorted into TensorFlow's AMP lists (GEMMs and convolutions
  // allowed; softmax, cross-entropy, reductions and layer norm denied, as TF and PyTorch
  // autocast keep them in FP32; element-wise arithmetic, activations and batch norm inferred;
  // data movement, ReLU, max-pool and dropout clear). Embeddings, optimizer updates and casts
  // are on no list: they keep their dtype.
  static AmpLists defaults();
};

// Campo's casting cost: r x elements + C_I seconds.
struct CastCost {
  double per_element_s = 0.0;  // r
  double fixed_s = 0.0;        // C_I, the cast op's instance initialisation
  double operator()(double elements) const { return per_element_s * elements + fixed_s; }
};

// Defaults for a device: r streams 4 bytes in and 2 out per element at the memory class's
// efficiency; C_I is the host cost of one more op (HostOverheads::per_op()).
CastCost default_cast_cost(const DeviceSpec& dev, const CostModelOptions& options);

struct MixedPrecisionOptions {
  PrecisionPolicy policy = PrecisionPolicy::kFP32;
  DType low = DType::kFP16;  // fp16 or bf16
  AmpLists lists = AmpLists::defaults();
  // Cost-aware only: the device and cost model that price each op both ways, and the cast
  // cost (unset fields: default_cast_cost).
  const DeviceSpec* device = nullptr;
  const CostModel* cost = nullptr;
  double cast_per_element_s = -1;
  double cast_fixed_s = -1;
};

// Reads a scenario's `precision`: a policy name, or a mapping {policy: amp, low: fp16,
// allow: [...], deny: [...], infer: [...], clear: [...], cast_per_element: 1ns,
// cast_fixed: 5us}; a list replaces the default list. Strict keys.
MixedPrecisionOptions parse_precision_options(const YAML::Node& node, const std::string& origin,
                                              const std::string& key_path = "precision");

struct MixedPrecisionReport {
  int low_ops = 0;  // ops of the input graph now in low precision (FP8 ones included)
  int casts = 0;    // cast ops inserted
  double cast_elements = 0.0;
  // fp8, mxfp8, nvfp4: GEMMs in the policy's format (under fp8 each with one fp8_scale op), and
  // why none runs in it ("" when they do).
  int fp8_ops = 0;
  std::string fp8_fallback;
};

// Returns the rewritten graph: dtypes set, FLOP/byte counts recomputed for ops whose dtype
// changed, and cast ops inserted (named "cast:<producer>-><dtype>" or "cast:<op>:input" /
// "cast:<op>:weights"), with deps rewired through them. Casts go:
//  - on every dep edge whose producer's dtype differs from the consumer's (one cast per
//    producer and target dtype, shared by its consumers), sized by the producer's output;
//  - before a low-precision op without deps, for its first input (graph inputs are FP32);
//  - before a low-precision op that owns parameters, for its FP32 master weights (the weight
//    copy AMP makes once per step).
// Throws InputError when cost-aware, fp8, mxfp8 or nvfp4 lacks a device (cost-aware: or a cost
// model), or `low` is not fp16/bf16.
ModelGraph apply_mixed_precision(const ModelGraph& g, const MixedPrecisionOptions& options,
                                 MixedPrecisionReport* report = nullptr);

}  // namespace orrery
