#include <functional>

#include "common/errors.h"
#include "common/suggest.h"
#include "workloads/model_graph_check.h"
#include "workloads/zoo/zoo.h"
#include "workloads/zoo/zoo_models.h"

namespace orrery {

namespace {

using zoo::ZooKeys;

struct Entry {
  const char* name;
  const char* description;
  std::function<ModelGraph(ZooKeys&)> make;
};

const std::vector<Entry>& registry() {
  static const std::vector<Entry> entries = {
      {"bert_base", "BERT-base encoder with a task head (Devlin et al. 2019; Hugging Face layout)",
       [](ZooKeys& k) {
         return zoo::make_bert(k, {"bert_base", 768, 12, 12, 128});
       }},
      {"bert_large",
       "BERT-large encoder with a task head, sequence 512 (Devlin et al. 2019; Hugging Face "
       "layout)",
       [](ZooKeys& k) {
         return zoo::make_bert(k, {"bert_large", 1024, 24, 16, 512});
       }},
      {"dlrm_ddp",
       "DLRM_DDP of Table III, \"Building a Performance Model for Deep Learning Recommendation "
       "Model Training on GPUs\" (Lin et al.) (Meta dlrm_s_pytorch.py)",
       [](ZooKeys& k) { return zoo::make_dlrm(k, "ddp"); }},
      {"dlrm_default",
       "DLRM_default of Table III, \"Building a Performance Model for Deep Learning Recommendation "
       "Model Training on GPUs\" (Lin et al.) (Meta dlrm_s_pytorch.py)",
       [](ZooKeys& k) { return zoo::make_dlrm(k, "default"); }},
      {"dlrm_mlperf",
       "DLRM_MLPerf of Table III, \"Building a Performance Model for Deep Learning Recommendation "
       "Model Training on GPUs\" (Lin et al.), Criteo Kaggle table sizes",
       [](ZooKeys& k) { return zoo::make_dlrm(k, "mlperf"); }},
      {"gcn",
       "large-embedding recommender sized as GCN in Tables IV-V of \"Characterizing Deep Learning "
       "Training Workloads on Alibaba-PAI\" (Wang et al.)",
       [](ZooKeys& k) { return zoo::make_large_embedding(k, "gcn"); }},
      {"gnmt", "GNMT-like LSTM encoder-decoder with attention (MLPerf GNMT reference layout)",
       zoo::make_gnmt},
      {"gpt2", "GPT-2 decoder, 124 M 'small' by default (Radford et al. 2019; Hugging Face)",
       [](ZooKeys& k) {
         return zoo::make_gpt(k, {"gpt2", 8, 1024, 768, 12, 12, 50257, false});
       }},
      {"gpt2_large", "GPT-2 large decoder, 774 M (Radford et al. 2019; Hugging Face gpt2-large)",
       [](ZooKeys& k) {
         return zoo::make_gpt(k, {"gpt2_large", 8, 1024, 1280, 36, 20, 50257, false});
       }},
      {"gpt3_2.7b",
       "GPT-3 2.7B decoder, sequence 2048, dense attention (Brown et al. 2020, Table 2.1)",
       [](ZooKeys& k) {
         return zoo::make_gpt(k, {"gpt3_2.7b", 4, 2048, 2560, 32, 32, 50257, false});
       }},
      {"gpt3_xl",
       "GPT-3 XL decoder, 1.3 B, sequence 2048, dense attention (Brown et al. 2020, Table 2.1; "
       "16 heads of 128, as the table's d_head gives)",
       [](ZooKeys& k) {
         return zoo::make_gpt(k, {"gpt3_xl", 4, 2048, 2048, 24, 16, 50257, false});
       }},
      {"inception_v3", "Inception-v3 (Szegedy et al. 2016; torchvision layout)",
       zoo::make_inception_v3},
      {"lstm_lm", "LSTM language model, Zaremba et al. 2014 'medium' by default",
       zoo::make_lstm_lm},
      {"multi_interests",
       "large-embedding recommender sized as Multi-Interests in Tables IV-V of "
       "\"Characterizing Deep Learning Training Workloads on Alibaba-PAI\" (Wang et al.)",
       [](ZooKeys& k) { return zoo::make_large_embedding(k, "multi_interests"); }},
      {"opt_1.3b",
       "OPT-1.3B decoder, sequence 2048, ReLU MLP (Zhang et al. 2022, Table 1; Hugging Face "
       "facebook/opt-1.3b)",
       [](ZooKeys& k) {
         return zoo::make_gpt(k, {"opt_1.3b", 4, 2048, 2048, 24, 32, 50272, true});
       }},
      {"resnet101", "ResNet-101 (He et al. 2016; torchvision layout)",
       [](ZooKeys& k) { return zoo::make_resnet(k, 101); }},
      {"resnet152", "ResNet-152 (He et al. 2016; torchvision layout)",
       [](ZooKeys& k) { return zoo::make_resnet(k, 152); }},
      {"resnet50", "ResNet-50 (He et al. 2016; torchvision layout)",
       [](ZooKeys& k) { return zoo::make_resnet(k, 50); }},
      {"transformer_base",
       "Transformer (base) encoder-decoder for WMT'14 En-De, 6 + 6 layers, d_model 512 "
       "(Vaswani et al. 2017, Table 3; fairseq transformer_wmt_en_de layout)",
       [](ZooKeys& k) {
         return zoo::make_transformer_nmt(k, {"transformer_base", 512, 2048, 8, "0.1"});
       }},
      {"transformer_big",
       "Transformer (big) encoder-decoder for WMT'14 En-De, 6 + 6 layers, d_model 1024 "
       "(Vaswani et al. 2017, Table 3; fairseq transformer_vaswani_wmt_en_de_big layout)",
       [](ZooKeys& k) {
         return zoo::make_transformer_nmt(k, {"transformer_big", 1024, 4096, 16, "0.3"});
       }},
      {"vgg16", "VGG-16 (Simonyan & Zisserman 2015, config D; torchvision layout)",
       [](ZooKeys& k) { return zoo::make_vgg(k, 16); }},
      {"vgg19", "VGG-19 (Simonyan & Zisserman 2015, config E; torchvision layout)",
       [](ZooKeys& k) { return zoo::make_vgg(k, 19); }},
  };
  return entries;
}

const Entry& find(const std::string& name) {
  for (const auto& e : registry())
    if (name == e.name) return e;
  std::string list;
  for (const auto& n : zoo_model_names()) list += (list.empty() ? "" : ", ") + n;
  throw InputError("unknown model \"" + name + "\"" + did_you_mean(name, zoo_model_names()) +
                   " (known models: " + list + ")");
}

}  // namespace

std::vector<std::string> zoo_model_names() {
  std::vector<std::string> names;
  for (const auto& e : registry()) names.push_back(e.name);
  return names;
}

bool is_zoo_model(const std::string& name) {
  for (const auto& e : registry())
    if (name == e.name) return true;
  return false;
}

ModelGraph make_zoo_model(const std::string& name, const YamlMap& keys,
                          const std::map<std::string, std::string>& defaults) {
  const Entry& e = find(name);
  ZooKeys k(keys, defaults);
  ModelGraph g = e.make(k);
  k.done();
  for (const auto& [key, value] : k.values()) g.hyper[key] = value;
  // The keys' ranges bound each dimension, not their products: check the sizes they make.
  check_model_graph(g, "model " + name);
  return g;
}

ZooModelInfo zoo_model_info(const std::string& name) {
  const Entry& e = find(name);
  // The generators declare their keys as they read them: run one with every default.
  YamlMap empty(YAML::Node(), "defaults");
  ZooKeys k(empty);
  e.make(k);
  return {e.name, e.description, k.docs()};
}

}  // namespace orrery
