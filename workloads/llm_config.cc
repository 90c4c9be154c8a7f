#include "workloads/llm_config.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <nlohmann/json.hpp>
#include <tuple>
#include <vector>

#include "common/errors.h"
#include "workloads/config_json.h"

namespace orrery {
namespace {

using nlohmann::json;

LlmConfig gpt3(const char* name, int64_t layers, int64_t hidden, int64_t heads) {
  LlmConfig c;
  c.name = name;
  c.hidden = hidden;
  c.layers = layers;
  c.heads = c.kv_heads = heads;
  c.ffn = 4 * hidden;
  c.vocab = 50257;
  c.seq_len = 2048;
  c.tied_embeddings = true;
  c.learned_positions = true;
  c.biases = true;
  c.dropout = true;
  return c;
}

LlmConfig llama(const char* name, int64_t layers, int64_t hidden, int64_t heads, int64_t kv_heads,
                int64_t ffn, int64_t vocab, int64_t seq) {
  LlmConfig c;
  c.name = name;
  c.hidden = hidden;
  c.layers = layers;
  c.heads = heads;
  c.kv_heads = kv_heads;
  c.ffn = ffn;
  c.vocab = vocab;
  c.seq_len = seq;
  c.gated_mlp = true;
  c.activation = "swiglu";
  return c;
}

// Gemma 2 and 3: heads of their own width, GeGLU MLPs, a norm before and after attention and
// the MLP, tied embeddings; `local` of every local + 1 layers attend over the last `window`.
LlmConfig gemma(const char* name, int64_t layers, int64_t hidden, int64_t heads, int64_t kv,
                int64_t head, int64_t ffn, int64_t vocab, int64_t seq, int64_t window,
                int64_t local) {
  LlmConfig g = llama(name, layers, hidden, heads, kv, ffn, vocab, seq);
  g.head_size = head;
  g.tied_embeddings = true;
  g.sandwich_norm = true;
  g.sliding_window = window;
  g.local_layers = local;
  g.activation = "geglu";
  return g;
}

std::vector<LlmConfig> make_zoo() {
  std::vector<LlmConfig> z;
  // GPT-3, Table 2.1 of Brown et al. (2048 tokens, 50257 BPE tokens, tied embeddings, learned
  // positions). Its 1.3B model lists 24 heads of 128 and its 13B a width of 5140, neither of
  // which divides; Megatron-LM's GPT-3 configurations (16 heads; 5120) are used.
  z.push_back(gpt3("gpt3_1.3b", 24, 2048, 16));
  z.push_back(gpt3("gpt3_2.7b", 32, 2560, 32));
  z.push_back(gpt3("gpt3_6.7b", 32, 4096, 32));
  z.push_back(gpt3("gpt3_13b", 40, 5120, 40));
  z.push_back(gpt3("gpt3_175b", 96, 12288, 96));
  // LLaMA-2 and Llama-3 (Meta's config.json files on the Hugging Face hub).
  z.push_back(llama("llama2_7b", 32, 4096, 32, 32, 11008, 32000, 4096));
  z.push_back(llama("llama2_13b", 40, 5120, 40, 40, 13824, 32000, 4096));
  z.push_back(llama("llama2_70b", 80, 8192, 64, 8, 28672, 32000, 4096));
  z.push_back(llama("llama3_8b", 32, 4096, 32, 8, 14336, 128256, 8192));
  z.push_back(llama("llama3_70b", 80, 8192, 64, 8, 28672, 128256, 8192));
  // Llama 3.1 405B (Meta's config.json: 126 layers of width 16384, 128 heads over 8 KV heads,
  // FFN 53248; The Llama 3 Herd of Models, Table 3, trained at 8192 tokens).
  z.push_back(llama("llama3_405b", 126, 16384, 128, 8, 53248, 128256, 8192));
  // Mixtral 8x7B (Mistral AI's config.json): 8 experts per layer, 2 per token. Trained
  // context 32768; plans usually run shorter sequences (strategy key seq_len).
  LlmConfig mixtral = llama("mixtral_8x7b", 32, 4096, 32, 8, 14336, 32000, 32768);
  mixtral.experts = 8;
  mixtral.top_k = 2;
  z.push_back(mixtral);
  // Qwen2 and Qwen3 (Alibaba's config.json files on the Hugging Face hub). Qwen2 puts biases on
  // q, k and v; Qwen3 normalizes q and k per head and gives its heads a width of its own (128:
  // 32 x 128 queries on a 4096 width for 8B, 4096 on 2048 for 30B-A3B); its MoE models route
  // each token to 8 of 128 fine-grained experts in every layer.
  LlmConfig qwen2 = llama("qwen2_7b", 28, 3584, 28, 4, 18944, 152064, 32768);
  qwen2.qkv_bias = true;
  z.push_back(qwen2);
  for (const auto& [name, layers, hidden, heads, kv, ffn, experts] :
       std::vector<std::tuple<const char*, int, int, int, int, int, int>>{
           {"qwen3_8b", 36, 4096, 32, 8, 12288, 1},
           {"qwen3_30b_a3b", 48, 2048, 32, 4, 768, 128},
           {"qwen3_235b_a22b", 94, 4096, 64, 4, 1536, 128}}) {
    LlmConfig q = llama(name, layers, hidden, heads, kv, ffn, 151936, 40960);
    q.head_size = 128;
    q.qk_norm = true;
    q.experts = experts;
    q.top_k = experts > 1 ? 8 : 1;
    z.push_back(q);
  }
  // Gemma 2 (Google's config.json files): heads of their own width (256 for 9B, 128 for 27B),
  // GeGLU MLPs, a norm before and after attention and the MLP, tied embeddings, and every
  // other layer attending over a window of the last 4096 tokens.
  for (const auto& [name, layers, hidden, heads, kv, head, ffn] :
       std::vector<std::tuple<const char*, int, int, int, int, int, int>>{
           {"gemma2_9b", 42, 3584, 16, 8, 256, 14336},
           {"gemma2_27b", 46, 4608, 32, 16, 128, 36864}}) {
    z.push_back(gemma(name, layers, hidden, heads, kv, head, ffn, 256000, 8192, 4096, 1));
  }
  // Gemma 3 (Google's config.json files): five sliding-window layers (1024 tokens) to each
  // global one, RMSNorm over q and k per head, 262,208 tokens; trained at 32,768 tokens.
  for (const auto& [name, layers, hidden, heads, kv, head, ffn] :
       std::vector<std::tuple<const char*, int, int, int, int, int, int>>{
           {"gemma3_12b", 48, 3840, 16, 8, 256, 15360},
           {"gemma3_27b", 62, 5376, 32, 16, 128, 21504}}) {
    LlmConfig g = gemma(name, layers, hidden, heads, kv, head, ffn, 262208, 32768, 1024, 5);
    g.qk_norm = true;
    z.push_back(g);
  }
  // DeepSeek-V3 (DeepSeek-AI's config.json, "DeepSeek-V3 Technical Report"): multi-head latent
  // attention (128 heads of 128 + 64 rotary query/key channels and 128 value channels, a 1536
  // query and a 512 key/value latent), 3 dense layers then 58 of 256 routed experts (8 per
  // token) and one shared, 2048 wide; one multi-token prediction module; trained at 4096.
  LlmConfig ds = llama("deepseek_v3", 61, 7168, 128, 128, 2048, 129280, 4096);
  ds.head_size = 192;
  ds.v_head_dim = 128;
  ds.q_lora_rank = 1536;
  ds.kv_lora_rank = 512;
  ds.qk_rope_dim = 64;
  ds.experts = 256;
  ds.top_k = 8;
  ds.shared_experts = 1;
  ds.dense_layers = 3;
  ds.dense_ffn = 18432;
  ds.mtp_layers = 1;
  z.push_back(ds);
  // gpt-oss (OpenAI's config.json and reference code): 64 query heads of 64 over 8 KV heads on a
  // 2880 width, biases on every projection, a learned sink logit per head, every other layer
  // on a 128-token window; experts 2880 wide with biases, 4 per token; trained at 4096.
  for (const auto& [name, layers, experts] : std::vector<std::tuple<const char*, int, int>>{
           {"gpt_oss_20b", 24, 32}, {"gpt_oss_120b", 36, 128}}) {
    LlmConfig o = llama(name, layers, 2880, 64, 8, 2880, 201088, 4096);
    o.head_size = 64;
    o.attention_bias = true;
    o.expert_bias = true;
    o.attention_sinks = true;
    o.sliding_window = 128;
    o.local_layers = 1;
    o.experts = experts;
    o.top_k = 4;
    z.push_back(o);
  }
  // Nemotron-4 (Parmar et al., "Nemotron-4 15B Technical Report"; NVIDIA, "Nemotron-4 340B
  // Technical Report"): grouped-query attention, a squared-ReLU MLP without a gate,
  // LayerNorm with biases, 256,000 tokens, 4096 tokens, untied embeddings.
  for (const auto& [name, layers, hidden, heads, ffn] :
       std::vector<std::tuple<const char*, int, int, int, int>>{
           {"nemotron4_15b", 32, 6144, 48, 24576}, {"nemotron4_340b", 96, 18432, 96, 73728}}) {
    LlmConfig n = llama(name, layers, hidden, heads, 8, ffn, 256000, 4096);
    n.gated_mlp = false;
    n.activation = "relu2";
    n.norm_bias = true;
    z.push_back(n);
  }
  // Nemotron-H (NVIDIA, "Nemotron-H: A Family of Accurate and Efficient Hybrid Mamba-Transformer
  // Models"; Megatron-Bridge's configurations): of 52 layers, 24 Mamba-2 mixers, 4 attention
  // and 24 squared-ReLU MLPs (8B); of 118, 54, 10 and 54 (56B).
  for (const auto& [name, mamba, attention, hidden, heads, ffn, mheads, state] :
       std::vector<std::tuple<const char*, int, int, int, int, int, int, int>>{
           {"nemotron_h_8b", 24, 4, 4096, 32, 21504, 128, 128},
           {"nemotron_h_56b", 54, 10, 8192, 64, 32768, 256, 256}}) {
    LlmConfig n = llama(name, mamba + attention, hidden, heads, 8, ffn, 131072, 8192);
    n.gated_mlp = false;
    n.activation = "relu2";
    n.mamba_layers = mamba;
    n.mlp_layers = mamba;
    n.mamba_heads = mheads;
    n.mamba_head_dim = 64;
    n.ssm_state = state;
    n.ssm_groups = 8;
    z.push_back(n);
  }
  // Grok-1 (xAI's released code): 64 layers, 48 query heads of 128 over 8 KV heads, 8 experts
  // with gated GELU 32768 wide, 2 per token, norms before and after each block, tied
  // embeddings, 131,072 tokens, 8192 tokens.
  LlmConfig grok = llama("grok1", 64, 6144, 48, 8, 32768, 131072, 8192);
  grok.head_size = 128;
  grok.experts = 8;
  grok.top_k = 2;
  grok.sandwich_norm = true;
  grok.tied_embeddings = true;
  grok.activation = "geglu";
  z.push_back(grok);
  return z;
}

std::string lower(std::string s) {
  for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

int64_t size_field(const json& j, const std::vector<const char*>& names, const std::string& origin,
                   int64_t fallback = -1) {
  for (const char* n : names) {
    if (!j.contains(n) || j[n].is_null()) continue;
    if (!j[n].is_number_integer() || j[n].get<int64_t>() < 1)
      throw InputError(origin + ": \"" + n + "\" must be a positive integer");
    return j[n].get<int64_t>();
  }
  if (fallback > 0) return fallback;
  throw InputError(origin + ": missing \"" + names.front() +
                   "\" (a size every config of this model_type has)");
}

bool flag_field(const json& j, const char* key, bool fallback, const std::string& origin) {
  if (!j.contains(key) || j[key].is_null()) return fallback;
  if (!j[key].is_boolean()) throw InputError(origin + ": \"" + key + "\" must be true or false");
  return j[key].get<bool>();
}

}  // namespace

namespace {

// The weights of one attention mixer's projections (biases and the latents' norms aside).
double attention_weights(const LlmConfig& c) {
  const double h = static_cast<double>(c.hidden), heads = static_cast<double>(c.heads);
  const double qk = static_cast<double>(c.head_dim()), v = static_cast<double>(c.value_dim());
  if (c.mla()) {
    const double ql = static_cast<double>(c.q_lora_rank), kvl = static_cast<double>(c.kv_lora_rank);
    const double rope = static_cast<double>(c.qk_rope_dim);
    const double q = ql > 0 ? h * ql + ql * heads * qk : h * heads * qk;
    return q + h * (kvl + rope) + kvl * heads * (qk - rope + v) + heads * v * h;
  }
  const double q = static_cast<double>(c.q_width());
  const double kv = static_cast<double>(c.kv_heads * c.head_dim());
  return 2 * h * q + 2 * h * kv;
}

// A Mamba-2 mixer's input and output projections.
double mamba_weights(const LlmConfig& c) {
  const double h = static_cast<double>(c.hidden), di = static_cast<double>(c.mamba_inner());
  const double gn = static_cast<double>(c.ssm_groups * c.ssm_state);
  return h * (2 * di + 2 * gn + static_cast<double>(c.mamba_heads)) + di * h;
}

// One attention mixer with its biases, sinks and latent norms; one Mamba-2 mixer with its
// convolution, per-head parameters and gated norm.
double attention_params(const LlmConfig& c) {
  double p = attention_weights(c);
  if (c.mla()) return p + static_cast<double>(c.q_lora_rank + c.kv_lora_rank);
  const double q = static_cast<double>(c.q_width()), h = static_cast<double>(c.hidden);
  const double kv = static_cast<double>(c.kv_heads * c.head_dim());
  if (c.biases || c.qkv_bias || c.attention_bias) p += q + 2 * kv;
  if (c.biases || c.attention_bias) p += h;
  if (c.attention_sinks) p += static_cast<double>(c.heads);
  return p;
}
double mamba_params(const LlmConfig& c) {
  const double di = static_cast<double>(c.mamba_inner());
  const double conv = di + 2.0 * static_cast<double>(c.ssm_groups * c.ssm_state);
  return mamba_weights(c) + conv * static_cast<double>(c.conv_kernel + 1) +
         3.0 * static_cast<double>(c.mamba_heads) + di;
}

double mlp_params(const LlmConfig& c, double f) {
  const double h = static_cast<double>(c.hidden);
  const bool bias = c.biases || c.expert_bias;
  if (c.gated_mlp) return 3 * h * f + (bias ? 2 * f + h : 0.0);
  return 2 * h * f + (bias ? f + h : 0.0);
}

}  // namespace

LlmParams llm_params(const LlmConfig& c) {
  const double h = static_cast<double>(c.hidden), f = static_cast<double>(c.ffn);
  const double norm = h * (c.biases || c.norm_bias ? 2.0 : 1.0);
  const double share = c.attention_share();
  LlmParams p;
  p.attention = share * attention_params(c) + (1 - share) * mamba_params(c);
  // A norm before each mixer and each MLP (and after each with sandwich norms).
  p.norms = (c.sandwich_norm ? 2 : 1) * (1 + c.mlp_share()) * norm +
            (c.qk_norm ? 2.0 * static_cast<double>(c.head_dim()) : 0.0);
  p.expert = mlp_params(c, f);
  p.dense_mlp = c.dense_layers > 0 ? mlp_params(c, static_cast<double>(c.dense_ffn)) : p.expert;
  const double e = static_cast<double>(c.experts);
  p.router = c.moe() ? h * e + (c.expert_bias ? e : 0.0) : 0.0;
  const double moe = c.moe_share();
  const double routed = p.router + p.expert * (e + static_cast<double>(c.shared_experts));
  p.per_layer = p.attention + p.norms + c.mlp_share() * (moe * routed + (1 - moe) * p.dense_mlp);
  const double vh = static_cast<double>(c.vocab) * h;
  p.embedding = vh + (c.learned_positions ? static_cast<double>(c.seq_len) * h : 0.0) +
                (c.tied_embeddings ? 0.0 : vh);
  const double layers = static_cast<double>(c.layers);
  p.total = layers * p.per_layer + p.embedding + norm;
  p.active = p.total - layers * c.mlp_share() * moe * p.expert * (e - static_cast<double>(c.top_k));
  // DeepSeek-V3's module: norms of its two inputs, their 2h -> h projection, one MoE layer and
  // the head's norm; the embedding and the head are the model's.
  if (c.mtp_layers > 0)
    p.mtp = static_cast<double>(c.mtp_layers) *
            (attention_params(c) + p.norms + routed + 2 * h * h + 3 * norm);
  return p;
}

double llm_training_flops_per_token(const LlmConfig& c, int64_t seq_len) {
  const double h = static_cast<double>(c.hidden), f = static_cast<double>(c.ffn);
  const double s = static_cast<double>(seq_len);
  const double share = c.attention_share(), moe = c.moe_share();
  const double expert = (c.gated_mlp ? 3.0 : 2.0) * h * f;
  const double dense = c.dense_layers > 0
                           ? (c.gated_mlp ? 3.0 : 2.0) * h * static_cast<double>(c.dense_ffn)
                           : expert;
  const double router = c.moe() ? h * static_cast<double>(c.experts) : 0.0;
  const double routed = router + expert * static_cast<double>(c.top_k + c.shared_experts);
  const double mlp = c.mlp_share() * (moe * routed + (1 - moe) * dense);
  const double mixer = share * attention_weights(c) + (1 - share) * mamba_weights(c);
  // Keys each query sees: the whole sequence, or the window on sliding-window layers.
  const double window = static_cast<double>(c.sliding_window);
  const double keys =
      (1 - c.windowed_share()) * s + c.windowed_share() * (window > 0 ? std::min(s, window) : s);
  const double scores =
      2 * keys * static_cast<double>(c.heads) * static_cast<double>(c.head_dim() + c.value_dim());
  double ssd = 0;
  if (c.mamba_layers > 0) {
    const double q = static_cast<double>(c.ssm_chunk),
                 gn = static_cast<double>(c.ssm_groups * c.ssm_state);
    const double hp = static_cast<double>(c.mamba_inner()), n = static_cast<double>(c.ssm_state);
    ssd = 2 * q * (gn + hp) + 4 * hp * n;
  }
  const double l = static_cast<double>(c.layers);
  const double logits = 2 * h * static_cast<double>(c.vocab);
  double forward = l * (2 * (mixer + mlp) + share * scores + (1 - share) * ssd) + logits;
  if (c.mtp_layers > 0)
    forward += static_cast<double>(c.mtp_layers) *
               (2 * (attention_weights(c) + routed + 2 * h * h) + scores + logits);
  return 3 * forward;
}

const std::vector<LlmConfig>& llm_zoo() {
  static const std::vector<LlmConfig> zoo = make_zoo();
  return zoo;
}

const LlmConfig* find_llm(const std::string& name) {
  const std::string want = lower(name);
  for (const auto& c : llm_zoo())
    if (c.name == want) return &c;
  return nullptr;
}

void check_llm_config(const LlmConfig& c, const std::string& origin) {
  const struct {
    const char* key;
    int64_t value;
  } sizes[] = {{"hidden", c.hidden},     {"layers", c.layers},   {"heads", c.heads},
               {"kv_heads", c.kv_heads}, {"ffn", c.ffn},         {"vocab", c.vocab},
               {"seq_len", c.seq_len},   {"experts", c.experts}, {"top_k", c.top_k}};
  for (const auto& s : sizes)
    if (s.value < 1)
      throw InputError(origin + ": " + s.key + " must be a positive integer, got " +
                       std::to_string(s.value));
  if (c.head_size < 0)
    throw InputError(origin + ": head_dim must be a positive integer, got " +
                     std::to_string(c.head_size));
  if (c.head_size == 0 && c.hidden % c.heads != 0)
    throw InputError(origin + ": heads (" + std::to_string(c.heads) + ") must divide hidden (" +
                     std::to_string(c.hidden) + ") when the config gives no head_dim");
  if (c.heads % c.kv_heads != 0)
    throw InputError(origin + ": kv_heads (" + std::to_string(c.kv_heads) +
                     ") must divide heads (" + std::to_string(c.heads) + ")");
  if (c.top_k > c.experts)
    throw InputError(origin + ": top_k (" + std::to_string(c.top_k) + ") cannot exceed experts (" +
                     std::to_string(c.experts) + ")");
}

LlmConfig read_llm_config(const std::string& json_text, const std::string& origin,
                          const std::string& name) {
  json j = parse_config_json(json_text, origin);
  std::string type = j.contains("model_type") && j["model_type"].is_string()
                         ? j["model_type"].get<std::string>()
                         : "";
  // Gemma 3's multimodal config holds the language model's in text_config.
  if (type == "gemma3" && j.contains("text_config") && j["text_config"].is_object()) {
    j = j["text_config"];
    type = "gemma3_text";
  }
  LlmConfig c;
  c.name = name;
  const bool gemma = type == "gemma2" || type == "gemma3_text" || type == "gemma3";
  if (type == "llama" || type == "mistral" || type == "mixtral" || type == "qwen2" ||
      type == "qwen3" || type == "qwen3_moe" || gemma || type == "deepseek_v3" ||
      type == "gpt_oss" || type == "nemotron" || type == "nemotron_h" || type == "grok-1" ||
      type == "grok") {
    c.hidden = size_field(j, {"hidden_size"}, origin);
    c.layers = size_field(j, {"num_hidden_layers"}, origin);
    c.heads = size_field(j, {"num_attention_heads"}, origin);
    c.kv_heads = size_field(j, {"num_key_value_heads"}, origin, c.heads);
    c.ffn = size_field(j, {"intermediate_size"}, origin);
    c.vocab = size_field(j, {"vocab_size"}, origin);
    c.seq_len = size_field(j, {"max_position_embeddings"}, origin);
    c.gated_mlp = true;
    c.activation = gemma || type == "grok-1" || type == "grok" ? "geglu" : "swiglu";
    c.tied_embeddings =
        flag_field(j, "tie_word_embeddings", gemma || type == "grok-1" || type == "grok", origin);
    // An explicit head width (Qwen3, Mistral NeMo, Gemma 2) when it is not hidden / heads.
    if (j.contains("head_dim") && !j["head_dim"].is_null()) {
      const int64_t d = size_field(j, {"head_dim"}, origin);
      if (d * c.heads != c.hidden) c.head_size = d;
    }
    if (type == "mixtral") {
      c.experts = size_field(j, {"num_local_experts"}, origin);
      c.top_k = size_field(j, {"num_experts_per_tok"}, origin);
    }
    c.qkv_bias = type == "qwen2" || flag_field(j, "attention_bias", false, origin);
    c.qk_norm = type == "qwen3" || type == "qwen3_moe";
    if (type == "qwen3_moe") {
      // Every layer sparse (decoder_sparse_step 1, no mlp_only_layers), fine-grained experts of
      // moe_intermediate_size.
      c.experts = size_field(j, {"num_experts"}, origin);
      c.top_k = size_field(j, {"num_experts_per_tok"}, origin);
      c.ffn = size_field(j, {"moe_intermediate_size"}, origin);
    }
    if (type == "gemma2") {
      // Norms after attention and the MLP too; every other layer on a sliding window.
      c.sandwich_norm = true;
      c.sliding_window = size_field(j, {"sliding_window"}, origin, 4096);
      c.local_layers = 1;
    }
    if (type == "gemma3_text" || type == "gemma3") {
      // Five local layers to each global one (sliding_window_pattern 6), q and k normed.
      c.sandwich_norm = true;
      c.qk_norm = true;
      c.sliding_window = size_field(j, {"sliding_window"}, origin, 4096);
      c.local_layers =
          size_field(j, {"sliding_window_pattern", "_sliding_window_pattern"}, origin, 6) - 1;
      if (!j.contains("head_dim")) c.head_size = 256;
    }
    if (type == "deepseek_v3") {
      // Multi-head latent attention; the first first_k_dense_replace layers dense.
      const int64_t nope = size_field(j, {"qk_nope_head_dim"}, origin);
      c.qk_rope_dim = size_field(j, {"qk_rope_head_dim"}, origin);
      c.head_size = nope + c.qk_rope_dim;
      c.v_head_dim = size_field(j, {"v_head_dim"}, origin);
      c.kv_lora_rank = size_field(j, {"kv_lora_rank"}, origin);
      if (j.contains("q_lora_rank") && !j["q_lora_rank"].is_null())
        c.q_lora_rank = size_field(j, {"q_lora_rank"}, origin);
      c.experts = size_field(j, {"n_routed_experts"}, origin);
      c.top_k = size_field(j, {"num_experts_per_tok"}, origin);
      c.shared_experts = j.contains("n_shared_experts") && j["n_shared_experts"].is_null()
                             ? 0
                             : size_field(j, {"n_shared_experts"}, origin, 1);
      c.dense_ffn = c.ffn;
      c.ffn = size_field(j, {"moe_intermediate_size"}, origin);
      if (j.contains("first_k_dense_replace") && !j["first_k_dense_replace"].is_null()) {
        const json& k = j["first_k_dense_replace"];
        if (!k.is_number_integer() || k.get<int64_t>() < 0)
          throw InputError(origin + ": \"first_k_dense_replace\" must be an integer of at least 0");
        c.dense_layers = k.get<int64_t>();
      }
      if (c.dense_layers >= c.layers)
        throw InputError(origin + ": \"first_k_dense_replace\" (" + std::to_string(c.dense_layers) +
                         ") leaves no MoE layer of " + std::to_string(c.layers));
      if (j.contains("num_nextn_predict_layers") && !j["num_nextn_predict_layers"].is_null())
        c.mtp_layers = size_field(j, {"num_nextn_predict_layers"}, origin);
    }
    if (type == "gpt_oss") {
      c.experts = size_field(j, {"num_local_experts"}, origin);
      c.top_k = size_field(j, {"num_experts_per_tok", "experts_per_token"}, origin);
      c.attention_bias = flag_field(j, "attention_bias", true, origin);
      c.qkv_bias = false;
      c.expert_bias = true;
      c.attention_sinks = true;
      c.sliding_window = size_field(j, {"sliding_window"}, origin, 128);
      c.local_layers = 1;
    }
    if (type == "grok-1" || type == "grok") {
      c.experts = size_field(j, {"num_experts", "num_local_experts"}, origin);
      c.top_k = size_field(j, {"num_experts_per_tok"}, origin);
      c.sandwich_norm = true;
    }
    if (type == "nemotron" || type == "nemotron_h") {
      // Squared-ReLU MLPs without a gate.
      c.gated_mlp = false;
      c.activation = "relu2";
      c.norm_bias = type == "nemotron";  // LayerNorm1P
    }
    if (type == "nemotron_h") {
      // One mixer or MLP per entry of the pattern: M Mamba-2, * attention, - MLP.
      if (!j.contains("hybrid_override_pattern") || !j["hybrid_override_pattern"].is_string())
        throw InputError(origin +
                         ": missing \"hybrid_override_pattern\" (a string of M, * "
                         "and - for the Mamba-2, attention and MLP layers)");
      const std::string pattern = j["hybrid_override_pattern"].get<std::string>();
      int64_t m = 0, a = 0, mlp = 0;
      for (char ch : pattern) {
        if (ch == 'M')
          ++m;
        else if (ch == '*')
          ++a;
        else if (ch == '-')
          ++mlp;
        else
          throw InputError(origin + ": \"hybrid_override_pattern\": unexpected '" +
                           std::string(1, ch) + "' (expected M, * or -)");
      }
      if (m + a == 0)
        throw InputError(origin +
                         ": \"hybrid_override_pattern\" has no Mamba-2 or attention "
                         "layer");
      c.layers = m + a;
      c.mamba_layers = m;
      c.mlp_layers = mlp;
      c.mamba_heads = size_field(j, {"mamba_num_heads"}, origin);
      c.mamba_head_dim = size_field(j, {"mamba_head_dim"}, origin);
      c.ssm_state = size_field(j, {"ssm_state_size"}, origin);
      c.ssm_groups = size_field(j, {"n_groups", "mamba_n_groups"}, origin, 1);
      c.conv_kernel = size_field(j, {"conv_kernel", "mamba_d_conv"}, origin, 4);
      c.ssm_chunk = size_field(j, {"chunk_size", "mamba_chunk_size"}, origin, 128);
      if (j.contains("attention_head_dim") && !j["attention_head_dim"].is_null()) {
        const int64_t d = size_field(j, {"attention_head_dim"}, origin);
        if (d * c.heads != c.hidden) c.head_size = d;
      }
    }
  } else if (type == "gpt2") {
    c.hidden = size_field(j, {"n_embd"}, origin);
    c.layers = size_field(j, {"n_layer"}, origin);
    c.heads = c.kv_heads = size_field(j, {"n_head"}, origin);
    c.ffn = size_field(j, {"n_inner"}, origin, 4 * c.hidden);
    c.vocab = size_field(j, {"vocab_size"}, origin);
    c.seq_len = size_field(j, {"n_positions", "n_ctx"}, origin);
    c.tied_embeddings = flag_field(j, "tie_word_embeddings", true, origin);
    c.learned_positions = true;
    c.biases = true;
    c.dropout = true;
  } else if (type == "gpt_neox") {
    c.hidden = size_field(j, {"hidden_size"}, origin);
    c.layers = size_field(j, {"num_hidden_layers"}, origin);
    c.heads = c.kv_heads = size_field(j, {"num_attention_heads"}, origin);
    c.ffn = size_field(j, {"intermediate_size"}, origin);
    c.vocab = size_field(j, {"vocab_size"}, origin);
    c.seq_len = size_field(j, {"max_position_embeddings"}, origin);
    c.tied_embeddings = flag_field(j, "tie_word_embeddings", false, origin);
    c.biases = true;
  } else {
    throw InputError(origin + ": model_type \"" + type +
                     "\" is not a language model Orrery reads (known: llama, mistral, mixtral, "
                     "qwen2, qwen3, qwen3_moe, gemma2, gemma3, gemma3_text, deepseek_v3, "
                     "gpt_oss, nemotron, nemotron_h, grok-1, gpt2, gpt_neox)");
  }
  check_llm_config(c, origin);
  return c;
}

}  // namespace orrery
