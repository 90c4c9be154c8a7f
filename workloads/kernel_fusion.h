// Which op sequences of a model's op graph a framework runs as one kernel (docs/frameworks.md,
// "Model workloads"). A fused pair is one op: the producer's work and the consumer's, less the
// intermediate tensor the producer no longer writes and the consumer no longer reads. A pair
// fuses only when the consumer is the producer's one consumer (a tensor someone else reads must
// reach memory anyway).
#pragma once

#include "workloads/model_graph.h"

namespace orrery {

struct FusionRules {
  // Batch norm with the ReLU after it, and the residual add between them (cuDNN's
  // batch-norm-add-activation, TensorFlow's fused batch norm); backward the ReLU's gradient into
  // the batch norm's.
  bool bn_activation = false;
  // A transformer's dropout, residual add and layer norm (Megatron's fused bias-dropout-add
  // feeding the norm).
  bool dropout_add_norm = false;
  // Attention's scale and mask, softmax and dropout over the scores (Megatron and Apex's fused
  // scale-mask-softmax); backward the dropout's gradient into the softmax's and the scale's.
  bool softmax_mask = false;
  // A precision cast folded into the kernel that reads its output.
  bool casts = false;
  // Any chain of element-wise, normalization, softmax and cast ops (XLA, TorchInductor).
  bool elementwise = false;

  bool any() const {
    return bn_activation || dropout_add_norm || softmax_mask || casts || elementwise;
  }
};

struct FusionReport {
  int fused = 0;  // pairs merged (kernels saved)
  double bytes_saved = 0;
};

// `g` with the rules' sequences merged into single ops. A merged op keeps the name of its first
// op with "+type" of each one merged into it, the producer's layer, and a row op's type
// (layernorm, softmax) where one takes part, else the producer's; deps, parameters and gradients
// are the union. The graph's order and every other op are kept.
ModelGraph fuse_kernels(const ModelGraph& g, const FusionRules& rules,
                        FusionReport* report = nullptr);

}  // namespace orrery
