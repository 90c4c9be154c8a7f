// DLRM (Naumov et al., 2019), laid out as Meta's dlrm_s_pytorch.py: a bottom MLP over the dense
// features, one sum-pooled EmbeddingBag per sparse feature (sparse gradients), dot-product
// feature interaction (bmm of the stacked features with their transpose, lower triangle without
// the diagonal, concatenated with the bottom MLP output), a top MLP ending in a sigmoid, binary
// cross-entropy. The three configurations are Table III of the DLRM performance model:
//   dlrm_default  bot 512-512-64,     8 tables x 1,000,000 rows, dim 64,  top 1024-1024-1024-1
//   dlrm_mlperf   bot 13-512-256-128, 26 tables (Criteo Kaggle, up to 10.1 M rows), dim 128,
//                 top 1024-1024-512-256-1
//   dlrm_ddp      bot 128-128-128-128, 8 tables x 80,000 rows, dim 128, top 512-512-512-256-1
// As in dlrm_s_pytorch.py the first bottom width is the dense input size, and the top MLP's
// input (bottom output + feature pairs) is prepended to the top widths.
#include "workloads/zoo/zoo_models.h"

namespace orrery::zoo {

namespace {

struct DlrmConfig {
  std::vector<int64_t> bot, top, rows;  // rows: one per table, or one for all
  int64_t tables, dim, lookups;
};

// Criteo Kaggle (Display Advertising Challenge) cardinalities of the 26 categorical features,
// as dlrm_s_pytorch.py counts them for the MLPerf configuration on that dataset.
const std::vector<int64_t> kKaggleRows = {
    1460, 583,   10131227, 2202608, 305,  24,   12517, 633,     3,  93145, 5683,   8351593, 3194,
    27,   14992, 5461306,  10,      5652, 2173, 4,     7046547, 18, 15,    286181, 105,     142572};

DlrmConfig config(const std::string& name) {
  if (name == "mlperf") {
    return {{13, 512, 256, 128}, {1024, 1024, 512, 256, 1}, kKaggleRows, 26, 128, 1};
  }
  if (name == "ddp") return {{128, 128, 128, 128}, {512, 512, 512, 256, 1}, {80000}, 8, 128, 10};
  // dlrm_s_benchmark.sh: 100 ids per lookup.
  return {{512, 512, 64}, {1024, 1024, 1024, 1}, {1000000}, 8, 64, 100};
}

}  // namespace

ModelGraph make_dlrm(ZooKeys& keys, const std::string& name) {
  const DlrmConfig c = config(name);
  LayerBuilder b = keys.builder("dlrm_" + name, 2048, "sgd");
  const std::vector<int64_t> bot =
      keys.int_list("bot_mlp", c.bot, "bottom MLP widths, the first is the dense feature count");
  const std::vector<int64_t> top =
      keys.int_list("top_mlp", c.top, "top MLP widths (its input width is prepended)");
  const int64_t dim = keys.integer("dim", c.dim, "embedding dimension (sparse feature size)");
  const int64_t tables =
      keys.integer("tables", c.tables, "embedding tables", 1, ZooKeys::kMaxRepeats);
  std::vector<int64_t> rows =
      keys.int_list("rows", c.rows, "rows per table, or one value for every table");
  const int64_t lookups = keys.integer("lookups", c.lookups, "ids per sample per table (pooling)");
  if (rows.size() == 1) rows.assign(static_cast<size_t>(tables), rows[0]);
  if (static_cast<int64_t>(rows.size()) != tables) {
    keys.fail("rows", "lists " + std::to_string(rows.size()) + " tables, but tables is " +
                          std::to_string(tables));
  }
  if (bot.size() < 2) keys.fail("bot_mlp", "needs an input width and at least one layer");
  if (bot.back() != dim) keys.fail("bot_mlp", "must end with the embedding dimension (dim)");
  if (top.back() != 1) keys.fail("top_mlp", "must end with 1 (the click probability)");
  keys.done();
  const int64_t batch = b.batch();

  Tensor x = b.input({batch, bot[0]});
  for (size_t i = 1; i < bot.size(); ++i) {
    const std::string layer = "bot_l." + std::to_string(2 * (i - 1));
    x = b.relu(layer, b.linear(layer, x, bot[i], true));
  }
  std::vector<Tensor> features{b.view(x, {batch, 1, dim})};
  for (int64_t t = 0; t < tables; ++t) {
    const std::string layer = "emb_l." + std::to_string(t);
    const int table = b.param(layer, "weight", {rows[static_cast<size_t>(t)], dim}, true);
    features.push_back(b.view(b.embedding(layer, table, {batch, lookups}, true), {batch, 1, dim}));
  }
  const int64_t f = tables + 1;
  Tensor stacked = b.concat("interact", features, 1);  // [B, F, dim]
  Tensor z = b.bmm("interact", stacked, b.view(stacked, {batch, dim, f}));
  Tensor pairs = b.gather("interact.tril", z, {batch, f * (f - 1) / 2});
  Tensor r = b.concat("interact", {x, pairs}, 1);
  for (size_t i = 0; i < top.size(); ++i) {
    const std::string layer = "top_l." + std::to_string(2 * i);
    r = b.linear(layer, r, top[i], true);
    r = i + 1 < top.size() ? b.relu(layer, r) : b.sigmoid(layer, r);
  }
  b.cross_entropy("loss", r);
  b.hyper("rows", join_ints(rows));
  return b.finish();
}

}  // namespace orrery::zoo
