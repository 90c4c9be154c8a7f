// The model zoo against published facts. Each expectation names its source and tolerance.
// "torchvision" numbers are the parameter counts and GFLOPS (multiply-adds of conv and linear
// layers, per 224x224 or 299x299 sample) of torchvision.models' documentation tables, which
// agree with the original papers' rounded figures (ResNet-50 25.6 M and ~4.1 G multiply-adds,
// He et al. 2016 Table 1; VGG-16 138 M, Simonyan & Zisserman 2015 Table 2).
#include "workloads/zoo/zoo.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

#include "common/errors.h"
#include "engine/replay.h"
#include "scenario/scenario.h"
#include "tests/test_util.h"
#include "workloads/fixed_rate_graph.h"
#include "workloads/model_graph_check.h"

namespace orrery {
namespace {

ModelGraph build(const std::string& name, const std::string& yaml = "") {
  YAML::Node node = yaml.empty() ? YAML::Node() : YAML::Load(yaml);
  return make_zoo_model(name, YamlMap(node, "test.yaml", "workload"));
}

bool is_gemm_like(const std::string& type) {
  return type == "conv2d" || type == "matmul" || type == "bmm";
}
bool is_gemm_like_bwd(const ModelOp& op) {
  return op.phase == Phase::kBackward &&
         (op.type == "conv2d_bwd_data" || op.type == "conv2d_bwd_filter" || op.type == "matmul" ||
          op.type == "bmm");
}

// Multiply-adds of the forward conv / matmul / bmm ops, per sample.
double forward_macs_per_sample(const ModelGraph& g) {
  double flops = 0;
  for (const auto& op : g.ops)
    if (op.phase == Phase::kForward && is_gemm_like(op.type)) flops += op.flops;
  return flops / 2 / static_cast<double>(g.batch);
}

double backward_to_forward_gemm_ratio(const ModelGraph& g) {
  double fwd = 0, bwd = 0;
  for (const auto& op : g.ops) {
    if (op.phase == Phase::kForward && is_gemm_like(op.type)) fwd += op.flops;
    if (is_gemm_like_bwd(op)) bwd += op.flops;
  }
  return bwd / fwd;
}

// The forward op of `layer` with the given type.
const ModelOp& forward_op(const ModelGraph& g, const std::string& layer, const std::string& type) {
  for (const auto& op : g.ops)
    if (op.phase == Phase::kForward && op.layer == layer && op.type == type) return op;
  throw std::runtime_error("no forward " + type + " op in layer " + layer);
}

TEST(Zoo, EveryModelBuildsAValidGraphWithAllThreePhases) {
  for (const auto& name : zoo_model_names()) {
    SCOPED_TRACE(name);
    ModelGraph g = build(name);
    EXPECT_NO_THROW(check_model_graph(g, name));
    std::map<Phase, int> per_phase;
    for (const auto& op : g.ops) {
      ++per_phase[op.phase];
      EXPECT_TRUE(op.flops > 0 || op.bytes > 0) << op.name;
    }
    EXPECT_GT(per_phase[Phase::kForward], 0);
    EXPECT_GT(per_phase[Phase::kBackward], 0);
    EXPECT_GT(per_phase[Phase::kOptimizer], 0);
    // Every parameter gets exactly one gradient carrier and one update.
    double grads = 0;
    for (const auto& op : g.ops) grads += op.grads;
    EXPECT_DOUBLE_EQ(grads, g.total_params());
  }
}

// `attention: flash` replaces each layer's two batched products, mask, softmax and dropout by
// one fused op each way, over the same heads and the causal half of the scores (GPT-2) or all
// of them (BERT); the parameters do not change.
TEST(Zoo, FlashAttentionIsOneFusedOpEachWay) {
  auto count = [](const ModelGraph& g, const std::string& type) {
    return std::count_if(g.ops.begin(), g.ops.end(),
                         [&](const ModelOp& op) { return op.type == type; });
  };
  for (const char* model : {"gpt2", "bert_base"}) {
    SCOPED_TRACE(model);
    const ModelGraph eager = build(model);
    const ModelGraph flash = build(model, "{attention: flash}");
    EXPECT_EQ(count(flash, "attention"), 12);
    EXPECT_EQ(count(flash, "attention_bwd"), 12);
    EXPECT_EQ(count(flash, "bmm"), 0);
    EXPECT_GT(count(eager, "bmm"), 0);
    EXPECT_EQ(count(flash, "matmul"), count(eager, "matmul"));
  }
  const ModelGraph g = build("gpt2", "{attention: flash, batch: 2, seq_len: 128}");
  const auto it = std::find_if(g.ops.begin(), g.ops.end(),
                               [](const ModelOp& op) { return op.type == "attention"; });
  ASSERT_NE(it, g.ops.end());
  // 2 x 12 heads, 128 x 129 / 2 causal pairs, 2 products of 2 x 64 FLOPs and 5 more per pair.
  EXPECT_DOUBLE_EQ(it->flops, 2.0 * 12 * 128 * 129 / 2 * (2 * 2 * 64 + 5));
  EXPECT_EQ(op_attr(*it, "causal", 0), 1);
  EXPECT_THROW(build("gpt2", "{attention: fused}"), InputError);
}

TEST(Zoo, ParameterCountsMatchPublishedModels) {
  // torchvision: resnet50 25,557,032; resnet152 60,192,808; vgg16 138,357,544;
  // vgg19 143,667,240; inception_v3 27,161,264 with the auxiliary classifier, of which
  // 3,326,696 are AuxLogits (so 23,834,568 without: the "23.8 M" usually quoted).
  // Same architecture, same count: tolerance 0.01% (float summation only).
  const std::pair<const char*, double> exact[] = {{"resnet50", 25557032},
                                                  {"resnet152", 60192808},
                                                  {"vgg16", 138357544},
                                                  {"vgg19", 143667240},
                                                  {"inception_v3", 23834568}};
  for (const auto& [name, params] : exact) {
    EXPECT_NEAR(build(name).total_params(), params, params * 1e-4) << name;
  }
  EXPECT_NEAR(build("inception_v3", "{aux_logits: true}").total_params(), 27161264, 2716);
  // BERT-base "110M parameters" (Devlin et al. 2019, section 3): within 2%. Hugging Face
  // BertModel (with pooler) has 109,482,240; the classifier head adds 768 x 2 + 2.
  ModelGraph bert = build("bert_base");
  EXPECT_NEAR(bert.total_params(), 110e6, 2.2e6);
  EXPECT_NEAR(bert.total_params(), 109482240 + 1538, 1);
  // GPT-2 small: 124,439,808 with the LM head tied to the token embedding (Hugging Face
  // "gpt2"; the paper's "117M" predates a recount).
  EXPECT_NEAR(build("gpt2").total_params(), 124439808, 1);
  // torchvision resnet101: 44,549,160.
  EXPECT_NEAR(build("resnet101").total_params(), 44549160, 44549160 * 1e-4);
  // BERT-large: the BertModel of Hugging Face "bert-large-uncased" and the classifier head.
  EXPECT_NEAR(build("bert_large").total_params(), 335141888 + 1024 * 2 + 2, 1);
  // Hugging Face "gpt2-large": 774,030,080.
  EXPECT_NEAR(build("gpt2_large").total_params(), 774030080, 1);
  // Hugging Face "facebook/opt-1.3b": 1,315,758,080, of which 2 x 2048 are the two position rows
  // OPT offsets its positions by (no token ever uses them).
  EXPECT_NEAR(build("opt_1.3b").total_params(), 1315758080 - 2 * 2048, 1);
  // GPT-3 XL and 2.7B (Brown et al. 2020, Table 2.1: "1.3B", "2.7B"): within 2%.
  EXPECT_NEAR(build("gpt3_xl").total_params(), 1.3e9, 0.02 * 1.3e9);
  EXPECT_NEAR(build("gpt3_2.7b").total_params(), 2.7e9, 0.02 * 2.7e9);
}

TEST(Zoo, ForwardMultiplyAddsPerSampleMatchTorchvision) {
  // torchvision GFLOPS column (multiply-adds of conv + linear): resnet50 4.09, resnet152 11.51,
  // vgg16 15.47, vgg19 19.63 at 224x224; inception_v3 5.71 at 299x299. The table rounds to
  // 0.01 G: tolerance 1%.
  const std::pair<const char*, double> published[] = {{"resnet50", 4.09e9},
                                                      {"resnet152", 11.51e9},
                                                      {"vgg16", 15.47e9},
                                                      {"vgg19", 19.63e9},
                                                      {"inception_v3", 5.71e9}};
  for (const auto& [name, macs] : published) {
    EXPECT_NEAR(forward_macs_per_sample(build(name, "{batch: 2}")), macs, macs * 0.01) << name;
  }
}

TEST(Zoo, ResNet50StepFlopsMatchPaiTableV) {
  // PAI Table V: ResNet50 at batch 64 is 1.56 T FLOPs per step (forward and
  // backward; FLOP = 2 x multiply-add, as 4.1 G MACs x 2 x 3 x 64 = 1.57 T shows). Tolerance 3%:
  // the paper's count includes element-wise ops it does not itemize.
  ModelGraph g = build("resnet50", "{batch: 64}");
  double step = g.total_flops(Phase::kForward) + g.total_flops(Phase::kBackward);
  EXPECT_NEAR(step, 1.56e12, 1.56e12 * 0.03);
}

TEST(Zoo, BackwardConvAndGemmLayersCostTwiceTheirForward) {
  // Backward of y = x*w computes dx and dw, each the forward's multiply-adds (standard result:
  // e.g. Kaplan et al. 2020, "backward pass ~2x forward"). Per layer it is exact...
  ModelGraph g = build("resnet50", "{batch: 4}");
  std::map<std::string, double> fwd, bwd;
  for (const auto& op : g.ops) {
    if (op.phase == Phase::kForward && is_gemm_like(op.type)) fwd[op.layer] += op.flops;
    if (is_gemm_like_bwd(op)) bwd[op.layer] += op.flops;
  }
  ASSERT_EQ(fwd.size(), 54u);  // 53 convolutions + fc
  for (const auto& [layer, f] : fwd) {
    if (layer == "conv1") {
      // ...except the first convolution: its input needs no gradient (PyTorch skips dx).
      EXPECT_DOUBLE_EQ(bwd[layer], f) << layer;
    } else {
      EXPECT_DOUBLE_EQ(bwd[layer], 2 * f) << layer;
    }
  }
  // ...and over whole models between 1.85 and 2: the shortfall is layers whose input needs no
  // gradient (a CNN's first convolution, DLRM's first bottom layer over the dense features: 5%
  // of DLRM_default's GEMMs) and the LSTM's step-0 recurrent GEMM (h0 = 0).
  for (const auto& name : zoo_model_names()) {
    ModelGraph m = build(name, name == "gnmt" ? "{src_len: 8, tgt_len: 8}" : "");
    const double ratio = backward_to_forward_gemm_ratio(m);
    EXPECT_GE(ratio, 1.85) << name;
    EXPECT_LE(ratio, 2.0 + 1e-9) << name;
    RecordProperty(name + "_bwd_fwd_ratio", std::to_string(ratio));
  }
  // Transformers have no such layer: exactly 2 (embedding lookups are not GEMMs).
  EXPECT_NEAR(backward_to_forward_gemm_ratio(build("bert_base", "{seq_len: 16}")), 2.0, 1e-9);
}

TEST(Zoo, BackwardRunsInReverseLayerOrder) {
  // Each layer's gradient becomes available (its weight-gradient op) after every later layer's:
  // in ResNet-50 the fc gradient is first, conv1's last; gradient communication can overlap the
  // rest of backward.
  ModelGraph g = build("resnet50", "{batch: 2}");
  std::map<std::string, int> grad_op;
  for (int i = 0; i < static_cast<int>(g.ops.size()); ++i)
    if (g.ops[i].phase == Phase::kBackward && g.ops[i].type == "conv2d_bwd_filter")
      grad_op[g.ops[i].layer] = i;
  int fc = -1;
  for (int i = 0; i < static_cast<int>(g.ops.size()); ++i)
    if (g.ops[i].layer == "fc" && g.ops[i].grads > 0 && g.ops[i].type == "matmul") fc = i;
  ASSERT_GE(fc, 0);
  EXPECT_LT(fc, grad_op.at("layer4.2.conv3"));
  EXPECT_LT(grad_op.at("layer4.2.conv3"), grad_op.at("layer1.0.conv1"));
  EXPECT_LT(grad_op.at("layer1.0.conv1"), grad_op.at("conv1"));
  // conv1's filter gradient transitively waits for the loss gradient: walk its deps.
  std::set<int> seen;
  std::vector<int> stack{grad_op.at("conv1")};
  bool reaches_loss = false;
  while (!stack.empty()) {
    int v = stack.back();
    stack.pop_back();
    if (!seen.insert(v).second) continue;
    if (g.ops[v].type == "cross_entropy_bwd") reaches_loss = true;
    for (int d : g.ops[v].deps) stack.push_back(d);
  }
  EXPECT_TRUE(reaches_loss);
}

TEST(Zoo, OneOptimizerUpdatePerParameterTensorAfterItsGradient) {
  // ResNet-50 has 161 parameter tensors: 53 conv weights, 53 x 2 batch-norm affine, fc weight
  // and bias (torchvision named_parameters()).
  ModelGraph g = build("resnet50", "{batch: 2, optimizer: adam}");
  int updates = 0;
  for (const auto& op : g.ops) {
    if (op.phase != Phase::kOptimizer) continue;
    ++updates;
    EXPECT_EQ(op.type, "adam_update");
    ASSERT_FALSE(op.deps.empty());
    EXPECT_GT(g.ops[op.deps.back()].grads, 0) << op.name;
  }
  EXPECT_EQ(updates, 161);
  // Adam: 12 FLOPs per parameter (workloads/op_counts.cc update(12, 7)).
  EXPECT_NEAR(g.total_flops(Phase::kOptimizer), 12 * 25557032.0, 1);
}

TEST(Zoo, DlrmConfigurationsFollowTableIII) {
  // the DLRM performance model Table III. MLP weights are [out, in]; the top MLP's input is the
  // bottom output plus F(F-1)/2 feature pairs, F = tables + 1 (dlrm_s_pytorch.py).
  struct Expect {
    const char* name;
    std::vector<Shape> bot, top;
    int tables;
    int64_t max_rows, dim;
  };
  const Expect configs[] = {
      {"dlrm_default",
       {{512, 512}, {64, 512}},
       {{1024, 64 + 36}, {1024, 1024}, {1024, 1024}, {1, 1024}},
       8,
       1000000,
       64},
      {"dlrm_mlperf",
       {{512, 13}, {256, 512}, {128, 256}},
       {{1024, 128 + 351}, {1024, 1024}, {512, 1024}, {256, 512}, {1, 256}},
       26,
       10131227,
       128},  // "up to 14M" rows: the largest Criteo Kaggle table is 10.1 M
      {"dlrm_ddp",
       {{128, 128}, {128, 128}, {128, 128}},
       {{512, 128 + 36}, {512, 512}, {512, 512}, {256, 512}, {1, 256}},
       8,
       80000,
       128},
  };
  for (const auto& c : configs) {
    SCOPED_TRACE(c.name);
    ModelGraph g = build(c.name, "{batch: 16}");
    for (size_t i = 0; i < c.bot.size(); ++i) {
      const ModelOp& fc = forward_op(g, "bot_l." + std::to_string(2 * i), "matmul");
      EXPECT_EQ(fc.inputs[1], (Shape{c.bot[i][1], c.bot[i][0]}));  // x W^T: W^T is [in, out]
    }
    for (size_t i = 0; i < c.top.size(); ++i) {
      const ModelOp& fc = forward_op(g, "top_l." + std::to_string(2 * i), "matmul");
      EXPECT_EQ(fc.inputs[1], (Shape{c.top[i][1], c.top[i][0]}));
    }
    int tables = 0;
    int64_t max_rows = 0;
    for (const auto& op : g.ops) {
      if (op.type != "embedding_fwd") continue;
      ++tables;
      max_rows = std::max(max_rows, op.inputs[0][0]);
      EXPECT_EQ(op.inputs[0][1], c.dim);
    }
    EXPECT_EQ(tables, c.tables);
    EXPECT_EQ(max_rows, c.max_rows);
  }
  // DLRM_default: 8 x 1M x 64 fp32 = 2.048 GB of embeddings; sparse gradients.
  ModelGraph d = build("dlrm_default");
  double sparse = 0;
  for (const auto& op : d.ops)
    if (op.sparse_grad) sparse += op.grads;
  EXPECT_DOUBLE_EQ(sparse, 8 * 1e6 * 64);
}

TEST(Zoo, LargeEmbeddingPresetsMatchPaiTablesIVandV) {
  // PAI Table IV sizes include one momentum slot per weight (weights x 2,
  // fp32); Table V gives the step FLOPs at its batch size.
  struct Expect {
    const char* name;
    double dense_bytes, embedding_bytes, step_flops;
  };
  const Expect presets[] = {{"gcn", 207e6, 54e9, 330.7e9},
                            {"multi_interests", 1.19e6, 239.45e9, 105.8e9}};
  for (const auto& p : presets) {
    SCOPED_TRACE(p.name);
    ModelGraph g = build(p.name);
    double dense = 0, embedding = 0;
    for (const auto& op : g.ops)
      (op.type == "embedding_fwd" ? embedding : dense) += op.params * 4 * 2;
    EXPECT_NEAR(embedding, p.embedding_bytes, p.embedding_bytes * 0.001);  // rows are rounded
    EXPECT_NEAR(dense, p.dense_bytes, p.dense_bytes * 0.01);               // tower widths round
    double step = g.total_flops(Phase::kForward) + g.total_flops(Phase::kBackward);
    EXPECT_NEAR(step, p.step_flops, p.step_flops * 0.05);  // lookups are whole numbers
  }
}

TEST(Zoo, RecurrentModelsHaveTheLstmParameterCount) {
  // nn.LSTM layer: weight_ih [4h, in], weight_hh [4h, h], two biases [4h] (PyTorch docs).
  auto lstm = [](double in, double h) { return 4 * h * (in + h) + 8 * h; };
  // Zaremba et al. 2014 medium: vocab 10k, 650 wide, 2 layers, untied decoder with bias.
  double lm = 10000 * 650 + 2 * lstm(650, 650) + 650 * 10000 + 10000;
  EXPECT_NEAR(build("lstm_lm").total_params(), lm, 0.5);  // 19,780,400
  // GNMT (MLPerf reference layout: h = 1024, 4 + 4 layers, shared 32320-token embedding):
  // encoder bi-LSTM + 3 LSTMs, decoder LSTM + attention (two h x h projections and the score
  // vector; the normalization scalar and bias, 1,025 parameters, are not modelled) + 3 LSTMs
  // on [x, context], classifier with bias. 160,670,272.
  const double h = 1024, v = 32320;
  double gnmt = v * h + 2 * lstm(h, h) + lstm(2 * h, h) + 2 * lstm(h, h) + lstm(h, h) + 2 * h * h +
                h + 3 * lstm(2 * h, h) + h * v + v;
  EXPECT_NEAR(build("gnmt", "{src_len: 4, tgt_len: 4}").total_params(), gnmt, 0.5);
  EXPECT_DOUBLE_EQ(gnmt, 160670272);
}

// The encoder-decoder Transformer of Vaswani et al. 2017 ("Attention Is All You Need"), Table 3,
// with the shared 37,000-token BPE vocabulary of WMT'14 En-De (section 5.1) tied to the
// pre-softmax projection (section 3.4), fairseq layout (biases on every projection).
// Per layer, with d = d_model, f = d_ff:
//   attention        4 (d^2 + d)            q, k, v, out projections
//   feed-forward     2 d f + f + d           fc1 and fc2 with biases
//   layer norm       2 d                    weight and bias
//   encoder layer    attention + ffn + 2 norms
//   decoder layer    2 attentions + ffn + 3 norms
// big  (d 1024, f 4096): encoder layer 12,596,224, decoder layer 16,796,672; 6 of each
//      176,357,376, + 37,000 x 1024 = 37,888,000 embedding = 214,245,376. Table 3: "213" M
//      (+0.6%; the paper's vocabulary is "about 37000").
// base (d 512, f 2048): encoder layer 3,152,384, decoder layer 4,204,032; 6 of each
//      44,138,496, + 18,944,000 = 63,082,496. Table 3: "65" M (-3%).
double transformer_params(double d, double f, double v, double n) {
  const double attention = 4 * (d * d + d), ffn = 2 * d * f + f + d, norm = 2 * d;
  return v * d + n * (attention + ffn + 2 * norm) + n * (2 * attention + ffn + 3 * norm);
}

TEST(Zoo, TransformerBigFollowsVaswaniTable3) {
  EXPECT_DOUBLE_EQ(transformer_params(1024, 4096, 37000, 6), 214245376);
  EXPECT_DOUBLE_EQ(transformer_params(512, 2048, 37000, 6), 63082496);
  ModelGraph big = build("transformer_big", "{batch: 1, src_len: 8, tgt_len: 8}");
  EXPECT_DOUBLE_EQ(big.total_params(), 214245376);
  EXPECT_NEAR(big.total_params(), 213e6, 0.01 * 213e6);
  ModelGraph base = build("transformer_base", "{batch: 1, src_len: 8, tgt_len: 8}");
  EXPECT_DOUBLE_EQ(base.total_params(), 63082496);
  EXPECT_NEAR(base.total_params(), 65e6, 0.035 * 65e6);
  // Untied: a second 37.9 M table for the target side, still tied to the projection.
  EXPECT_DOUBLE_EQ(
      build("transformer_big", "{batch: 1, src_len: 8, tgt_len: 8, share_embedding: false}")
          .total_params(),
      214245376 + 37888000);
  // The defaults: Table 3 "big", 24 pairs of 128 tokens (3,072 source and 3,072 target tokens,
  // about the paper's 25,000 per step over 8 GPUs), Adam (section 5.3), P_drop 0.3.
  ModelGraph def = build("transformer_big");
  EXPECT_EQ(def.batch, 24);
  EXPECT_EQ(def.hyper.at("src_len"), "128");
  EXPECT_EQ(def.hyper.at("vocab"), "37000");
  EXPECT_EQ(def.hyper.at("dropout"), "0.3");
  EXPECT_EQ(def.hyper.at("optimizer"), "adam");
}

TEST(Zoo, TransformerForwardGemmFlopsAreTheHandCount) {
  // Multiply-adds of the forward matmul and bmm ops, per sentence pair, S source and T target
  // tokens, N layers each (different S and T, so that a swapped length shows):
  //   encoder layer: S (4 d^2 + 2 d f)                       projections and feed-forward
  //                  + 2 S^2 d                               scores and context, all heads
  //   decoder layer: T (4 d^2 + 2 d^2 + 2 d f) + S 2 d^2     self q k v out, cross q out, ffn;
  //                                                          cross k, v over the S encoder outputs
  //                  + 2 T^2 d + 2 T S d                     self and cross attention
  //   output:        T d V                                   the tied pre-softmax projection
  const double d = 1024, f = 4096, v = 37000, n = 6, s = 40, t = 24, batch = 3;
  const double enc = s * (4 * d * d + 2 * d * f) + 2 * s * s * d;
  const double dec = t * (6 * d * d + 2 * d * f) + s * 2 * d * d + 2 * t * t * d + 2 * t * s * d;
  const double macs = n * enc + n * dec + t * d * v;
  ModelGraph g = build("transformer_big", "{batch: 3, src_len: 40, tgt_len: 24}");
  EXPECT_NEAR(forward_macs_per_sample(g), macs, macs * 1e-12);
  double fwd = 0;
  for (const auto& op : g.ops)
    if (op.phase == Phase::kForward && is_gemm_like(op.type)) fwd += op.flops;
  EXPECT_NEAR(fwd, 2 * batch * macs, 2 * batch * macs * 1e-12);
  // The usual rule of thumb: forward FLOPs per target token ~ 2 x parameters when S = T and
  // attention is short (every weight is used once per token pair, the embedding once as the
  // projection). At 128 + 128 tokens attention adds 6 N L d / (params) ~ 2%: within 5%.
  ModelGraph def = build("transformer_big", "{batch: 2}");
  const double per_token = forward_macs_per_sample(def) * 2 / 128;
  EXPECT_NEAR(per_token, 2 * def.total_params(), 0.05 * 2 * def.total_params());
  EXPECT_GT(per_token, 2 * def.total_params());
}

TEST(Zoo, TransformerDecoderLayersAttendToTheEncoderOutput) {
  const int64_t b = 2, s = 10, t = 6, d = 1024, h = 16;
  ModelGraph g = build("transformer_big", "{batch: 2, src_len: 10, tgt_len: 6}");
  for (int l = 0; l < 6; ++l) {
    SCOPED_TRACE(l);
    const std::string dec = "decoder.layers." + std::to_string(l);
    // Cross-attention: queries from the T target positions, keys and values from the S source
    // positions; scores [B h, T, S]; no causal mask.
    EXPECT_EQ(forward_op(g, dec + ".encoder_attn.q_proj", "matmul").inputs[0], (Shape{b * t, d}));
    EXPECT_EQ(forward_op(g, dec + ".encoder_attn.k_proj", "matmul").inputs[0], (Shape{b * s, d}));
    EXPECT_EQ(forward_op(g, dec + ".encoder_attn.v_proj", "matmul").inputs[0], (Shape{b * s, d}));
    EXPECT_EQ(forward_op(g, dec + ".encoder_attn.scores", "bmm").output, (Shape{b * h, t, s}));
    EXPECT_EQ(forward_op(g, dec + ".self_attn.scores", "bmm").output, (Shape{b * h, t, t}));
    EXPECT_NO_THROW(forward_op(g, dec + ".self_attn", "elementwise"));  // the causal mask
    EXPECT_THROW(forward_op(g, dec + ".encoder_attn", "elementwise"), std::runtime_error);
    EXPECT_THROW(forward_op(g, "encoder.layers." + std::to_string(l) + ".self_attn", "elementwise"),
                 std::runtime_error);
    // The cross-attention's keys are projected from the last encoder layer's output.
    const ModelOp& k = forward_op(g, dec + ".encoder_attn.k_proj", "matmul");
    ASSERT_EQ(k.deps.size(), 1u);
    EXPECT_EQ(g.ops[k.deps[0]].layer, "encoder.layers.5.final_layer_norm");
  }
  // 3 layer norms per decoder layer, 2 per encoder layer, none after the stacks (post-LN).
  int norms = 0;
  for (const auto& op : g.ops) norms += op.phase == Phase::kForward && op.type == "layernorm";
  EXPECT_EQ(norms, 6 * 3 + 6 * 2);
  // Backward: the encoder output's gradient sums the 12 contributions of the decoder's cross-
  // attention k and v projections (one add op), so the encoder's backward waits for all of them.
  int sums = 0;
  for (const auto& op : g.ops)
    if (op.phase == Phase::kBackward && op.type == "add" && op.inputs.size() == 12) {
      ++sums;
      EXPECT_EQ(op.output, (Shape{b, s, d}));
    }
  EXPECT_EQ(sums, 1);
  // One table, three uses: two lookups and the projection; one update, after its last gradient
  // (the source lookup's, last in backward order).
  int lookups = 0, table_updates = 0;
  for (const auto& op : g.ops) {
    lookups += op.type == "embedding_fwd";
    if (op.phase == Phase::kOptimizer && op.layer == "encoder.embed_tokens") {
      ++table_updates;
      EXPECT_EQ(op.inputs[0], (Shape{37000, d}));
      EXPECT_EQ(op.deps.size(), 3u);
    }
  }
  EXPECT_EQ(lookups, 2);
  EXPECT_EQ(table_updates, 1);
}

TEST(Zoo, TransformerBigRunsAsAScenario) {
  // Two GPUs data parallel: every gradient element is all-reduced once, so the collectives
  // carry the model's 214,245,376 fp32 gradients.
  auto dir = testing::make_temp_dir("zoo");
  testing::write_file(dir + "/s.yaml", R"(name: transformer
platform: {preset: pcie-server, server: {gpus: 2}}
workload: {type: model, model: transformer_big, batch: 2, src_len: 16, tgt_len: 16}
strategy: {type: allreduce}
)");
  Scenario sc = load_scenario(dir + "/s.yaml");
  ASSERT_TRUE(sc.ops_priced);
  double bytes = 0;
  for (const auto& c : sc.graph.collectives) {
    bytes += c.bytes;
    EXPECT_EQ(c.ranks.size(), 2u);
  }
  EXPECT_DOUBLE_EQ(bytes, 4.0 * 214245376);
  EXPECT_GT(replay_isolated(sc.platform, sc.graph, {}).makespan, 0);
  // Under AMP the gradients stay fp32 (master weights): the same bytes.
  Scenario amp = load_scenario(dir + "/s.yaml", {"precision=amp"});
  double amp_bytes = 0;
  for (const auto& c : amp.graph.collectives) amp_bytes += c.bytes;
  EXPECT_DOUBLE_EQ(amp_bytes, bytes);
  EXPECT_GT(replay_isolated(amp.platform, amp.graph, {}).makespan, 0);
}

TEST(Zoo, KeysChangeTheModel) {
  // GPT-2 medium (Radford et al. 2019 Table 2: 24 layers, d_model 1024): 354,823,168 on
  // Hugging Face "gpt2-medium" (the paper's "345M").
  ModelGraph m = build("gpt2", "{layers: 24, hidden: 1024, heads: 16, seq_len: 128}");
  EXPECT_NEAR(m.total_params(), 354823168, 1);
  // BERT-large (Devlin et al. 2019: 340 M): 335,141,888 for BertModel; 24 layers, 1024 wide.
  ModelGraph l = build("bert_base", "{layers: 24, hidden: 1024, heads: 16, intermediate: 4096}");
  EXPECT_NEAR(l.total_params(), 335141888 + 1024 * 2 + 2, 1);
  EXPECT_EQ(l.hyper.at("layers"), "24");
  // Batch scales forward FLOPs linearly.
  double f8 = build("resnet50", "{batch: 8}").total_flops(Phase::kForward);
  double f16 = build("resnet50", "{batch: 16}").total_flops(Phase::kForward);
  EXPECT_NEAR(f16 / f8, 2.0, 1e-9);
}

TEST(Zoo, UnknownModelsAndKeysAreInputErrors) {
  try {
    build("resnet51");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("resnet50"), std::string::npos) << e.what();
  }
  try {
    build("resnet50", "{batch: 8, depth: 18}");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("workload.depth"), std::string::npos) << e.what();
  }
  EXPECT_THROW(build("resnet50", "{batch: 0}"), InputError);
  EXPECT_THROW(build("resnet50", "{optimizer: lamb}"), InputError);
  EXPECT_THROW(build("dlrm_default", "{bot_mlp: 512-512-32}"), InputError);  // must end in dim
  EXPECT_THROW(build("dlrm_mlperf", "{tables: 3}"), InputError);             // 26 rows listed
  EXPECT_THROW(build("bert_base", "{heads: 7}"), InputError);
}

TEST(Zoo, ModelInfoListsKeysWithDefaults) {
  ZooModelInfo info = zoo_model_info("dlrm_default");
  std::map<std::string, std::string> defaults;
  for (const auto& k : info.keys) defaults[k.key] = k.default_value;
  EXPECT_EQ(defaults.at("bot_mlp"), "512-512-64");
  EXPECT_EQ(defaults.at("top_mlp"), "1024-1024-1024-1");
  EXPECT_EQ(defaults.at("batch"), "2048");
  const std::vector<std::string> names = zoo_model_names();
  EXPECT_EQ(names.size(), 22u);
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
}

TEST(Zoo, ReplaysOnOneDeviceInTheSumOfItsOpTimes) {
  // One device, one compute stream: the makespan is the sum of durations = total FLOPs / rate.
  ModelGraph g = build("lstm_lm", "{batch: 4, seq_len: 5, vocab: 1000, embed: 64, hidden: 64}");
  ExecutionGraph e = fixed_rate_graph(g, "gpu0", 1e12);
  Topology t;
  t.name = "one";
  t.hosts.push_back({"gpu0", 1e12, 1, "gpu", {}});
  PlatformSource p;
  p.topology = t;
  RunResult r = replay_isolated(p, e, ReplayOptions{});
  double flops = 0;
  for (const auto& op : g.ops) flops += op.flops;
  EXPECT_GT(flops, 0);
  EXPECT_NEAR(r.makespan, flops / 1e12, 1e-12);
}

// Runs `orrery ARGS` (ctest sets ORRERY_BIN); returns stdout and stderr.
std::string run_cli(const std::string& args, int* status) {
  std::string cmd = std::string(std::getenv("ORRERY_BIN")) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  int rc = pclose(p);
  *status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  return out;
}

TEST(Zoo, WorkloadShowCommand) {
  if (std::getenv("ORRERY_BIN") == nullptr) GTEST_SKIP() << "ORRERY_BIN not set (run via ctest)";
  int status = -1;
  std::string out = run_cli("workload show resnet50 --set batch=64", &status);
  EXPECT_EQ(status, 0) << out;
  // 25,557,032 parameters; 1.57 T FLOPs per step (Table V of PAI: 1.56 T).
  EXPECT_NE(out.find("Parameters 25.56 M"), std::string::npos) << out;
  EXPECT_NE(out.find("Ops        565: 175 forward, 229 backward, 161 optimizer"), std::string::npos)
      << out;
  EXPECT_NE(out.find("FLOPs      1.57 TFLOP per step"), std::string::npos) << out;
  out = run_cli("workload show resnet50 --set depth=3", &status);
  EXPECT_EQ(status, 2);
  EXPECT_NE(out.find("unknown key \"depth\""), std::string::npos) << out;
  out = run_cli("workload show vgg16 --set batch=1 --dot", &status);
  EXPECT_EQ(status, 0);
  EXPECT_EQ(out.rfind("digraph \"vgg16\" {", 0), 0u) << out.substr(0, 200);
  out = run_cli("workload show " + testing::source_path("scenarios/traces/allreduce-8/all_reduce"),
                &status);
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("Devices    8"), std::string::npos) << out;
  // The collective stays one op, as `orrery run` reads it (not 2 x 7 steps x 8 ranks flows).
  EXPECT_NE(out.find("collective 1\n"), std::string::npos) << out;
  EXPECT_NE(out.find("Collective allreduce: 1, 1 MiB in all"), std::string::npos) << out;
  out = run_cli("workload list", &status);
  EXPECT_EQ(status, 0);
  EXPECT_NE(out.find("dlrm_mlperf"), std::string::npos);
}

std::string zoo_error(const std::string& name, const std::string& yaml) {
  try {
    build(name, yaml);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// Issue 15: a batch of 10^12 or a billion layers ran until memory ran out; refused by key.
TEST(Zoo, SizesThatOverflowOrExplodeAreRefusedByKey) {
  std::string batch = zoo_error("resnet50", "{batch: 1000000000000}");
  EXPECT_NE(batch.find("batch"), std::string::npos) << batch;
  EXPECT_NE(batch.find("must be <= 10000000, got 1000000000000"), std::string::npos) << batch;
  std::string layers = zoo_error("bert_base", "{layers: 1000000000}");
  EXPECT_NE(layers.find("layers"), std::string::npos) << layers;
  EXPECT_NE(layers.find("must be <= 10000"), std::string::npos) << layers;
  EXPECT_NE(zoo_error("dlrm_default", "{tables: 100000}").find("must be <= 10000"),
            std::string::npos);
  // The largest batch accepted still gives finite, in-range sizes.
  EXPECT_EQ(zoo_error("resnet50", "{batch: 10000000}"), "");
}

TEST(Zoo, NumelOverflowIsAnInputErrorNotUndefined) {
  EXPECT_EQ(numel({1000000000, 1000000000}), 1000000000000000000);
  EXPECT_THROW(numel({1000000000, 1000000000, 10}), InputError);
  ModelGraph g = build("resnet50", "{batch: 2}");
  g.ops[0].inputs[0] = {1000000000, 1000000000, 1000, 1};
  try {
    check_model_graph(g, "m.json");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("m.json: ops[0]"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("more elements than a 64-bit count holds"),
              std::string::npos)
        << e.what();
  }
  g = build("resnet50", "{batch: 2}");
  g.ops[0].flops = 1e300;
  try {
    check_model_graph(g, "m.json");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("flops 1e+300 is outside the accepted range"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace orrery
