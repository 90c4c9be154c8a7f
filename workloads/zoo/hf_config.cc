#include "workloads/zoo/hf_config.h"

#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "workloads/config_json.h"

namespace orrery::zoo {
namespace {

using nlohmann::json;

// The integer field `key` of `j` (the first of `names` present), as text for the zoo's keys.
std::string size_field(const json& j, const std::vector<const char*>& names,
                       const std::string& origin, bool required = true) {
  for (const char* n : names) {
    if (!j.contains(n) || j[n].is_null()) continue;
    if (!j[n].is_number_integer() || j[n].get<int64_t>() < 1)
      throw InputError(origin + ": \"" + n + "\" must be a positive integer");
    return std::to_string(j[n].get<int64_t>());
  }
  if (!required) return "";
  throw InputError(origin + ": missing \"" + names.front() + "\" (a size every " +
                   "config of this model_type has)");
}

std::string text_field(const json& j, const char* key, const std::string& fallback) {
  if (!j.contains(key) || j[key].is_null()) return fallback;
  return j[key].is_string() ? j[key].get<std::string>() : j[key].dump();
}

}  // namespace

HfModel read_hf_config(const std::string& json_text, const std::string& origin) {
  json j = parse_config_json(json_text, origin);
  HfModel m;
  m.model_type = text_field(j, "model_type", "");
  auto put = [&](const char* key, const std::vector<const char*>& names, bool required = true) {
    std::string v = size_field(j, names, origin, required);
    if (!v.empty()) m.keys[key] = v;
  };
  if (m.model_type == "gpt2") {
    const std::string act = text_field(j, "activation_function", "gelu_new");
    if (act.rfind("gelu", 0) != 0)
      throw InputError(origin + ": activation_function \"" + act +
                       "\": the GPT-2 generator has GELU only");
    m.zoo_model = "gpt2";
    put("hidden", {"n_embd"});
    put("layers", {"n_layer"});
    put("heads", {"n_head"});
    put("vocab", {"vocab_size"});
    put("max_positions", {"n_positions"});
    put("seq_len", {"n_ctx", "n_positions"});
    put("ffn", {"n_inner"}, false);  // null: 4 x n_embd
  } else if (m.model_type == "opt") {
    const std::string act = text_field(j, "activation_function", "relu");
    if (act != "relu")
      throw InputError(origin + ": activation_function \"" + act +
                       "\": the OPT generator has ReLU only");
    if (j.contains("word_embed_proj_dim") && j.contains("hidden_size") &&
        j["word_embed_proj_dim"] != j["hidden_size"])
      throw InputError(origin +
                       ": word_embed_proj_dim differs from hidden_size (OPT-350m's "
                       "projected embeddings), which the generator does not model");
    m.zoo_model = "opt_1.3b";
    put("hidden", {"hidden_size"});
    put("layers", {"num_hidden_layers"});
    put("heads", {"num_attention_heads"});
    put("vocab", {"vocab_size"});
    put("max_positions", {"max_position_embeddings"});
    put("seq_len", {"max_position_embeddings"});
    put("ffn", {"ffn_dim"});
  } else if (m.model_type == "bert") {
    m.zoo_model = "bert_base";
    put("hidden", {"hidden_size"});
    put("layers", {"num_hidden_layers"});
    put("heads", {"num_attention_heads"});
    put("intermediate", {"intermediate_size"});
    put("vocab", {"vocab_size"});
    put("max_positions", {"max_position_embeddings"});
    put("seq_len", {"max_position_embeddings"});
    put("type_vocab", {"type_vocab_size"}, false);
  } else {
    throw InputError(origin + ": model_type \"" + m.model_type +
                     "\" is not one the zoo builds from a config (gpt2, opt, bert)");
  }
  return m;
}

}  // namespace orrery::zoo
