// LSTM language model: token embedding, stacked LSTM layers, a linear decoder over the
// vocabulary, cross-entropy per token. Defaults are the "medium" model of Zaremba, Sutskever &
// Vinyals, "Recurrent Neural Network Regularization" (2014): 2 layers of 650 units, 35 unrolled
// steps, batch 20, 10k-word Penn Treebank vocabulary, dropout between layers, plain SGD.
#include "workloads/zoo/zoo_models.h"

namespace orrery::zoo {

ModelGraph make_lstm_lm(ZooKeys& keys) {
  LayerBuilder b = keys.builder("lstm_lm", 20, "sgd");
  const int64_t seq = keys.integer("seq_len", 35, "unrolled time steps (tokens per sample)");
  const int64_t vocab = keys.integer("vocab", 10000, "vocabulary size");
  const int64_t embed = keys.integer("embed", 650, "embedding width");
  const int64_t hidden = keys.integer("hidden", 650, "LSTM units per layer");
  const int64_t layers = keys.integer("layers", 2, "stacked LSTM layers", 1, ZooKeys::kMaxRepeats);
  const bool tie = keys.boolean("tie_weights", false,
                                "decoder reuses the embedding matrix (needs embed == hidden)");
  if (tie && embed != hidden) keys.fail("tie_weights", "needs embed == hidden");
  keys.done();

  const int table = b.param("encoder", "weight", {vocab, embed});
  Tensor x = b.embedding("encoder", table, {seq, b.batch()}, false);  // [S, B, E]
  x = b.dropout("drop", x);
  for (int64_t l = 0; l < layers; ++l) {
    x = b.lstm("rnn.l" + std::to_string(l), x, hidden);
    x = b.dropout("drop", x);
  }
  x = b.view(x, {seq * b.batch(), hidden});
  x = b.linear("decoder", x, vocab, true, tie ? table : -1);
  b.cross_entropy("loss", x);
  return b.finish();
}

}  // namespace orrery::zoo
