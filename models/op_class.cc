#include "models/op_class.h"

#include <map>

namespace orrery {

OpClass op_class(const std::string& t) {
  static const std::map<std::string, OpClass> table = {
      {"matmul", OpClass::kGemm},
      {"bmm", OpClass::kGemm},
      {"attention", OpClass::kGemm},  // Tensor Core products with the softmax between them
      {"attention_bwd", OpClass::kGemm},
      {"conv2d", OpClass::kConv},
      {"conv2d_bwd_data", OpClass::kConv},
      {"conv2d_bwd_filter", OpClass::kConv},
      {"reduce", OpClass::kReduction},
      {"softmax", OpClass::kReduction},
      {"softmax_bwd", OpClass::kReduction},
      {"cross_entropy", OpClass::kReduction},
      {"cross_entropy_bwd", OpClass::kReduction},
      {"layernorm", OpClass::kNormalization},
      {"layernorm_bwd", OpClass::kNormalization},
      {"batchnorm", OpClass::kNormalization},
      {"batchnorm_bwd", OpClass::kNormalization},
      {"maxpool", OpClass::kPooling},
      {"maxpool_bwd", OpClass::kPooling},
      {"avgpool", OpClass::kPooling},
      {"avgpool_bwd", OpClass::kPooling},
      {"embedding_fwd", OpClass::kEmbedding},
      {"embedding_bwd", OpClass::kEmbedding},
      {"concat", OpClass::kMemory},
      {"split", OpClass::kMemory},
      {"transpose", OpClass::kMemory},
      {"memcpy", OpClass::kMemory},
      {"cast", OpClass::kMemory},
      {"sgd_update", OpClass::kOptimizer},
      {"momentum_update", OpClass::kOptimizer},
      {"adam_update", OpClass::kOptimizer},
  };
  auto it = table.find(t);
  return it == table.end() ? OpClass::kElementwise : it->second;
}

namespace {
constexpr const char* kNames[kNumOpClasses] = {"gemm",      "conv",          "elementwise",
                                               "reduction", "normalization", "pooling",
                                               "embedding", "memory",        "optimizer"};
}

const char* op_class_name(OpClass c) {
  int i = static_cast<int>(c);
  return i >= 0 && i < kNumOpClasses ? kNames[i] : "?";
}

bool parse_op_class(const std::string& s, OpClass* out) {
  for (int i = 0; i < kNumOpClasses; ++i)
    if (s == kNames[i]) {
      *out = static_cast<OpClass>(i);
      return true;
    }
  return false;
}

std::vector<std::string> op_class_names() { return {kNames, kNames + kNumOpClasses}; }

bool is_compute_bound_class(OpClass c) { return c == OpClass::kGemm || c == OpClass::kConv; }

}  // namespace orrery
