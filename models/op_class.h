// Op classes: the groups of op types that share a kernel family and so an efficiency factor in
// the analytic cost model (the fraction of peak FLOP/s and bandwidth a kernel reaches).
// PAI (section II-B) assumes 70% for every class; measurements may set
// each class apart (e.g. GEMMs reach more of peak than scatter/gather kernels).
#pragma once

#include <string>
#include <vector>

namespace orrery {

enum class OpClass : unsigned char {
  kGemm = 0,       // matmul, bmm
  kConv,           // conv2d and its two backward ops
  kElementwise,    // add, relu, gelu, dropout... and anything unlisted
  kReduction,      // reduce, softmax, cross_entropy (+ backward)
  kNormalization,  // layernorm, batchnorm (+ backward)
  kPooling,        // maxpool, avgpool (+ backward)
  kEmbedding,      // embedding_fwd, embedding_bwd
  kMemory,         // concat, split, transpose, memcpy, cast
  kOptimizer,      // sgd_update, momentum_update, adam_update
};
inline constexpr int kNumOpClasses = 9;

OpClass op_class(const std::string& op_type);
const char* op_class_name(OpClass c);  // "gemm", "conv", "elementwise", ...
bool parse_op_class(const std::string& s, OpClass* out);
std::vector<std::string> op_class_names();

// Classes whose time the PAI model counts as compute-bound FLOPs (the rest as memory access).
bool is_compute_bound_class(OpClass c);

}  // namespace orrery
