// Decoder-only language models as their architecture numbers: what parallelism plans, the
// memory model and throughput figures (tokens/s, TFLOP/s per GPU, MFU) need. Built in: the
// GPT-3 family (Brown et al., "Language Models are Few-Shot Learners", Table 2.1), LLaMA-2
// 7B/13B/70B, Llama-3 8B/70B/405B, Mixtral 8x7B, Qwen2 7B, Qwen3 8B, 30B-A3B and 235B-A22B,
// Gemma 2 9B and 27B, Gemma 3 12B and 27B, DeepSeek-V3, gpt-oss 20B and 120B, Nemotron-4 15B
// and 340B, Nemotron-H 8B and 56B, and Grok-1 (their published config.json files or
// reference code); any other from a Hugging Face-style config.json (llama, mistral, mixtral,
// qwen2, qwen3, qwen3_moe, gemma2, gemma3, gemma3_text, deepseek_v3, gpt_oss, nemotron,
// nemotron_h, grok-1, gpt2, gpt_neox).
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
  bool qkv_bias = false;       // biases on the q, k and v projections only (Qwen2)
  bool qk_norm = false;        // RMSNorm over each head of q and k (Qwen3)
  bool sandwich_norm = false;  // norms after attention and the MLP too (Gemma 2): 4 per layer
  // Sliding-window attention on some layers (Gemma 2: every other layer attends over the last
  // 4096 tokens): `local_layers` of every `local_layers` + 1 layers keep `sliding_window` keys.
  int64_t sliding_window = 0;
  int64_t local_layers = 0;
  // The MLP's activation: "swiglu", "geglu" (gated), "gelu", "relu2" (squared ReLU, Nemotron).
  std::string activation = "gelu";
  bool norm_bias = false;        // norms with a bias (LayerNorm; Nemotron-4's LayerNorm1P)
  bool attention_bias = false;   // biases on all four attention projections (gpt-oss)
  bool expert_bias = false;      // biases on the experts' and the router's linear layers (gpt-oss)
  bool attention_sinks = false;  // a learned logit per head in each softmax (gpt-oss)
  bool dropout = false;          // trained with dropout after attention and the MLP (GPT-3)
  // Mixtures of experts: the first dense_layers layers dense with an MLP of dense_ffn
  // (DeepSeek-V3: 3 of 61, 18432 wide); shared_experts every token passes through besides its
  // top_k routed ones (width ffn).
  int64_t dense_layers = 0;
  int64_t dense_ffn = 0;
  int64_t shared_experts = 0;
  // Multi-head latent attention (DeepSeek-V2/V3) when kv_lora_rank > 0: queries through a
  // q_lora_rank bottleneck (0: none), keys and values up-projected from a kv_lora_rank latent
  // per token plus a qk_rope_dim rotary key shared by the heads; head_size is the query/key
  // width (nope + rope), v_head_dim the value width.
  int64_t q_lora_rank = 0, kv_lora_rank = 0, qk_rope_dim = 0, v_head_dim = 0;
  int64_t mtp_layers = 0;  // multi-token prediction modules (DeepSeek-V3: 1), trained beside
  // Hybrid Mamba-2 models (Nemotron-H): of the `layers` mixer layers, mamba_layers are Mamba-2
  // mixers and the rest attention; mlp_layers MLP layers stand between them (-1: one per layer).
  // A Mamba-2 mixer: mamba_heads x mamba_head_dim inner channels, ssm_groups groups of
  // ssm_state B and C channels, a causal convolution of conv_kernel taps, chunks of ssm_chunk
  // tokens in its state-space-duality scan (Dao and Gu, "Transformers are SSMs", ICML 2024).
  int64_t mamba_layers = 0, mlp_layers = -1;
  int64_t mamba_heads = 0, mamba_head_dim = 0, ssm_state = 0, ssm_groups = 1;
  int64_t conv_kernel = 4, ssm_chunk = 128;

  int64_t head_dim() const { return head_size > 0 ? head_size : hidden / heads; }
  // Width of the queries (and of the attention output before its projection).
  int64_t q_width() const { return heads * head_dim(); }
  int64_t value_dim() const { return v_head_dim > 0 ? v_head_dim : head_dim(); }
  bool moe() const { return experts > 1; }
  bool mla() const { return kv_lora_rank > 0; }
  int64_t mamba_inner() const { return mamba_heads * mamba_head_dim; }
  // The share of the layers that are MoE, attention (not Mamba-2) and followed by an MLP: the
  // model's average layer weighs each kind by it.
  double moe_share() const {
    return moe() ? static_cast<double>(layers - dense_layers) / static_cast<double>(layers) : 0.0;
  }
  double attention_share() const {
    return 1.0 - static_cast<double>(mamba_layers) / static_cast<double>(layers);
  }
  double mlp_share() const {
    return mlp_layers < 0 ? 1.0 : static_cast<double>(mlp_layers) / static_cast<double>(layers);
  }
  // Layers that attend over a sliding window (local_layers of every local_layers + 1).
  double windowed_share() const {
    return sliding_window > 0 && local_layers > 0
               ? static_cast<double>(local_layers) / static_cast<double>(local_layers + 1)
               : 0.0;
  }
};

// Parameter counts. `total` counts every weight (all experts); `active` the weights one token
// uses (top_k experts); `embedding` the token (and position) tables and an untied output head.
struct LlmParams {
  double total = 0;
  double active = 0;
  double embedding = 0;  // token and position tables, and the output head when untied
  // The average layer (layers of several kinds weighed by their shares, LlmConfig):
  // per_layer = attention + norms + mlp_share x (moe_share x (router + expert x (experts +
  // shared)) + (1 - moe_share) x dense_mlp).
  double per_layer = 0;
  double attention = 0;  // the mixer: attention projections (MLA's), or Mamba-2's by share
  double norms = 0;      // its norms
  double router = 0;     // MoE gate (0 for dense models)
  double expert = 0;     // one MLP (the MLP of a dense model)
  double dense_mlp = 0;  // a dense layer's MLP (= expert for dense models)
  double mtp = 0;        // multi-token prediction modules, beside `total` (shared tables aside)
};
LlmParams llm_params(const LlmConfig& c);

// Model FLOPs of training on one token (forward and backward, no recomputation), as in
// Narayanan et al., "Efficient Large-Scale Language Model Training on GPU Clusters Using
// Megatron-LM" (SC'21), section 5.1: 3 x (2 x the active matmul weights + 2 s x heads x
// (query/key width + value width) per attention layer for the scores and their use, s the
// keys each query sees (the window on sliding-window layers) + 2 h V for the logits), plus
// Mamba-2's scan (2 Q (G N + H P) + 4 H P N per token; Dao and Gu) and the multi-token
// prediction modules. For GPT-3 this is their 72 B s l h^2 (1 + s/(6h) + V/(12 l h)) / (B s).
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
