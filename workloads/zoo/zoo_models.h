// The zoo's generators, one per model family (one .cc file each); zoo_registry.cc names them.
// Each reads its keys first (ZooKeys), calls keys.done(), then builds.
#pragma once

#include <string>

#include "workloads/model_graph.h"
#include "workloads/zoo/zoo_keys.h"

namespace orrery::zoo {

ModelGraph make_vgg(ZooKeys& keys, int depth);     // cnn_vgg.cc: 16 or 19
ModelGraph make_resnet(ZooKeys& keys, int depth);  // cnn_resnet.cc: 50, 101, 152
ModelGraph make_inception_v3(ZooKeys& keys);       // cnn_inception.cc
ModelGraph make_lstm_lm(ZooKeys& keys);            // rnn_lstm.cc
ModelGraph make_gnmt(ZooKeys& keys);               // seq2seq.cc

// A BERT encoder's default size (every value stays a key the scenario may set).
struct BertSize {
  const char* name;
  int64_t hidden, layers, heads, seq;  // feed-forward width: 4 x hidden
};
ModelGraph make_bert(ZooKeys& keys, const BertSize& size);  // transformer.cc

// A GPT-style pre-LN decoder's default size: GPT-2, GPT-3 and OPT share the block (tied input
// and output embeddings, learned positions, a 4 x hidden MLP); OPT's MLP uses ReLU, the others
// GELU.
struct GptSize {
  const char* name;
  int64_t batch;  // default samples per replica
  int64_t seq, hidden, layers, heads, vocab;
  bool relu;
};
ModelGraph make_gpt(ZooKeys& keys, const GptSize& size);  // transformer.cc

// The encoder-decoder Transformer of Vaswani et al. 2017, one row of its Table 3 ("base",
// "big"): 6 + 6 layers, a shared 37,000-token vocabulary (every value stays a key).
struct TransformerSize {
  const char* name;
  int64_t hidden, ffn, heads;  // d_model, d_ff, h
  const char* dropout;         // P_drop, for listings only
};
ModelGraph make_transformer_nmt(ZooKeys& keys, const TransformerSize& size);  // transformer_nmt.cc

ModelGraph make_dlrm(ZooKeys& keys, const std::string& config);  // dlrm.cc: default, mlperf, ddp
ModelGraph make_large_embedding(ZooKeys& keys, const std::string& preset);  // large_embedding.cc

}  // namespace orrery::zoo
