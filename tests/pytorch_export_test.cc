// scripts/export_pytorch_graph.py traces a PyTorch training step on CPU (Debian python3-torch,
// /usr/bin/python3) and writes an orrery-model file. The exported graphs must load, carry the
// models' exact parameter counts and GEMM FLOPs, and replay on one device; the shape-only trace
// must give the real step's graph, and only the model's inputs are copied from the host.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>

#include "engine/replay.h"
#include "strategies/strategy.h"
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

// Runs `python3 SCRIPT ARGS` with stdout and stderr into LOG; returns the exit status.
int run_python(const std::string& script, const std::string& args, const std::string& log) {
  return std::system(
      (std::string(kPython) + " " + script + " " + args + " > " + log + " 2>&1").c_str());
}

const std::string& exporter() {
  static const std::string path = testing::source_path("scripts/export_pytorch_graph.py");
  return path;
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
    if (op.type == "conv2d_bwd_filter") {
      EXPECT_TRUE(op.layer == "conv1" || op.layer == "conv2");
    }
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

// An embedding table lives on the device: the step copies the token ids from the host, not the
// table (which the first op reads, and which a reader once took for the input batch).
TEST(PytorchExport, OnlyTheInputsAreCopiedFromTheHost) {
  if (!have_torch()) GTEST_SKIP() << "python3-torch is not installed for " << kPython;
  std::string dir = testing::make_temp_dir("pytorch_h2d");
  testing::write_file(dir + "/lm.py", R"(import torch
def make(batch):
    model = torch.nn.Sequential(torch.nn.Embedding(200000, 64), torch.nn.Linear(64, 10))
    ids = torch.randint(0, 200000, (batch, 16))
    return model, ids, lambda out: out.pow(2).mean()
)");
  const int b = 4;
  ModelGraph g = export_model(dir + "/lm.py:make", b, "sgd");
  ASSERT_FALSE(g.ops.empty());
  EXPECT_EQ(g.ops[0].type, "embedding_fwd");
  const double ids = b * 16 * 8.0;  // int64 token ids
  ASSERT_TRUE(g.hyper.count("input_bytes"));
  EXPECT_DOUBLE_EQ(std::stod(g.hyper.at("input_bytes")), ids);
  EXPECT_DOUBLE_EQ(model_input_bytes(g), ids);  // what the strategies' input_h2d copies
}

// The step traced on fake tensors (shapes only) is the step traced on real ones, op for op:
// an MLP, convolutions (whose backward has no shape-only kernel in torch 1.13 and runs on zeros,
// as stderr says), an LSTM (ATen's CPU-only path that projects all time steps at once) and a
// step whose control flow reads a value (traced again on real tensors, as stderr says).
TEST(PytorchExport, FakeTensorTraceIsTheRealStep) {
  if (!have_torch()) GTEST_SKIP() << "python3-torch is not installed for " << kPython;
  std::string dir = testing::make_temp_dir("pytorch_fake");
  testing::write_file(dir + "/value.py", R"(import torch
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 4)
    def forward(self, x):
        if x.abs().sum().item() >= 0:
            x = x * 2
        return self.fc(x)
def make(batch):
    return Net(), torch.randn(batch, 8), lambda out: out.pow(2).mean()
)");
  const std::string models[] = {"builtin:mlp", "builtin:small_cnn",
                                testing::source_path("scripts/ground_truth_models.py") + ":lstm",
                                dir + "/value.py:make"};
  for (size_t i = 0; i < 4; ++i) {
    const std::string fake = dir + "/fake" + std::to_string(i),
                      real = dir + "/real" + std::to_string(i);
    const std::string args = models[i] + " --batch 4 --optimizer momentum --name m -o ";
    ASSERT_EQ(run_python(exporter(), args + fake + ".json", fake + ".log"), 0)
        << testing::read_file(fake + ".log");
    ASSERT_EQ(run_python(exporter(), args + real + ".json --real", real + ".log"), 0)
        << testing::read_file(real + ".log");
    EXPECT_EQ(testing::read_file(fake + ".json"), testing::read_file(real + ".json")) << models[i];
    const std::string log = testing::read_file(fake + ".log");
    EXPECT_EQ(log.find("tracing it on real CPU tensors") != std::string::npos, i == 3) << log;
    EXPECT_EQ(log.find("no shape-only kernel for convolution_backward x2") != std::string::npos,
              i == 1)
        << log;
  }
}

// A model written for torch 2 calls F.scaled_dot_product_attention; without it (Debian's torch
// 1.13, or hidden here) the exporter computes softmax(QK^T/sqrt(d))V: two bmm per layer.
TEST(PytorchExport, AttentionWithoutScaledDotProductAttention) {
  if (!have_torch()) GTEST_SKIP() << "python3-torch is not installed for " << kPython;
  std::string dir = testing::make_temp_dir("pytorch_sdpa");
  testing::write_file(dir + "/attn.py", R"(import torch
import torch.nn.functional as F
class Attention(torch.nn.Module):
    def __init__(self, d=32, heads=4):
        super().__init__()
        self.qkv, self.proj, self.heads = torch.nn.Linear(d, 3 * d), torch.nn.Linear(d, d), heads
    def forward(self, x):
        B, T, C = x.shape
        q, k, v = (t.view(B, T, self.heads, C // self.heads).transpose(1, 2)
                   for t in self.qkv(x).split(C, dim=2))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).reshape(B, T, C))
def make(batch):
    model = torch.nn.Sequential(Attention(), Attention())
    return model, torch.randn(batch, 16, 32), lambda out: out.pow(2).mean()
)");
  // Runs the exporter with the function hidden, whatever the installed torch has.
  testing::write_file(dir + "/hide.py", R"(import runpy, sys
import torch.nn.functional as F
if hasattr(F, "scaled_dot_product_attention"):
    del F.scaled_dot_product_attention
sys.argv = sys.argv[1:]
sys.path.insert(0, sys.argv[0].rsplit("/", 1)[0])
runpy.run_path(sys.argv[0], run_name="__main__")
)");
  ASSERT_EQ(run_python(dir + "/hide.py",
                       exporter() + " " + dir + "/attn.py:make --batch 2 -o " + dir + "/a.json",
                       dir + "/log.txt"),
            0)
      << testing::read_file(dir + "/log.txt");
  EXPECT_NE(testing::read_file(dir + "/log.txt").find("has no F.scaled_dot_product_attention"),
            std::string::npos);
  ModelGraph g = load_model_graph_json(dir + "/a.json");
  // Per layer, QK^T and AV: B x heads x T x T x head_dim multiply-adds each.
  const double b = 2, heads = 4, t = 16, head_dim = 8;
  EXPECT_DOUBLE_EQ(flops_of(g, Phase::kForward, "bmm"), 2 * 2 * (2 * b * heads * t * t * head_dim));
  std::map<std::string, int> types;
  for (const auto& op : g.ops) ++types[op.type];
  EXPECT_EQ(types["softmax"], 2);
  EXPECT_EQ(types["softmax_bwd"], 2);
}

}  // namespace
}  // namespace orrery
