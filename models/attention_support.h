// What each fused attention kernel (workloads/attention_impl.h) can run on a GPU, and at what
// share of the Tensor Core peak. The attention model (models/kernel_model.h) is fitted on kernels
// that use each GPU's fastest Tensor Core instructions (TensorRT-LLM's; FlashAttention-3 and
// cuDNN's fused attention are of that class). FlashAttention-2 is written with Ampere's
// synchronous MMA instructions, which on Hopper and datacenter Blackwell reach only part of the
// peak: FlashAttention-3 (Shah, Bikshandi, Zhang, Thakkar, Ramani, Dao, 2024) measures that
// mma.sync reaches about two thirds of the H100's Tensor Core throughput.
#pragma once

#include <string>

#include "platforms/device_spec.h"
#include "workloads/attention_impl.h"

namespace orrery {

// Why `impl` cannot run attention in `dtype` on `dev` ("" when it can): FlashAttention-2 needs
// compute capability 8.0 or later and runs fp16/bf16 only, FlashAttention-3 is built for Hopper
// (9.0) only, cuDNN's fused flash attention needs 8.0 or later. A spec without a compute
// capability is taken to run anything.
std::string attention_impl_unsupported(AttentionImpl impl, const DeviceSpec& dev, DType dtype);

// The share of the Tensor Core peak `impl`'s matrix products reach on `dev`: 2/3 for
// FlashAttention-2 where the peak needs asynchronous MMA (wgmma on Hopper, tcgen05 on datacenter
// Blackwell: compute capability 9.0 to 11.x), 1 otherwise.
double attention_mma_share(AttentionImpl impl, const DeviceSpec& dev);

}  // namespace orrery
