// GNMT-like sequence-to-sequence translation model, laid out as the MLPerf Training GNMT
// reference (PyTorch; Wu et al., "Google's Neural Machine Translation System", 2016, scaled to
// 4+4 layers): shared source/target embedding; encoder = one bidirectional LSTM layer, then
// unidirectional layers with residual connections from the third on; decoder = an LSTM layer
// whose outputs attend (normalized Bahdanau attention, batched over all target steps under
// teacher forcing) to the encoder outputs, then LSTM layers fed [output, context], residual from
// the third on; a linear classifier over the vocabulary; cross-entropy per target token. The
// attention's normalization scalar and bias (h + 1 parameters) are left out.
#include "workloads/zoo/zoo_models.h"

namespace orrery::zoo {

ModelGraph make_gnmt(ZooKeys& keys) {
  LayerBuilder b = keys.builder("gnmt", 128, "adam");
  const int64_t src = keys.integer("src_len", 50, "source tokens per sample");
  const int64_t tgt = keys.integer("tgt_len", 50, "target tokens per sample");
  const int64_t vocab =
      keys.integer("vocab", 32320, "shared BPE vocabulary (MLPerf: 32317 padded)");
  const int64_t h = keys.integer("hidden", 1024, "LSTM units and embedding width");
  const int64_t enc_layers =
      keys.integer("encoder_layers", 4, "encoder LSTM layers (the first is bidirectional)", 2,
                   ZooKeys::kMaxRepeats);
  const int64_t dec_layers = keys.integer("decoder_layers", 4, "decoder LSTM layers", 1, ZooKeys::kMaxRepeats);
  const bool share =
      keys.boolean("share_embedding", true, "encoder and decoder use one embedding table");
  keys.done();
  const int64_t batch = b.batch();

  // Encoder.
  const int enc_table = b.param("embedder", "weight", {vocab, h});
  Tensor x = b.dropout("encoder.dropout", b.embedding("embedder", enc_table, {src, batch}, false));
  Tensor fwd = b.lstm("encoder.rnn_layers.0.fwd", x, h);
  Tensor bwd = b.lstm("encoder.rnn_layers.0.bwd", x, h, true);
  x = b.concat("encoder.rnn_layers.0", {fwd, bwd}, 2);  // [S,B,2h]
  x = b.lstm("encoder.rnn_layers.1", b.dropout("encoder.dropout", x), h);
  for (int64_t l = 2; l < enc_layers; ++l) {
    const std::string name = "encoder.rnn_layers." + std::to_string(l);
    x = b.add(name + ".residual", b.lstm(name, b.dropout("encoder.dropout", x), h), x);
  }
  Tensor context = b.view(x, {batch, src, h});  // batch-first view for attention

  // Decoder layer 0 and attention.
  const int dec_table = share ? enc_table : b.param("decoder.embedder", "weight", {vocab, h});
  Tensor y = b.embedding(share ? "embedder" : "decoder.embedder", dec_table, {tgt, batch}, false);
  y = b.dropout("decoder.dropout", y);
  y = b.lstm("decoder.att_rnn.rnn", y, h);  // [T,B,h]
  const std::string att = "decoder.att_rnn.attn";
  Tensor q = b.linear(att + ".linear_q", b.view(y, {batch, tgt, h}), h, false);
  Tensor k = b.linear(att + ".linear_k", context, h, false);
  Tensor s = b.tanh(att, b.pairwise_add(att, q, k));  // [B,T,S,h]
  s = b.linear(att + ".linear_att", b.view(s, {batch * tgt * src, h}), 1, false);
  s = b.softmax(att, b.view(s, {batch, tgt, src}));
  Tensor ctx = b.bmm(att + ".context", s, context);  // [B,T,h]
  ctx = b.view(ctx, {tgt, batch, h});

  // Decoder layers 1.. take [output, context].
  for (int64_t l = 1; l < dec_layers; ++l) {
    const std::string name = "decoder.rnn_layers." + std::to_string(l - 1);
    Tensor in = b.concat(name + ".input", {b.dropout("decoder.dropout", y), ctx}, 2);
    Tensor out = b.lstm(name, in, h);
    y = l >= 2 ? b.add(name + ".residual", out, y) : out;
  }
  Tensor logits =
      b.linear("decoder.classifier.classifier", b.view(y, {tgt * batch, h}), vocab, true);
  b.cross_entropy("loss", logits);
  return b.finish();
}

}  // namespace orrery::zoo
