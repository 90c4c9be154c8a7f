// The zoo's generators, one per model family (one .cc file each); zoo_registry.cc names them.
// Each reads its keys first (ZooKeys), calls keys.done(), then builds.
#pragma once

#include <string>

#include "workloads/model_graph.h"
#include "workloads/zoo/zoo_keys.h"

namespace orrery::zoo {

ModelGraph make_vgg(ZooKeys& keys, int depth);                   // cnn_vgg.cc: 16 or 19
ModelGraph make_resnet(ZooKeys& keys, int depth);                // cnn_resnet.cc: 50 or 152
ModelGraph make_inception_v3(ZooKeys& keys);                     // cnn_inception.cc
ModelGraph make_lstm_lm(ZooKeys& keys);                          // rnn_lstm.cc
ModelGraph make_gnmt(ZooKeys& keys);                             // seq2seq.cc
ModelGraph make_bert(ZooKeys& keys);                             // transformer.cc
ModelGraph make_gpt2(ZooKeys& keys);                             // transformer.cc
ModelGraph make_dlrm(ZooKeys& keys, const std::string& config);  // dlrm.cc: default, mlperf, ddp
ModelGraph make_large_embedding(ZooKeys& keys, const std::string& preset);  // large_embedding.cc

}  // namespace orrery::zoo
