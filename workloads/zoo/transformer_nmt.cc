// The encoder-decoder Transformer of "Attention Is All You Need" (Vaswani et al., 2017), trained
// for translation, laid out as fairseq's `transformer_vaswani_wmt_en_de_big` (and
// `transformer_wmt_en_de` for the base model) with --share-all-embeddings:
//  - one embedding table for source tokens, target tokens and the pre-softmax projection
//    (section 3.4), its lookups multiplied by sqrt(d_model), plus sinusoidal positions
//    (section 3.5: no parameters), then dropout;
//  - post-LN sub-layers, LayerNorm(x + Dropout(Sublayer(x))) (sections 3.1 and 5.4); the
//    encoder and the decoder have no final layer norm;
//  - attention as fairseq's MultiheadAttention: q, k, v and output projections with biases, q
//    scaled by 1/sqrt(d_k), scores and context as batched matrix products over batch x heads;
//    the decoder's self-attention is causally masked, its cross-attention reads the encoder
//    output (keys and values projected from it in every decoder layer);
//  - a ReLU feed-forward network of width d_ff (section 3.3);
//  - cross-entropy over the vocabulary for every target token.
// Left out: dropout on the attention weights (the paper applies none; fairseq's
// attention_dropout defaults to 0), label smoothing's extra reduction over the logits (section
// 5.4, e_ls = 0.1), padding (sentences are taken as full length).
#include "workloads/zoo/zoo_models.h"

namespace orrery::zoo {

namespace {

struct Dims {
  int64_t batch, hidden, heads, ffn;
  int64_t head_dim() const { return hidden / heads; }
};

// Multi-head attention of `query` [B, T, d] over `memory` [B, S, d] (the same tensor for
// self-attention); returns [B, T, d].
Tensor attention(LayerBuilder& b, const std::string& p, const Dims& d, Tensor query, Tensor memory,
                 bool causal) {
  const int64_t t = b.shape(query)[1], s = b.shape(memory)[1];
  const int64_t bh = d.batch * d.heads, hd = d.head_dim();
  Tensor q = b.scale(p, b.linear(p + ".q_proj", query, d.hidden, true));
  Tensor k = b.linear(p + ".k_proj", memory, d.hidden, true);
  Tensor v = b.linear(p + ".v_proj", memory, d.hidden, true);
  Tensor scores = b.bmm(p + ".scores", b.view(q, {bh, t, hd}), b.view(k, {bh, hd, s}));
  if (causal) scores = b.mask(p, scores);
  Tensor probs = b.softmax(p, scores);
  Tensor ctx = b.view(b.bmm(p + ".context", probs, b.view(v, {bh, s, hd})), {d.batch, t, d.hidden});
  return b.linear(p + ".out_proj", ctx, d.hidden, true);
}

// LayerNorm(x + Dropout(y)): the residual connection around every sub-layer.
Tensor residual(LayerBuilder& b, const std::string& norm, Tensor x, Tensor y) {
  return b.layernorm(norm, b.add(norm, b.dropout(norm, y), x));
}

Tensor feed_forward(LayerBuilder& b, const std::string& p, const Dims& d, Tensor x) {
  Tensor h = b.relu(p + ".fc1", b.linear(p + ".fc1", x, d.ffn, true));
  return b.linear(p + ".fc2", h, d.hidden, true);
}

Tensor encoder_layer(LayerBuilder& b, const std::string& p, const Dims& d, Tensor x) {
  x = residual(b, p + ".self_attn_layer_norm", x, attention(b, p + ".self_attn", d, x, x, false));
  return residual(b, p + ".final_layer_norm", x, feed_forward(b, p, d, x));
}

Tensor decoder_layer(LayerBuilder& b, const std::string& p, const Dims& d, Tensor x,
                     Tensor encoder_out) {
  x = residual(b, p + ".self_attn_layer_norm", x, attention(b, p + ".self_attn", d, x, x, true));
  x = residual(b, p + ".encoder_attn_layer_norm", x,
               attention(b, p + ".encoder_attn", d, x, encoder_out, false));
  return residual(b, p + ".final_layer_norm", x, feed_forward(b, p, d, x));
}

// Token embeddings x sqrt(d_model) + sinusoidal positions, then dropout: [B, L, d].
Tensor embed(LayerBuilder& b, const std::string& p, const Dims& d, int table, int64_t length) {
  const std::string layer = p + ".embed_tokens";
  Tensor x = b.scale(layer, b.embedding(layer, table, {d.batch, length}, false));
  x = b.add_constant(p + ".embed_positions", x);
  return b.dropout(p, x);
}

}  // namespace

ModelGraph make_transformer_nmt(ZooKeys& keys, const TransformerSize& size) {
  // Section 5.1: batches of about 25,000 source and 25,000 target tokens on 8 GPUs, 3,125 per
  // GPU: 24 sentence pairs of 128 tokens (3,072) by default.
  LayerBuilder b = keys.builder(size.name, 24, "adam");
  Dims d{b.batch(), 0, 0, 0};
  const int64_t src = keys.integer("src_len", 128, "source tokens per sentence pair");
  const int64_t tgt = keys.integer("tgt_len", 128, "target tokens per sentence pair");
  const int64_t vocab = keys.integer(
      "vocab", 37000, "shared source-target BPE vocabulary (WMT'14 En-De, section 5.1)");
  d.hidden = keys.integer("hidden", size.hidden, "model width d_model");
  d.ffn = keys.integer("ffn", size.ffn, "feed-forward width d_ff");
  d.heads = keys.integer("heads", size.heads, "attention heads h");
  const int64_t enc_layers =
      keys.integer("encoder_layers", 6, "encoder layers N", 1, ZooKeys::kMaxRepeats);
  const int64_t dec_layers =
      keys.integer("decoder_layers", 6, "decoder layers N", 1, ZooKeys::kMaxRepeats);
  const bool share = keys.boolean(
      "share_embedding", true,
      "one table for source, target and the pre-softmax projection (false: the source has its "
      "own, the target's is tied to the projection)");
  if (d.hidden % d.heads != 0) keys.fail("heads", "must divide hidden");
  keys.done();
  // Dropout changes no op's cost; recorded for listings (Table 3, P_drop).
  b.hyper("dropout", size.dropout);

  const int src_table = b.param("encoder.embed_tokens", "weight", {vocab, d.hidden});
  const int tgt_table =
      share ? src_table : b.param("decoder.embed_tokens", "weight", {vocab, d.hidden});

  Tensor x = embed(b, "encoder", d, src_table, src);
  for (int64_t l = 0; l < enc_layers; ++l)
    x = encoder_layer(b, "encoder.layers." + std::to_string(l), d, x);
  const Tensor encoder_out = x;

  Tensor y = embed(b, "decoder", d, tgt_table, tgt);
  for (int64_t l = 0; l < dec_layers; ++l)
    y = decoder_layer(b, "decoder.layers." + std::to_string(l), d, y, encoder_out);
  Tensor logits = b.linear("decoder.output_projection", b.view(y, {d.batch * tgt, d.hidden}), vocab,
                           false, tgt_table);
  b.cross_entropy("loss", logits);
  return b.finish();
}

}  // namespace orrery::zoo
