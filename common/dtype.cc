#include "common/dtype.h"

namespace orrery {

namespace {
constexpr DType kAllTypes[] = {DType::kFP32, DType::kFP16,  DType::kBF16,
                               DType::kTF32, DType::kINT32, DType::kINT64,
                               DType::kINT8, DType::kFP8,   DType::kFP4};
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::kFP32:
      return "fp32";
    case DType::kFP16:
      return "fp16";
    case DType::kBF16:
      return "bf16";
    case DType::kTF32:
      return "tf32";
    case DType::kINT32:
      return "int32";
    case DType::kINT64:
      return "int64";
    case DType::kINT8:
      return "int8";
    case DType::kFP8:
      return "fp8";
    case DType::kFP4:
      return "fp4";
  }
  return "?";
}

bool parse_dtype(const std::string& s, DType* out) {
  for (DType t : kAllTypes)
    if (s == dtype_name(t)) {
      *out = t;
      return true;
    }
  return false;
}

std::string dtype_names() {
  std::string s;
  const size_t n = sizeof kAllTypes / sizeof kAllTypes[0];
  for (size_t i = 0; i < n; ++i)
    s += std::string(i == 0 ? "" : i + 1 == n ? " or " : ", ") + dtype_name(kAllTypes[i]);
  return s;
}

double dtype_bytes(DType t) {
  switch (t) {
    case DType::kFP16:
    case DType::kBF16:
      return 2;
    case DType::kINT64:
      return 8;
    case DType::kINT8:
    case DType::kFP8:
      return 1;
    case DType::kFP4:
      return 0.5;
    default:
      return 4;
  }
}

}  // namespace orrery
