// Transformer encoders and decoders.
//  - BERT-base (Devlin et al., 2019), laid out as Hugging Face BertModel: word, position and
//    token-type embeddings, post-LN layers with separate query/key/value projections, GELU
//    feed-forward; head "classifier" (pooler + linear, as BertForSequenceClassification) or
//    "qa" (per-token start/end logits, as BertForQuestionAnswering).
//  - GPT-2 (Radford et al., 2019; the 124 M "small" model by default), laid out as Hugging Face
//    GPT2LMHeadModel: pre-LN blocks with a fused qkv projection and causal mask, final layer
//    norm, language-model head tied to the token embedding.
// Attention is batched matrix products over batch x heads, or with `attention: flash` the fused
// attention op. The padding mask of BERT is not modelled (inputs are taken as unpadded).
#include "workloads/zoo/zoo_models.h"

namespace orrery::zoo {

namespace {

struct Dims {
  int64_t batch, seq, hidden, heads;
  bool flash = false;  // `attention: flash`: one fused kernel each way
  int64_t head_dim() const { return hidden / heads; }
};

// softmax(q k^T / sqrt(d) [masked]) v for q, k, v of shape [B, S, H]; returns [B, S, H]. Eager
// (Hugging Face's "eager" attention): two batched products, a mask, a softmax and its dropout;
// flash (scaled_dot_product_attention's flash kernel): one fused op.
Tensor attention(LayerBuilder& b, const std::string& p, const Dims& d, Tensor q, Tensor k, Tensor v,
                 bool causal) {
  if (d.flash) {
    const Shape heads{d.batch, d.heads, d.seq, d.head_dim()};  // views: the layout is free
    Tensor o = b.attention(p, b.view(q, heads), b.view(k, heads), b.view(v, heads), causal);
    return b.view(o, {d.batch, d.seq, d.hidden});
  }
  const int64_t bh = d.batch * d.heads;
  q = b.view(q, {bh, d.seq, d.head_dim()});
  k = b.view(k, {bh, d.head_dim(), d.seq});  // transposed view
  v = b.view(v, {bh, d.seq, d.head_dim()});
  Tensor s = b.scale(p, b.bmm(p + ".scores", q, k));
  if (causal) s = b.mask(p, s);
  s = b.dropout(p, b.softmax(p, s));
  return b.view(b.bmm(p + ".context", s, v), {d.batch, d.seq, d.hidden});
}

Tensor bert_layer(LayerBuilder& b, const std::string& p, const Dims& d, int64_t inter, Tensor x) {
  const std::string self = p + ".attention.self";
  Tensor q = b.linear(self + ".query", x, d.hidden, true);
  Tensor k = b.linear(self + ".key", x, d.hidden, true);
  Tensor v = b.linear(self + ".value", x, d.hidden, true);
  Tensor a = attention(b, self, d, q, k, v, false);
  const std::string out = p + ".attention.output";
  a = b.dropout(out, b.linear(out + ".dense", a, d.hidden, true));
  x = b.layernorm(out + ".LayerNorm", b.add(out, a, x));
  Tensor f = b.gelu(p + ".intermediate", b.linear(p + ".intermediate.dense", x, inter, true));
  f = b.dropout(p + ".output", b.linear(p + ".output.dense", f, d.hidden, true));
  return b.layernorm(p + ".output.LayerNorm", b.add(p + ".output", f, x));
}

Tensor gpt2_block(LayerBuilder& b, const std::string& p, const Dims& d, int64_t ffn, bool relu,
                  Tensor x) {
  Tensor qkv = b.linear(p + ".attn.c_attn", b.layernorm(p + ".ln_1", x), 3 * d.hidden, true);
  std::vector<Tensor> parts = b.split(p + ".attn", qkv, 2, {d.hidden, d.hidden, d.hidden});
  Tensor a = attention(b, p + ".attn", d, parts[0], parts[1], parts[2], true);
  a = b.dropout(p + ".attn.resid_dropout", b.linear(p + ".attn.c_proj", a, d.hidden, true));
  x = b.add(p + ".attn", a, x);
  Tensor f = b.linear(p + ".mlp.c_fc", b.layernorm(p + ".ln_2", x), ffn, true);
  f = b.linear(p + ".mlp.c_proj", relu ? b.relu(p + ".mlp", f) : b.gelu(p + ".mlp", f), d.hidden,
               true);
  return b.add(p + ".mlp", b.dropout(p + ".mlp.dropout", f), x);
}

}  // namespace

ModelGraph make_bert(ZooKeys& keys, const BertSize& size) {
  LayerBuilder b = keys.builder(size.name, 32, "adam");
  Dims d{b.batch(), 0, 0, 0};
  d.seq = keys.integer("seq_len", size.seq, "tokens per sample", 2);
  d.hidden = keys.integer("hidden", size.hidden, "hidden size");
  const int64_t layers =
      keys.integer("layers", size.layers, "encoder layers", 1, ZooKeys::kMaxRepeats);
  d.heads = keys.integer("heads", size.heads, "attention heads");
  d.flash =
      keys.choice("attention", "eager", {"eager", "flash"},
                  "eager: batched products and a softmax; flash: one fused kernel") == "flash";
  const int64_t inter = keys.integer("intermediate", 4 * d.hidden, "feed-forward width");
  const int64_t vocab = keys.integer("vocab", 30522, "WordPiece vocabulary");
  const int64_t positions = keys.integer("max_positions", 512, "position embeddings");
  const int64_t types = keys.integer("type_vocab", 2, "token types (segments)");
  const std::string head =
      keys.choice("head", "classifier", {"classifier", "qa"}, "task head on top of the encoder");
  const int64_t labels = keys.integer("num_labels", 2, "classes of the classifier head");
  if (d.hidden % d.heads != 0) keys.fail("heads", "must divide hidden");
  if (d.seq > positions) keys.fail("seq_len", "must be <= max_positions");
  keys.done();

  const Shape ids{d.batch, d.seq};
  Tensor w =
      b.embedding("embeddings.word_embeddings",
                  b.param("embeddings.word_embeddings", "weight", {vocab, d.hidden}), ids, false);
  Tensor pe =
      b.embedding("embeddings.position_embeddings",
                  b.param("embeddings.position_embeddings", "weight", {positions, d.hidden}), ids,
                  false, false);
  Tensor te = b.embedding("embeddings.token_type_embeddings",
                          b.param("embeddings.token_type_embeddings", "weight", {types, d.hidden}),
                          ids, false);
  Tensor x = b.add("embeddings", b.add("embeddings", w, pe), te);
  x = b.dropout("embeddings", b.layernorm("embeddings.LayerNorm", x));
  for (int64_t l = 0; l < layers; ++l)
    x = bert_layer(b, "encoder.layer." + std::to_string(l), d, inter, x);

  if (head == "classifier") {
    Tensor first = b.split("pooler", x, 1, {1, d.seq - 1})[0];
    Tensor pooled = b.tanh(
        "pooler", b.linear("pooler.dense", b.view(first, {d.batch, d.hidden}), d.hidden, true));
    Tensor logits = b.linear("classifier", b.dropout("dropout", pooled), labels, true);
    b.cross_entropy("loss", logits);
  } else {
    Tensor logits = b.linear("qa_outputs", x, 2, true);  // [B, S, 2]
    std::vector<Tensor> se = b.split("qa_outputs", logits, 2, {1, 1});
    b.cross_entropy("start_loss", b.view(se[0], {d.batch, d.seq}));
    b.cross_entropy("end_loss", b.view(se[1], {d.batch, d.seq}));
  }
  return b.finish();
}

ModelGraph make_gpt(ZooKeys& keys, const GptSize& size) {
  LayerBuilder b = keys.builder(size.name, size.batch, "adam");
  Dims d{b.batch(), 0, 0, 0};
  d.seq = keys.integer("seq_len", size.seq, "tokens per sample");
  d.hidden = keys.integer("hidden", size.hidden, "embedding width (n_embd)");
  const int64_t layers =
      keys.integer("layers", size.layers, "decoder blocks (n_layer)", 1, ZooKeys::kMaxRepeats);
  d.heads = keys.integer("heads", size.heads, "attention heads (n_head)");
  d.flash =
      keys.choice("attention", "eager", {"eager", "flash"},
                  "eager: batched products and a softmax; flash: one fused kernel") == "flash";
  const int64_t vocab = keys.integer("vocab", size.vocab, "BPE vocabulary");
  const int64_t positions =
      keys.integer("max_positions", size.seq, "position embeddings (n_positions)");
  const int64_t ffn = keys.integer("ffn", 4 * d.hidden, "MLP width (n_inner, ffn_dim)");
  if (d.hidden % d.heads != 0) keys.fail("heads", "must divide hidden");
  if (d.seq > positions) keys.fail("seq_len", "must be <= max_positions");
  keys.done();

  const Shape ids{d.batch, d.seq};
  const int wte = b.param("transformer.wte", "weight", {vocab, d.hidden});
  Tensor x = b.add(
      "transformer", b.embedding("transformer.wte", wte, ids, false),
      b.embedding("transformer.wpe", b.param("transformer.wpe", "weight", {positions, d.hidden}),
                  ids, false, false));
  x = b.dropout("transformer.drop", x);
  for (int64_t l = 0; l < layers; ++l)
    x = gpt2_block(b, "transformer.h." + std::to_string(l), d, ffn, size.relu, x);
  x = b.layernorm("transformer.ln_f", x);
  Tensor logits = b.linear("lm_head", b.view(x, {d.batch * d.seq, d.hidden}), vocab, false, wte);
  b.cross_entropy("loss", logits);
  return b.finish();
}

}  // namespace orrery::zoo
