#include "models/tensor_cores.h"

namespace orrery {
namespace {

bool multiple(int64_t v, int a) { return v > 0 && v % a == 0; }

bool is_gemm(const std::string& t) {
  return t == "matmul" || t == "bmm" || t == "attention" || t == "attention_bwd";
}
bool is_conv(const std::string& t) {
  return t == "conv2d" || t == "conv2d_bwd_data" || t == "conv2d_bwd_filter";
}

// Input and output channels of a convolution op (C, K), from its conventions in op_counts.h.
bool conv_channels(const ModelOp& op, int64_t* c, int64_t* k) {
  if (op.inputs.size() < 2 || op.inputs[0].size() != 4 || op.inputs[1].size() != 4) return false;
  if (op.type == "conv2d") {  // x [N,C,H,W], w [K,C/g,R,S]
    *c = op.inputs[0][1];
    *k = op.inputs[1][0];
  } else if (op.type == "conv2d_bwd_data") {  // dy [N,K,P,Q], w [K,C/g,R,S] -> dx [N,C,H,W]
    *k = op.inputs[0][1];
    *c = op.output.size() == 4 ? op.output[1] : op.inputs[1][1];
  } else {  // conv2d_bwd_filter: x [N,C,H,W], dy [N,K,P,Q]
    *c = op.inputs[0][1];
    *k = op.inputs[1][1];
  }
  return true;
}

}  // namespace

int tensor_core_alignment(DType t) {
  switch (t) {
    case DType::kFP16:
    case DType::kBF16:
      return 8;
    case DType::kTF32:
      return 4;
    case DType::kINT8:
    case DType::kFP8:  // 16 one-byte elements: the 16-byte alignment of cuBLASLt's FP8 GEMMs
      return 16;
    case DType::kFP4:  // 32 half-byte elements: the same 16 bytes
      return 32;
    default:
      return 0;
  }
}

bool tensor_core_shapes_ok(const ModelOp& op, DType t) {
  int a = tensor_core_alignment(t);
  if (a == 0) return false;
  if ((op.type == "attention" || op.type == "attention_bwd") && !op.inputs.empty() &&
      !op.inputs[0].empty())
    return multiple(op.inputs[0].back(), a);  // the products' inner dimension is the head's
  if (is_gemm(op.type)) {
    if (op.inputs.size() < 2 || op.inputs[0].size() < 2 || op.inputs[1].size() < 2) return false;
    const Shape& x = op.inputs[0];
    const Shape& y = op.inputs[1];
    return multiple(x[x.size() - 2], a) && multiple(x.back(), a) && multiple(y.back(), a);
  }
  if (is_conv(op.type)) {
    int64_t c = 0, k = 0;
    return conv_channels(op, &c, &k) && multiple(c, a) && multiple(k, a);
  }
  return false;
}

bool has_tensor_core_kernels(const std::string& op_type) {
  return is_gemm(op_type) || is_conv(op_type);
}

DType fallback_dtype(DType t, const DeviceSpec& dev) {
  if ((t != DType::kFP8 && t != DType::kFP4) || dev.has_tensor_core_path(t)) return t;
  return dev.peak_flops(DType::kFP16, true) > dev.peak_flops(DType::kBF16, true) ? DType::kFP16
                                                                                 : DType::kBF16;
}

MathMode math_mode(const ModelOp& op, const DeviceSpec& dev, bool gemm_tf32, bool conv_tf32) {
  MathMode m;
  m.dtype = op.dtype;
  const bool tf32 = (gemm_tf32 && is_gemm(op.type)) || (conv_tf32 && is_conv(op.type));
  if (op.dtype == DType::kFP32 && tf32 && dev.has_tensor_core_path(DType::kTF32))
    m.dtype = DType::kTF32;
  // FP8 and FP4 have no CUDA-core path (the fallback orrery cost and the LLM plans report).
  const bool kernels = has_tensor_core_kernels(op.type);
  if (kernels) m.dtype = fallback_dtype(m.dtype, dev);
  m.tensor_cores = dev.has_tensor_core_path(m.dtype) && kernels;
  m.aligned = !m.tensor_cores || tensor_core_shapes_ok(op, m.dtype);
  // FP32 tensors allowed to run as TF32 take the TF32 kernels only when aligned: otherwise cuDNN
  // and cuBLAS keep them on FP32 SIMT kernels (the A100's unaligned FP32 convolutions of the
  // NeuSight data all ran as sgemm or scudnn kernels).
  if (m.dtype == DType::kTF32 && !m.aligned) m.tensor_cores = false;
  if (m.dtype == DType::kTF32 && !m.tensor_cores) {
    m.dtype = DType::kFP32;
    m.aligned = true;
  }
  return m;
}

}  // namespace orrery
