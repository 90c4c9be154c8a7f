#include "models/attention_support.h"

#include <cstdio>

namespace orrery {
namespace {

// Hopper (9.0) and datacenter Blackwell (10.x): Tensor Cores fed by wgmma / tcgen05. Ampere,
// Ada and workstation Blackwell (12.x) reach their peak with mma.sync.
bool needs_async_mma(const DeviceSpec& dev) {
  return dev.compute_capability >= 9.0 && dev.compute_capability < 12.0;
}

std::string on_device(const DeviceSpec& dev) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", dev.compute_capability);
  return dev.name + " is " + buf;
}

}  // namespace

std::string attention_impl_unsupported(AttentionImpl impl, const DeviceSpec& dev, DType dtype) {
  const double cc = dev.compute_capability;
  if (cc <= 0) return "";
  switch (impl) {
    case AttentionImpl::kFlash2:
      if (cc < 8.0)
        return "FlashAttention-2 needs compute capability 8.0 or later; " + on_device(dev);
      if (dtype != DType::kFP16 && dtype != DType::kBF16)
        return std::string("FlashAttention-2 runs fp16 and bf16 only, not ") + dtype_name(dtype);
      return "";
    case AttentionImpl::kFlash3:
      if (cc < 9.0 || cc >= 10.0)
        return "FlashAttention-3 is built for Hopper (compute capability 9.0) only; " +
               on_device(dev);
      return "";
    case AttentionImpl::kCudnn:
      if (cc < 8.0)
        return "cuDNN's fused flash attention needs compute capability 8.0 or later; " +
               on_device(dev);
      return "";
    case AttentionImpl::kAuto:
      return "";
  }
  return "";
}

double attention_mma_share(AttentionImpl impl, const DeviceSpec& dev) {
  return impl == AttentionImpl::kFlash2 && needs_async_mma(dev) ? 2.0 / 3.0 : 1.0;
}

}  // namespace orrery
