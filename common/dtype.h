// Element types of tensors and of the arithmetic that runs on them: shared by the op graphs
// (workloads/model_graph.h), the device specs that give a peak rate per type
// (platforms/device_spec.h) and the cost models.
#pragma once

#include <cstdint>
#include <string>

namespace orrery {

enum class DType : uint8_t {
  kFP32 = 0,
  kFP16 = 1,
  kBF16 = 2,
  kTF32 = 3,
  kINT32 = 4,
  kINT64 = 5,
  kINT8 = 6,
  // FP8 as Transformer Engine uses it: E4M3 (forward) or E5M2 (gradients), one byte either way;
  // Tensor Cores multiply it with higher-precision accumulation (Hopper and later).
  kFP8 = 7,
  // FP4 (E2M1) as NVFP4 stores it: half a byte per element, block scales kept apart; Blackwell
  // Tensor Cores multiply it.
  kFP4 = 8
};
// "fp32", "fp16", "bf16", "tf32", "int32", "int64", "int8", "fp8", "fp4"
const char* dtype_name(DType t);
bool parse_dtype(const std::string& s, DType* out);
// The names parse_dtype accepts, in the order above, for messages: "fp32, fp16, bf16, tf32,
// int32, int64, int8, fp8 or fp4".
std::string dtype_names();
// Storage size of one element: tf32 is stored as 4 bytes, fp4 packs two elements in a byte.
double dtype_bytes(DType t);

}  // namespace orrery
