// scripts/export_pytorch_graph.py traces a PyTorch training step on CPU (Debian python3-torch,
// /usr/bin/python3) and writes an orrery-model file. The exported graphs must load, carry the
// models' exact parameter counts and GEMM FLOPs, and replay on one device.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>

#include "engine/replay.h"
#include "tests/test_util.h"
#include "workloads/fixed_rate_graph.h"
#include "workloads/model_graph_json.h"

namespace orrery {
namespace {

constexpr const char* kPython = "/usr/bin/python3";

bool have_torch() {
  std::string cmd = std::string(kPython) + " -c 'import torch' >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

// Runs the exporter; returns the loaded graph.
ModelGraph export_model(const std::string& model, int batch, const std::string& optimizer) {
  std::string dir = testing::make_temp_dir("pytorch_export");
  std::string out = dir + "/model.json";
  std::string cmd = std::string(kPython) + " " +
                    testing::source_path("scripts/export_pytorch_graph.py") + " " + model +
                    " --batch " + std::to_string(batch) + " --optimizer " + optimizer + " -o " +
                    out + " > " + dir + "/log.txt 2>&1";
  int rc = std::system(cmd.c_str());
  EXPECT_EQ(rc, 0) << testing::read_file(dir + "/log.txt");
  return load_model_graph_json(out);
}

double flops_of(const ModelGraph& g, Phase phase, const std::string& type) {
  double f = 0;
  for (const auto& op : g.ops)
    if (op.phase == phase && op.type == type) f += op.flops;
  return f;
}

RunResult replay_one(const ModelGraph& g) {
  PlatformSource p;
  p.topology.name = "one";
  p.topology.hosts.push_back({"gpu0", 1e12, 1, "gpu", {}});
  return replay_isolated(p, fixed_rate_graph(g, "gpu0", 1e12), ReplayOptions{});
}

TEST(PytorchExport, MlpHasItsParametersGemmFlopsAndReplays) {
  if (!have_torch()) GTEST_SKIP() << "python3-torch is not installed for " << kPython;
  // nn.Linear(784,256), (256,128), (128,10): weights + biases = 235,146 parameters.
  const int b = 8;
  ModelGraph g = export_model("builtin:mlp", b, "adam");
  EXPECT_EQ(g.batch, b);
  EXPECT_DOUBLE_EQ(g.total_params(), 235146);
  double grads = 0;
  for (const auto& op : g.ops) grads += op.grads;
  EXPECT_DOUBLE_EQ(grads, 235146);  // every parameter's gradient has a producing op
  // Forward GEMMs: 2 x B x (784x256 + 256x128 + 128x10). Backward: dW for all three layers,
  // dx for the last two (autograd skips the input's gradient).
  const double fwd = 2.0 * b * (784 * 256 + 256 * 128 + 128 * 10);
  EXPECT_DOUBLE_EQ(flops_of(g, Phase::kForward, "matmul"), fwd);
  EXPECT_DOUBLE_EQ(flops_of(g, Phase::kBackward, "matmul"), 2 * fwd - 2.0 * b * 784 * 256);
  int updates = 0;
  for (const auto& op : g.ops) {
    if (op.phase != Phase::kOptimizer) continue;
    ++updates;
    EXPECT_EQ(op.type, "adam_update");
    ASSERT_EQ(op.deps.size(), 1u);
    EXPECT_GT(g.ops[op.deps[0]].grads, 0) << op.name;
  }
  EXPECT_EQ(updates, 6);  // 3 weights + 3 biases
  // The loss gradient waits for the loss.
  for (const auto& op : g.ops) {
    if (op.type != "cross_entropy_bwd") continue;
    bool after_loss = false;
    for (int d : op.deps) after_loss = after_loss || g.ops[d].type == "cross_entropy";
    EXPECT_TRUE(after_loss);
  }
  // One device, one stream: the makespan is the sum of op times (FLOPs at 1 Tflop/s).
  double total = 0;
  for (const auto& op : g.ops) total += op.flops;
  EXPECT_NEAR(replay_one(g).makespan, total / 1e12, 1e-12);
}

TEST(PytorchExport, SmallCnnHasItsConvolutionsAndReplays) {
  if (!have_torch()) GTEST_SKIP() << "python3-torch is not installed for " << kPython;
  // conv(3->16, 3x3) 448 + bn 32 + conv(16->32, 3x3) 4,640 + bn 64 + fc(32->10) 330 = 5,514.
  const int b = 4;
  ModelGraph g = export_model("builtin:small_cnn", b, "momentum");
  EXPECT_DOUBLE_EQ(g.total_params(), 5514);
  // conv1 on 32x32 (padding 1): B x 16 x 32 x 32 outputs of 3x3x3 MACs; conv2 on 16x16 after
  // the 2x2 max pool: B x 32 x 16 x 16 outputs of 16x3x3 MACs.
  const double conv1 = 2.0 * b * 16 * 32 * 32 * 27, conv2 = 2.0 * b * 32 * 16 * 16 * 144;
  EXPECT_DOUBLE_EQ(flops_of(g, Phase::kForward, "conv2d"), conv1 + conv2);
  EXPECT_DOUBLE_EQ(flops_of(g, Phase::kBackward, "conv2d_bwd_filter"), conv1 + conv2);
  EXPECT_DOUBLE_EQ(flops_of(g, Phase::kBackward, "conv2d_bwd_data"), conv2);  // not for conv1
  std::map<std::string, int> types;
  for (const auto& op : g.ops) ++types[op.type];
  for (const char* t :
       {"conv2d", "batchnorm", "relu", "maxpool", "matmul", "cross_entropy", "conv2d_bwd_data",
        "conv2d_bwd_filter", "batchnorm_bwd", "relu_bwd", "maxpool_bwd", "cross_entropy_bwd"})
    EXPECT_GT(types[t], 0) << t;
  EXPECT_EQ(types["momentum_update"], 10);  // 2 conv + 2 bn + fc, weight and bias each
  // Layers come from the module names.
  for (const auto& op : g.ops)
    if (op.type == "conv2d_bwd_filter") EXPECT_TRUE(op.layer == "conv1" || op.layer == "conv2");
  double total = 0;
  for (const auto& op : g.ops) total += op.flops;
  EXPECT_NEAR(replay_one(g).makespan, total / 1e12, 1e-12);
}

TEST(PytorchExport, UserModelFileAndBadModelSpec) {
  if (!have_torch()) GTEST_SKIP() << "python3-torch is not installed for " << kPython;
  std::string dir = testing::make_temp_dir("pytorch_user");
  testing::write_file(dir + "/net.py", R"(import torch
def make(batch):
    model = torch.nn.Sequential(torch.nn.Embedding(100, 16), torch.nn.Flatten(),
                                torch.nn.Linear(16 * 5, 3))
    ids = torch.randint(0, 100, (batch, 5))
    return model, ids, lambda out: out.pow(2).mean()
)");
  ModelGraph g = export_model(dir + "/net.py:make", 2, "sgd");
  EXPECT_DOUBLE_EQ(g.total_params(), 100 * 16 + 80 * 3 + 3);
  int lookups = 0;
  for (const auto& op : g.ops) lookups += op.type == "embedding_fwd" || op.type == "embedding_bwd";
  EXPECT_EQ(lookups, 2);
  std::string cmd = std::string(kPython) + " " +
                    testing::source_path("scripts/export_pytorch_graph.py") + " builtin:nope -o " +
                    dir + "/x.json > " + dir + "/err.txt 2>&1";
  EXPECT_NE(std::system(cmd.c_str()), 0);
  EXPECT_NE(testing::read_file(dir + "/err.txt").find("unknown builtin model 'nope'"),
            std::string::npos);
}

}  // namespace
}  // namespace orrery
