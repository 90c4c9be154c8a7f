// Zoo models from a Hugging Face-style config.json: the architecture fields of GPT-2, OPT and
// BERT checkpoints' configs mapped onto the zoo's generators and their keys, so
//   workload: {type: hf_config, file: gpt2-large/config.json, batch: 8}
// trains the model the config describes (docs/workloads.md, "From a Hugging Face config").
#pragma once

#include <map>
#include <string>

namespace orrery::zoo {

struct HfModel {
  std::string zoo_model;                    // the generator: gpt2, opt_1.3b or bert_base
  std::map<std::string, std::string> keys;  // its keys (hidden, layers, heads, vocab...)
  std::string model_type;                   // the config's model_type
};

// Reads a config.json's text (`origin` names it in messages). Throws InputError naming the
// origin and the field for bad JSON, a model_type other than gpt2, opt or bert (listing those),
// a missing or non-integer size, or a feature the generators do not have (OPT's
// word_embed_proj_dim different from hidden_size, a GPT-2 activation other than GELU).
HfModel read_hf_config(const std::string& json_text, const std::string& origin);

}  // namespace orrery::zoo
