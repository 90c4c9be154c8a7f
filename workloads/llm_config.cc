#include "workloads/llm_config.h"

#include <algorithm>
#include <cctype>
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
  return c;
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
    LlmConfig g = llama(name, layers, hidden, heads, kv, ffn, 256000, 8192);
    g.head_size = head;
    g.tied_embeddings = true;
    g.sandwich_norm = true;
    g.sliding_window = 4096;
    g.local_layers = 1;
    z.push_back(g);
  }
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

LlmParams llm_params(const LlmConfig& c) {
  const double h = static_cast<double>(c.hidden), f = static_cast<double>(c.ffn);
  const double q = static_cast<double>(c.q_width());
  const double kv = static_cast<double>(c.kv_heads * c.head_dim());
  const double bias = c.biases ? 1.0 : 0.0;
  const double qkv_bias = c.biases || c.qkv_bias ? 1.0 : 0.0;
  const double attention = h * q + 2 * h * kv + q * h + qkv_bias * (q + 2 * kv) + bias * h;
  const double norms = (c.sandwich_norm ? 4 : 2) * (h + bias * h) +
                       (c.qk_norm ? 2.0 * static_cast<double>(c.head_dim()) : 0.0);
  const double expert = c.gated_mlp ? 3 * h * f + bias * (2 * f + h) : 2 * h * f + bias * (f + h);
  const double router = c.moe() ? h * static_cast<double>(c.experts) : 0.0;
  LlmParams p;
  p.attention = attention;
  p.norms = norms;
  p.router = router;
  p.expert = expert;
  p.per_layer = attention + norms + router + expert * static_cast<double>(c.experts);
  const double vh = static_cast<double>(c.vocab) * h;
  p.embedding = vh + (c.learned_positions ? static_cast<double>(c.seq_len) * h : 0.0) +
                (c.tied_embeddings ? 0.0 : vh);
  const double final_norm = h + bias * h;
  const double layers = static_cast<double>(c.layers);
  p.total = layers * p.per_layer + p.embedding + final_norm;
  p.active = p.total - layers * expert * static_cast<double>(c.experts - c.top_k);
  return p;
}

double llm_training_flops_per_token(const LlmConfig& c, int64_t seq_len) {
  const double h = static_cast<double>(c.hidden), f = static_cast<double>(c.ffn);
  const double q = static_cast<double>(c.q_width());
  const double kv = static_cast<double>(c.kv_heads * c.head_dim());
  const double attention = 2 * h * q + 2 * h * kv;
  const double expert = (c.gated_mlp ? 3.0 : 2.0) * h * f;
  const double router = c.moe() ? h * static_cast<double>(c.experts) : 0.0;
  const double matmul = attention + router + expert * static_cast<double>(c.top_k);
  const double l = static_cast<double>(c.layers), s = static_cast<double>(seq_len);
  const double forward = l * (2 * matmul + 4 * s * q) + 2 * h * static_cast<double>(c.vocab);
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
  const std::string type = j.contains("model_type") && j["model_type"].is_string()
                               ? j["model_type"].get<std::string>()
                               : "";
  LlmConfig c;
  c.name = name;
  if (type == "llama" || type == "mistral" || type == "mixtral" || type == "qwen2" ||
      type == "qwen3" || type == "qwen3_moe" || type == "gemma2") {
    c.hidden = size_field(j, {"hidden_size"}, origin);
    c.layers = size_field(j, {"num_hidden_layers"}, origin);
    c.heads = size_field(j, {"num_attention_heads"}, origin);
    c.kv_heads = size_field(j, {"num_key_value_heads"}, origin, c.heads);
    c.ffn = size_field(j, {"intermediate_size"}, origin);
    c.vocab = size_field(j, {"vocab_size"}, origin);
    c.seq_len = size_field(j, {"max_position_embeddings"}, origin);
    c.gated_mlp = true;
    c.tied_embeddings = flag_field(j, "tie_word_embeddings", type == "gemma2", origin);
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
                     "qwen2, qwen3, qwen3_moe, gemma2, gpt2, gpt_neox)");
  }
  check_llm_config(c, origin);
  return c;
}

}  // namespace orrery
