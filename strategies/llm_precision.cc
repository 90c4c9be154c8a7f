#include "strategies/llm_precision.h"

namespace orrery {

double LowPrecision::element_bytes() const {
  const double scales = scale_block > 0 ? scale_bytes / scale_block : 0.0;
  return dtype_bytes(gemm) + scales;
}

LowPrecision low_precision(Precision p, bool any_layout_fp8) {
  LowPrecision r;
  switch (p) {
    case Precision::kFp8:
      r.gemm = DType::kFP8;
      r.transposed_copy = !any_layout_fp8;
      r.delayed_scaling = true;
      break;
    case Precision::kFp8Cs:
      r.gemm = DType::kFP8;
      r.transposed_copy = !any_layout_fp8;
      r.current_scaling = true;
      break;
    case Precision::kMxfp8:
      r.gemm = DType::kFP8;
      r.scale_block = 32;
      r.scale_bytes = 1;  // E8M0
      r.transposed_copy = true;
      break;
    case Precision::kNvfp4:
      r.gemm = DType::kFP4;
      r.scale_block = 16;
      r.scale_bytes = 1;  // E4M3
      r.transposed_copy = true;
      r.hadamard = 16;
      break;
    default:
      r.gemm = precision_dtype(p);
      break;
  }
  return r;
}

bool any_layout_fp8(const DeviceSpec& device) { return device.blackwell_tensor_cores(); }

std::string low_precision_unsupported(Precision p, const DeviceSpec& device) {
  const LowPrecision r = low_precision(p);
  if (!r.active()) return "";
  const bool fp8 = device.has_tensor_core_path(DType::kFP8);
  const std::string name = precision_name(p);
  const bool per_tensor = p == Precision::kFp8 || p == Precision::kFp8Cs;
  if (per_tensor && !fp8)
    return device.name + " has no FP8 Tensor Cores (Hopper and later have them)";
  if (!per_tensor && !device.blackwell_tensor_cores())
    return device.name + " has no block-scaled (" + name +
           ") Tensor Cores (Blackwell and later have them)";
  return "";
}

ParallelPlan plan_on_device(const ParallelPlan& plan, const DeviceSpec& device, std::string* why) {
  ParallelPlan out = plan;
  const std::string reason = low_precision_unsupported(plan.precision, device);
  if (!reason.empty()) out.precision = Precision::kBf16;
  if (why) *why = reason;
  return out;
}

}  // namespace orrery
