// Large-embedding recommendation models: tens to hundreds of GB of sparse embedding rows feeding
// a small dense network, the shape of GCN and Multi-Interests in Table IV of
// the PAI characterization. Their architectures are unpublished, so this generator
// is generic: `tables` tables of rows x dim, `lookups` ids per sample per table, either
// sum-pooled (pooling: sum, one feature vector per table) or kept as a sequence (pooling: none,
// each looked-up vector passes through the tower, then a mean over the sequence), a ReLU MLP
// tower, a final linear score and a sigmoid cross-entropy. Embeddings get sparse gradients.
//
// Presets are calibrated to the paper, whose sizes include one momentum slot per weight
// (optimizer: momentum, so weights = half of each size):
//   gcn             Table IV: dense 207 MB, embedding 54 GB; Table V: batch 512, 330.7 GFLOP
//   multi_interests Table IV: dense 1.19 MB, embedding 239.45 GB; Table V: batch 2048,
//                   105.8 GFLOP
// rows = embedding bytes / 2 / 4 / dim; tower widths give the dense bytes; lookups (neighbours
// or behaviour-sequence length) give the step FLOPs (forward + backward = 3x forward GEMMs).
#include "workloads/zoo/zoo_models.h"

namespace orrery::zoo {

namespace {

struct Preset {
  int64_t batch, tables, rows, dim, lookups;
  std::string pooling;
  std::vector<int64_t> mlp;
};

Preset preset(const std::string& name) {
  if (name == "multi_interests") return {2048, 1, 467675781, 64, 58, "none", {64, 512, 200, 64}};
  return {512, 1, 52734375, 128, 4, "none", {128, 4096, 4096, 2048, 128}};  // gcn
}

}  // namespace

ModelGraph make_large_embedding(ZooKeys& keys, const std::string& name) {
  const Preset p = preset(name);
  LayerBuilder b = keys.builder(name, p.batch, "momentum");
  const int64_t tables =
      keys.integer("tables", p.tables, "embedding tables", 1, ZooKeys::kMaxRepeats);
  const int64_t rows = keys.integer("rows", p.rows, "rows per table");
  const int64_t dim = keys.integer("dim", p.dim, "embedding dimension");
  const int64_t lookups = keys.integer("lookups", p.lookups, "ids per sample per table");
  const std::string pooling = keys.choice("pooling", p.pooling, {"none", "sum"},
                                          "sum-pool each table's ids, or keep them as a sequence");
  const std::vector<int64_t> mlp = keys.int_list(
      "mlp", p.mlp, "tower widths; the first is its input width (dim, or tables x dim if pooled)");
  const int64_t in = pooling == "sum" ? tables * dim : dim;
  if (mlp.size() < 2 || mlp[0] != in)
    keys.fail("mlp", "must start with the tower input width " + std::to_string(in) +
                         " and have at least one layer");
  if (pooling == "none" && tables != 1) keys.fail("tables", "pooling: none needs one table");
  keys.done();
  const int64_t batch = b.batch();

  std::vector<Tensor> features;
  for (int64_t t = 0; t < tables; ++t) {
    const std::string layer = "embedding." + std::to_string(t);
    const int table = b.param(layer, "weight", {rows, dim}, true);
    features.push_back(b.embedding(layer, table, {batch, lookups}, pooling == "sum"));
  }
  Tensor x = features.size() == 1 ? features[0] : b.concat("features", features, 1);
  for (size_t i = 1; i < mlp.size(); ++i) {
    const std::string layer = "tower." + std::to_string(i - 1);
    x = b.linear(layer, x, mlp[i], true);
    if (i + 1 < mlp.size()) x = b.relu(layer, x);
  }
  if (pooling == "none") x = b.mean("pool", x, 1);  // [B, L, w] -> [B, w]
  x = b.sigmoid("score", b.linear("score", x, 1, true));
  b.cross_entropy("loss", x);
  return b.finish();
}

}  // namespace orrery::zoo
