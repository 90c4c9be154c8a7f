// Which fused attention kernel an `attention` op asks for: the library a framework calls. Held in
// the op's `impl` attribute; what each can run and how fast is the cost models' business
// (models/attention_support.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "workloads/model_graph.h"

namespace orrery {

// auto: the fastest fused kernel the GPU's software has (cuDNN, FlashAttention-3 on Hopper,
// TensorRT-LLM's); flash2: FlashAttention-2 (Dao 2023); flash3: FlashAttention-3 (Shah et al.
// 2024); cudnn: cuDNN's fused flash attention.
enum class AttentionImpl : int64_t { kAuto = 0, kFlash2 = 1, kFlash3 = 2, kCudnn = 3 };

// "auto", "flash2", "flash3", "cudnn".
const char* attention_impl_name(AttentionImpl impl);
// Parses a name above; false when `text` names none.
bool parse_attention_impl(const std::string& text, AttentionImpl* impl);
// The names above in order, and as "auto, flash2, flash3 or cudnn" for messages and help.
std::vector<std::string> attention_impl_choices();
std::string attention_impl_names();

// The op's `impl` attribute (kAuto when absent). Throws InputError naming the op when the
// attribute holds no known value.
AttentionImpl attention_impl(const ModelOp& op);

}  // namespace orrery
