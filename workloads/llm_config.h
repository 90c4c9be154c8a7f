// Decoder-only language models as their architecture numbers: what parallelism plans, the
// memory model and throughput figures (tokens/s, TFLOP/s per GPU, MFU) need. Built in: the
// GPT-3 family (Brown et al., "Language Models are Few-Shot Learners", Table 2.1), LLaMA-2
// 7B/13B/70B, Llama-3 8B/70B/405B, Mixtral 8x7B, Qwen2 7B, Qwen3 8B, 30B-A3B and 235B-A22B, and
// Gemma 2 9B and 27B (their published config.json files); any other from a Hugging Face-style
// config.json (llama, mistral, mixtral, qwen2, qwen3, qwen3_moe, gemma2, gpt2, gpt_neox).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace orrery {

struct LlmConfig {
  std::string name;
  int64_t hidden = 0;      // model width h
  int64_t layers = 0;      // transformer layers l
  int64_t heads = 0;       // attention (query) heads a
  int64_t kv_heads = 0;    // key/value heads (grouped-query attention; = heads for multi-head)
  int64_t ffn = 0;         // feed-forward width f (per expert for mixtures of experts)
  int64_t vocab = 0;       // vocabulary V
  int64_t seq_len = 0;     // training sequence length s (max_position_embeddings)
  bool gated_mlp = false;  // SwiGLU: gate and up projections, then down (LLaMA, Mixtral)
  bool tied_embeddings = false;    // the output head reuses the token embedding (GPT-3, GPT-2)
  bool learned_positions = false;  // position embedding table of seq_len x h (GPT); else RoPE
  bool biases = false;             // linear layers and norms with biases (GPT: LayerNorm)
  int64_t experts = 1;             // experts per MoE layer (1: dense)
  int64_t top_k = 1;               // experts each token is routed to
  // Per-head width when the config gives one that is not hidden / heads (Qwen3, Mistral NeMo,
  // Gemma): the query projection is then heads x head_size wide. 0: hidden / heads.
  int64_t head_size = 0;
  bool qkv_bias = false;  // biases on the q, k and v projections only (Qwen2)
  bool qk_norm = false;   // RMSNorm over each head of q and k (Qwen3)
  bool sandwich_norm = false;  // norms after attention and the MLP too (Gemma 2): 4 per layer
  // Sliding-window attention on some layers (Gemma 2: every other layer attends over the last
  // 4096 tokens): `local_layers` of every `local_layers` + 1 layers keep `sliding_window` keys.
  int64_t sliding_window = 0;
  int64_t local_layers = 0;

  int64_t head_dim() const { return head_size > 0 ? head_size : hidden / heads; }
  // Width of the queries (and of the attention output before its projection).
  int64_t q_width() const { return heads * head_dim(); }
  bool moe() const { return experts > 1; }
};

// Parameter counts. `total` counts every weight (all experts); `active` the weights one token
// uses (top_k experts); `embedding` the token (and position) tables and an untied output head.
struct LlmParams {
  double total = 0;
  double active = 0;
  double embedding = 0;  // token and position tables, and the output head when untied
  // One transformer layer: per_layer = attention + norms + router + expert x experts.
  double per_layer = 0;
  double attention = 0;  // query, key, value and output projections
  double norms = 0;      // its two norms
  double router = 0;     // MoE gate (0 for dense models)
  double expert = 0;     // one MLP (the MLP of a dense model)
};
LlmParams llm_params(const LlmConfig& c);

// Model FLOPs of training on one token (forward and backward, no recomputation), as in
// Narayanan et al., "Efficient Large-Scale Language Model Training on GPU Clusters Using
// Megatron-LM" (SC'21), section 5.1: 3 x (2 x the active matmul weights + 4 s h per layer for
// the attention scores and their use + 2 h V for the logits). For GPT-3 this is their
// 72 B s l h^2 (1 + s/(6h) + V/(12 l h)) / (B s).
double llm_training_flops_per_token(const LlmConfig& c, int64_t seq_len);

// The built-in models, in size order within each family.
const std::vector<LlmConfig>& llm_zoo();
// A built-in model by name (case-insensitive: "gpt3_175b", "llama2_70b", "mixtral_8x7b"...);
// nullptr if unknown.
const LlmConfig* find_llm(const std::string& name);

// Reads a config.json's text (`origin` names it in messages); the name is `name`. Throws
// InputError naming the origin and the field for bad JSON, an unknown model_type (listing the
// known ones), a missing or non-positive size, or sizes that do not divide (hidden by heads,
// heads by kv heads).
LlmConfig read_llm_config(const std::string& json_text, const std::string& origin,
                          const std::string& name);

// Throws InputError naming `origin` when the numbers cannot describe a model.
void check_llm_config(const LlmConfig& c, const std::string& origin);

}  // namespace orrery
