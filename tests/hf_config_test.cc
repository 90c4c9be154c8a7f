// Zoo models from Hugging Face-style config.json files (workloads/zoo/hf_config.h): the configs
// of published checkpoints rebuild the zoo's models of the same name exactly, scenario keys win
// over the config, and configs the generators cannot build are clear errors.
#include "workloads/zoo/hf_config.h"

#include <gtest/gtest.h>

#include "common/errors.h"
#include "common/yaml_reader.h"
#include "scenario/scenario.h"
#include "test_util.h"
#include "workloads/zoo/zoo.h"

namespace orrery {
namespace {

// The architecture fields of the checkpoints' config.json files on the Hugging Face hub
// (gpt2-large, facebook/opt-1.3b, bert-large-uncased), other fields dropped.
const char* kGpt2Large =
    R"({"activation_function": "gelu_new", "model_type": "gpt2", "n_ctx": 1024, "n_embd": 1280,
        "n_head": 20, "n_inner": null, "n_layer": 36, "n_positions": 1024, "vocab_size": 50257})";
const char* kOpt13b =
    R"({"activation_function": "relu", "model_type": "opt", "hidden_size": 2048, "ffn_dim": 8192,
        "num_attention_heads": 32, "num_hidden_layers": 24, "max_position_embeddings": 2048,
        "vocab_size": 50272, "word_embed_proj_dim": 2048, "do_layer_norm_before": true})";
const char* kBertLarge =
    R"({"model_type": "bert", "hidden_size": 1024, "intermediate_size": 4096,
        "num_attention_heads": 16, "num_hidden_layers": 24, "max_position_embeddings": 512,
        "type_vocab_size": 2, "vocab_size": 30522, "hidden_act": "gelu"})";

ModelGraph from_config(const char* json, const std::string& extra_keys = "{}") {
  zoo::HfModel hf = zoo::read_hf_config(json, "config.json");
  YAML::Node keys = YAML::Load(extra_keys);
  return make_zoo_model(hf.zoo_model, YamlMap(keys, "s.yaml", "workload"), hf.keys);
}

ModelGraph zoo_model(const std::string& name) {
  YAML::Node none = YAML::Load("{}");
  return make_zoo_model(name, YamlMap(none, "s.yaml", "workload"));
}

TEST(HfConfig, PublishedConfigsRebuildTheZooModels) {
  // GPT-2 large: 774 M parameters (Radford et al. 2019), the zoo's gpt2_large.
  const ModelGraph gpt = from_config(kGpt2Large);
  EXPECT_EQ(gpt.total_params(), zoo_model("gpt2_large").total_params());
  EXPECT_NEAR(gpt.total_params(), 774.03e6, 0.01e6);
  EXPECT_EQ(gpt.ops.size(), zoo_model("gpt2_large").ops.size());
  // OPT-1.3B and BERT-large: the same parameters and the same FLOPs as the zoo's.
  EXPECT_EQ(from_config(kOpt13b).total_params(), zoo_model("opt_1.3b").total_params());
  EXPECT_EQ(from_config(kOpt13b).total_flops(Phase::kForward),
            zoo_model("opt_1.3b").total_flops(Phase::kForward));
  // bert_large's default sequence is 512, the config's max_position_embeddings.
  EXPECT_EQ(from_config(kBertLarge).total_params(), zoo_model("bert_large").total_params());
  EXPECT_EQ(from_config(kBertLarge).total_flops(Phase::kForward),
            zoo_model("bert_large").total_flops(Phase::kForward));
}

TEST(HfConfig, ScenarioKeysWinOverTheConfig) {
  // Two of GPT-2 large's 36 blocks: the parameters drop by 34 blocks of 12 h^2 + 13 h
  // (attention 4 h^2 + 4 h, MLP 8 h^2 + 5 h, two layer norms 4 h) with h = 1280.
  const ModelGraph two = from_config(kGpt2Large, "{layers: 2, batch: 2, seq_len: 128}");
  const double h = 1280;
  EXPECT_NEAR(from_config(kGpt2Large).total_params() - two.total_params(),
              34 * (12 * h * h + 13 * h), 0.5);
  EXPECT_EQ(two.batch, 2);
  // The MLP follows n_inner when a config gives it.
  std::string wide = kGpt2Large;
  wide.replace(wide.find("\"n_inner\": null"), 15, "\"n_inner\": 6400");
  EXPECT_NEAR(from_config(wide.c_str()).total_params() - from_config(kGpt2Large).total_params(),
              36 * (2 * 1280.0 * 1280 + 1280), 0.5);
}

TEST(HfConfig, ConfigsTheGeneratorsCannotBuildAreClearErrors) {
  auto err = [](const std::string& json) {
    try {
      zoo::read_hf_config(json, "ckpt/config.json");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string llama = err(R"({"model_type": "llama", "hidden_size": 4096})");
  EXPECT_NE(llama.find("ckpt/config.json"), std::string::npos) << llama;
  EXPECT_NE(llama.find("\"llama\""), std::string::npos) << llama;
  EXPECT_NE(llama.find("gpt2, opt, bert"), std::string::npos) << llama;
  std::string no_layers = kGpt2Large;
  no_layers.replace(no_layers.find("\"n_layer\": 36"), 13, "\"n_lyr\": 36");
  EXPECT_NE(err(no_layers).find("missing \"n_layer\""), std::string::npos) << err(no_layers);
  EXPECT_NE(err("{not json").find("not JSON"), std::string::npos);
  EXPECT_NE(err(R"({"model_type": "gpt2", "n_embd": -1})").find("\"n_embd\" must be a positive"),
            std::string::npos);
  std::string opt350 = kOpt13b;
  opt350.replace(opt350.find("\"word_embed_proj_dim\": 2048"), 27, "\"word_embed_proj_dim\": 512");
  EXPECT_NE(err(opt350).find("word_embed_proj_dim"), std::string::npos) << err(opt350);
}

TEST(HfConfig, ScenarioLoadsAConfigBesideIt) {
  const std::string dir = testing::make_temp_dir("hf");
  std::filesystem::create_directories(dir + "/gpt2-large");
  testing::write_file(dir + "/gpt2-large/config.json", kGpt2Large);
  testing::write_file(dir + "/s.yaml",
                      "name: hf\nplatform: {preset: dgx-a100, servers: 1}\n"
                      "workload: {type: hf_config, file: gpt2-large/config.json, batch: 2, "
                      "seq_len: 256}\nstrategy: {type: 1w1g}\n");
  const Scenario sc = load_scenario(dir + "/s.yaml");
  EXPECT_NE(sc.workload_summary.find("gpt2-large (batch 2,"), std::string::npos)
      << sc.workload_summary;
  testing::write_file(dir + "/bad.yaml",
                      "name: hf\nplatform: {preset: dgx-a100, servers: 1}\n"
                      "workload: {type: hf_config, file: missing.json}\nstrategy: {type: 1w1g}\n");
  try {
    load_scenario(dir + "/bad.yaml");
    FAIL() << "a missing config was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.yaml:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("missing.json"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace orrery
