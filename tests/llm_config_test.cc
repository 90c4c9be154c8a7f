// Language models as architecture numbers (workloads/llm_config.h): parameter counts against
// the published ones, training FLOPs per token against Megatron-LM's closed form, and
// Hugging Face config.json files read or refused with the field named.
#include "workloads/llm_config.h"

#include <gtest/gtest.h>

#include "common/errors.h"

namespace orrery {
namespace {

const LlmConfig& model(const std::string& name) {
  const LlmConfig* m = find_llm(name);
  if (!m) throw std::runtime_error("no model " + name);
  return *m;
}

TEST(LlmConfig, ParameterCountsAreThePublishedOnes) {
  // Exact counts of the released checkpoints (Hugging Face hub model cards / safetensors
  // index totals).
  EXPECT_EQ(llm_params(model("llama2_7b")).total, 6738415616.0);
  EXPECT_EQ(llm_params(model("llama2_13b")).total, 13015864320.0);
  EXPECT_EQ(llm_params(model("llama2_70b")).total, 68976648192.0);
  EXPECT_EQ(llm_params(model("llama3_8b")).total, 8030261248.0);
  // Mixtral 8x7B: 46.7B in all, 12.9B used per token (Mistral AI, "Mixtral of experts").
  const LlmParams mix = llm_params(model("mixtral_8x7b"));
  EXPECT_EQ(mix.total, 46702792704.0);
  EXPECT_NEAR(mix.active, 12.9e9, 0.05e9);
  // Dense models use every weight for every token.
  EXPECT_EQ(llm_params(model("llama2_70b")).active, llm_params(model("llama2_70b")).total);
}

// Qwen2 and Qwen3: the released checkpoints' counts (their safetensors index totals / 2 bytes;
// model cards: Qwen2-7B 7.6B, Qwen3-8B 8.2B, Qwen3-30B-A3B 30.5B with 3.3B activated,
// Qwen3-235B-A22B 235B with 22B activated). Qwen3-8B by hand: heads 32 x 128 = 4096 query
// channels, 8 x 128 = 1024 for k and v; per layer q, o 2 x 4096 x 4096, k, v 2 x 4096 x 1024,
// MLP 3 x 4096 x 12288, norms 2 x 4096, q/k norms 2 x 128: 192,946,432 x 36 layers, plus two
// untied 151936 x 4096 tables and the final norm.
TEST(LlmConfig, QwenCountsAreTheReleasedOnes) {
  const double per_layer = 2.0 * 4096 * 4096 + 2.0 * 4096 * 1024 + 3.0 * 4096 * 12288 +
                           2 * 4096 + 2 * 128;
  EXPECT_EQ(per_layer, 192946432.0);
  EXPECT_EQ(llm_params(model("qwen3_8b")).total, 36 * per_layer + 2.0 * 151936 * 4096 + 4096);
  EXPECT_EQ(llm_params(model("qwen3_8b")).total, 8190735360.0);
  // Qwen2-7B: 28 heads of 128 on 3584, biases on q, k and v (3584 + 2 x 512).
  EXPECT_EQ(llm_params(model("qwen2_7b")).total, 7615616512.0);
  const LlmParams a3b = llm_params(model("qwen3_30b_a3b"));
  EXPECT_EQ(a3b.total, 30532122624.0);
  EXPECT_NEAR(a3b.active, 3.3e9, 0.1e9);
  const LlmParams a22b = llm_params(model("qwen3_235b_a22b"));
  EXPECT_NEAR(a22b.total, 235.09e9, 0.01e9);
  EXPECT_NEAR(a22b.active, 22e9, 0.3e9);
  // Training FLOPs per token follow the active weights with the 4096-wide queries: 6 x (the
  // weights a token uses, the output head once) at one token of context.
  const LlmConfig& q3 = model("qwen3_8b");
  const double six_n = 6 * (llm_params(q3).total - 151936.0 * 4096);
  EXPECT_NEAR(llm_training_flops_per_token(q3, 1), six_n, 0.001 * six_n);
}

// Gemma 2: the released counts (9,241,705,984 and 27,227,128,320). 9B by hand: 16 x 256 = 4096
// query channels and 8 x 256 for k and v on a 3584 width, a GeGLU MLP of 14336, four norms a
// layer; 42 layers and one tied 256000 x 3584 table and the final norm.
TEST(LlmConfig, GemmaCountsAreTheReleasedOnes) {
  const double per_layer =
      2.0 * 3584 * 4096 + 2.0 * 3584 * 2048 + 3.0 * 3584 * 14336 + 4 * 3584;
  EXPECT_EQ(llm_params(model("gemma2_9b")).total, 42 * per_layer + 256000.0 * 3584 + 3584);
  EXPECT_EQ(llm_params(model("gemma2_9b")).total, 9241705984.0);
  EXPECT_EQ(llm_params(model("gemma2_27b")).total, 27227128320.0);
  const LlmConfig g = read_llm_config(R"({"model_type": "gemma2", "hidden_size": 3584,
      "intermediate_size": 14336, "num_attention_heads": 16, "num_key_value_heads": 8,
      "head_dim": 256, "num_hidden_layers": 42, "max_position_embeddings": 8192,
      "vocab_size": 256000, "sliding_window": 4096})",
                                      "gemma2.json", "g");
  EXPECT_EQ(llm_params(g).total, 9241705984.0);
  EXPECT_EQ(g.sliding_window, 4096);
  EXPECT_TRUE(g.tied_embeddings);
}

TEST(LlmConfig, Gpt3CountIsMegatronsFormula) {
  // Narayanan et al. (SC'21), section 5.1: P = 12 l h^2 (1 + 13/(12h) + (V + s)/(12 l h)); the
  // final layer norm (2h) is the only weight it leaves out.
  const LlmConfig& m = model("gpt3_175b");
  const double l = m.layers, h = m.hidden, v = m.vocab, s = m.seq_len;
  const double megatron = 12 * l * h * h * (1 + 13 / (12 * h) + (v + s) / (12 * l * h));
  EXPECT_NEAR(llm_params(m).total, megatron + 2 * h, 1e-6 * megatron);
  EXPECT_NEAR(llm_params(m).total, 174.6e9, 0.05e9);  // Brown et al.'s "175B"
}

TEST(LlmConfig, TrainingFlopsPerTokenAreMegatronsClosedForm) {
  // 72 B s l h^2 (1 + s/(6h) + V/(12 l h)) per iteration of B sequences of s tokens.
  for (const char* name : {"gpt3_1.3b", "gpt3_13b", "gpt3_175b"}) {
    const LlmConfig& m = model(name);
    const double l = m.layers, h = m.hidden, v = m.vocab;
    for (double s : {2048.0, 4096.0}) {
      const double per_token = 72 * l * h * h * (1 + s / (6 * h) + v / (12 * l * h));
      EXPECT_NEAR(llm_training_flops_per_token(m, static_cast<int64_t>(s)), per_token,
                  1e-9 * per_token)
          << name << " s=" << s;
    }
  }
  // A mixture of experts is charged for the experts a token uses, not all of them: Mixtral's
  // 6 x active weights is near its per-token count (attention scores aside).
  const LlmConfig& mix = model("mixtral_8x7b");
  const double six_n = 6 * (llm_params(mix).active - llm_params(mix).embedding / 2);
  EXPECT_NEAR(llm_training_flops_per_token(mix, 1), six_n, 0.01 * six_n);
}

TEST(LlmConfig, ReadsHuggingFaceConfigs) {
  const LlmConfig llama = read_llm_config(R"({"model_type": "llama", "hidden_size": 4096,
      "intermediate_size": 11008, "num_attention_heads": 32, "num_hidden_layers": 32,
      "max_position_embeddings": 4096, "vocab_size": 32000, "tie_word_embeddings": false})",
                                          "llama.json", "mine");
  EXPECT_EQ(llama.name, "mine");
  EXPECT_EQ(llama.kv_heads, 32);  // absent: multi-head attention
  EXPECT_EQ(llm_params(llama).total, llm_params(model("llama2_7b")).total);
  const LlmConfig mix = read_llm_config(R"({"model_type": "mixtral", "hidden_size": 4096,
      "intermediate_size": 14336, "num_attention_heads": 32, "num_key_value_heads": 8,
      "num_hidden_layers": 32, "max_position_embeddings": 32768, "vocab_size": 32000,
      "num_local_experts": 8, "num_experts_per_tok": 2})",
                                        "mixtral.json", "mixtral");
  EXPECT_EQ(llm_params(mix).total, llm_params(model("mixtral_8x7b")).total);
  const LlmConfig gpt2 = read_llm_config(R"({"model_type": "gpt2", "n_embd": 768, "n_layer": 12,
      "n_head": 12, "n_inner": null, "n_positions": 1024, "vocab_size": 50257})",
                                         "gpt2.json", "gpt2");
  EXPECT_EQ(gpt2.ffn, 4 * 768);
  // Qwen3 and Qwen3-MoE configs as released: head_dim apart from hidden / heads, q/k norms,
  // fine-grained experts of moe_intermediate_size.
  const LlmConfig q3 = read_llm_config(R"({"model_type": "qwen3", "hidden_size": 4096,
      "intermediate_size": 12288, "num_attention_heads": 32, "num_key_value_heads": 8,
      "head_dim": 128, "num_hidden_layers": 36, "max_position_embeddings": 40960,
      "vocab_size": 151936, "tie_word_embeddings": false})",
                                       "qwen3.json", "qwen3");
  EXPECT_EQ(llm_params(q3).total, llm_params(model("qwen3_8b")).total);
  const LlmConfig moe = read_llm_config(R"({"model_type": "qwen3_moe", "hidden_size": 2048,
      "intermediate_size": 6144, "moe_intermediate_size": 768, "num_experts": 128,
      "num_experts_per_tok": 8, "num_attention_heads": 32, "num_key_value_heads": 4,
      "head_dim": 128, "num_hidden_layers": 48, "max_position_embeddings": 40960,
      "vocab_size": 151936, "tie_word_embeddings": false})",
                                        "qwen3_moe.json", "a3b");
  EXPECT_EQ(moe.head_dim(), 128);
  EXPECT_EQ(moe.q_width(), 4096);
  EXPECT_EQ(llm_params(moe).total, llm_params(model("qwen3_30b_a3b")).total);
  EXPECT_EQ(llm_params(moe).active, llm_params(model("qwen3_30b_a3b")).active);
  const LlmConfig q2 = read_llm_config(R"({"model_type": "qwen2", "hidden_size": 3584,
      "intermediate_size": 18944, "num_attention_heads": 28, "num_key_value_heads": 4,
      "num_hidden_layers": 28, "max_position_embeddings": 32768, "vocab_size": 152064,
      "tie_word_embeddings": false})",
                                       "qwen2.json", "qwen2");
  EXPECT_TRUE(q2.qkv_bias);
  EXPECT_EQ(q2.head_size, 0);  // 3584 / 28 = 128: no width of its own
  EXPECT_EQ(llm_params(q2).total, llm_params(model("qwen2_7b")).total);
  EXPECT_NEAR(llm_params(gpt2).total, 124.44e6, 0.01e6);  // GPT-2 small's 124M
}

TEST(LlmConfig, RefusesConfigsItCannotModelWithTheFieldNamed) {
  auto message = [](const std::string& text) {
    try {
      read_llm_config(text, "c.json", "x");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message("{").find("c.json: not JSON"), std::string::npos);
  EXPECT_NE(message(R"({"model_type": "t5"})").find("known: llama, mistral, mixtral"),
            std::string::npos);
  EXPECT_NE(message(R"({"model_type": "llama", "hidden_size": 4096})")
                .find("missing \"num_hidden_layers\""),
            std::string::npos);
  EXPECT_NE(message(R"({"model_type": "llama", "hidden_size": 4096, "intermediate_size": 1,
      "num_attention_heads": 30, "num_hidden_layers": 2, "max_position_embeddings": 8,
      "vocab_size": 8})")
                .find("heads (30) must divide hidden (4096)"),
            std::string::npos);
  EXPECT_NE(message(R"({"model_type": "llama", "hidden_size": -4})")
                .find("\"hidden_size\" must be a positive integer"),
            std::string::npos);
  EXPECT_EQ(find_llm("LLaMA2_70B"), find_llm("llama2_70b"));
  EXPECT_EQ(find_llm("gpt5"), nullptr);
}

}  // namespace
}  // namespace orrery
