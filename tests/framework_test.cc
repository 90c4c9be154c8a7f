// Software-stack profiles (strategies/framework.h): the built-in files, a scenario's own, and
// what each changes in a language model's kernels (strategies/llm_pricing.h), counted by hand.
#include "strategies/framework.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "common/errors.h"
#include "common/yaml_reader.h"
#include "engine/replay.h"
#include "scenario/scenario.h"
#include "strategies/llm_pricing.h"
#include "tests/test_util.h"
#include "workloads/op_query.h"

namespace orrery {
namespace {

std::string error_of(const std::string& yaml, const std::string& base_dir = "") {
  try {
    const YAML::Node root = load_yaml_text(yaml, "s.yaml");
    parse_framework(root["framework"], "s.yaml", base_dir);
  } catch (const InputError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(Framework, BuiltInProfilesCiteTheirSourcesAndAnswerToAliases) {
  const std::vector<std::string> names = framework_names();
  for (const char* n : {"megatron-te", "pytorch", "pytorch-ddp", "pytorch-fsdp", "pytorch-ngc",
                        "pytorch-compile", "deepspeed", "tensorflow1", "tensorflow2-xla", "jax"})
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
  for (const auto& n : names) {
    const FrameworkProfile f = framework_profile(n);
    EXPECT_FALSE(f.sources.empty()) << n;
    EXPECT_FALSE(f.description.empty()) << n;
    EXPECT_TRUE(f.overridden.empty()) << n;
  }
  EXPECT_EQ(framework_profile("Megatron").name, "megatron-te");
  EXPECT_EQ(framework_profile("FSDP2").name, "pytorch-fsdp");
  EXPECT_EQ(framework_profile("torch_compile").name, "pytorch-compile");
  EXPECT_EQ(default_framework(true), "megatron-te");
  EXPECT_EQ(default_framework(false), "pytorch");
  // What the files say, as their sources state it.
  const FrameworkProfile eager = framework_profile("pytorch");
  EXPECT_FALSE(eager.fused.norm);
  EXPECT_FALSE(eager.fused.optimizer);
  EXPECT_TRUE(eager.fp32_weights);
  EXPECT_EQ(eager.attention, AttentionImpl::kFlash2);
  EXPECT_DOUBLE_EQ(framework_profile("ddp").bucket_bytes, 25.0 * 1024 * 1024);
  EXPECT_EQ(framework_profile("fsdp").zero, 3);
  EXPECT_EQ(framework_profile("megatron").zero, -1);  // the strategy's
  const FusionRules tf1 = framework_profile("tf1").fused.model_graph;
  EXPECT_TRUE(tf1.bn_activation);
  EXPECT_FALSE(tf1.elementwise);
  EXPECT_FALSE(eager.fused.model_graph.any());
  EXPECT_TRUE(framework_profile("jax").fused.model_graph.elementwise);
  EXPECT_TRUE(framework_profile("jax").cuda_graphs);
  try {
    framework_profile("megatrom");
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("pytorch-fsdp"), std::string::npos) << e.what();
  }
}

TEST(Framework, ScenarioChangesAProfileOrReadsItsOwnFile) {
  const YAML::Node root = load_yaml_text(
      "framework: {base: pytorch, cuda_graphs: true, fused: {norm: true}, attention: cudnn}\n",
      "s.yaml");
  const FrameworkProfile f = parse_framework(root["framework"], "s.yaml", "");
  EXPECT_EQ(f.name, "pytorch");
  EXPECT_TRUE(f.cuda_graphs);
  EXPECT_TRUE(f.fused.norm);
  EXPECT_FALSE(f.fused.rope);  // kept from the base
  EXPECT_EQ(f.attention, AttentionImpl::kCudnn);
  EXPECT_EQ(framework_label(f), "pytorch with fused.norm, attention, cuda_graphs changed");
  const FrameworkProfile m =
      parse_framework(load_yaml_text("framework: {base: megatron, attention: materialized}\n",
                                     "s.yaml")["framework"],
                      "s.yaml", "");
  EXPECT_FALSE(m.flash_attention);

  const std::string dir = testing::make_temp_dir("framework");
  testing::write_file(dir + "/stack.yaml",
                      "description: mine\nsources: [measured]\nfused: {rope: false}\nzero: 2\n");
  const FrameworkProfile own = parse_framework(
      load_yaml_text("framework: stack.yaml\n", "s.yaml")["framework"], "s.yaml", dir);
  EXPECT_EQ(own.name, "stack");
  EXPECT_FALSE(own.fused.rope);
  EXPECT_TRUE(own.fused.norm);
  EXPECT_EQ(own.zero, 2);

  EXPECT_NE(error_of("framework: tensorflow0\n").find("s.yaml:1: framework: unknown framework"),
            std::string::npos);
  EXPECT_NE(error_of("framework: {base: pytorch, fused: {norms: true}}\n").find("norms"),
            std::string::npos);
  EXPECT_NE(error_of("framework: {base: pytorch, attention: flash4}\n")
                .find("expected materialized, auto, flash2, flash3 or cudnn"),
            std::string::npos);
  EXPECT_NE(error_of("framework: {cuda_graphs: true}\n").find("framework.base: is required"),
            std::string::npos);
  EXPECT_NE(error_of("framework: {base: pytorch, zero: 4}\n").find("zero"), std::string::npos);
  EXPECT_NE(error_of("framework: missing.yaml\n", dir).find("missing.yaml"), std::string::npos);
  testing::write_file(dir + "/nosources.yaml", "description: mine\n");
  EXPECT_NE(error_of("framework: nosources.yaml\n", dir).find("sources: is required"),
            std::string::npos);
}

// A LLaMA-style layer (RMSNorm, rotary embedding, SwiGLU, no biases) at TP 1.
LlmConfig tiny_llama() {
  LlmConfig m;
  m.name = "tiny";
  m.hidden = 256;
  m.layers = 2;
  m.heads = 4;
  m.kv_heads = 4;
  m.ffn = 512;
  m.vocab = 1024;
  m.seq_len = 128;
  m.gated_mlp = true;
  return m;
}

ParallelPlan tiny_plan() {
  ParallelPlan p;
  p.seq_len = 128;
  p.global_batch = 1;
  return p;
}

// Kernel counts of one layer, forward and backward, by hand from strategies/llm_pricing.cc.
// Megatron-Core fuses every sequence: norm, QKV GEMM, rotary, attention, output GEMM, residual
// add (6); MLP norm, fc1, SwiGLU, fc2, add (5); backward two GEMMs per linear layer.
// Eager PyTorch: RMSNorm 6 + 2 kernels (backward 9 + 2), q, k and v as three GEMMs each with its
// autocast weight cast (and the cast of its gradient back), rotary 5 per tensor each way, SiLU
// and product (backward 3), gate and up as two GEMMs.
TEST(Framework, LanguageModelKernelsFollowTheProfile) {
  const LlmConfig m = tiny_llama();
  const ParallelPlan p = tiny_plan();
  auto none = [](const ModelOp&) { return 0.0; };
  const LlmCosts fused = price_llm(m, p, none, {}, framework_profile("megatron-te"));
  EXPECT_EQ(fused.attention_fwd.kernels, 6);
  EXPECT_EQ(fused.attention_bwd.kernels, 1 + 2 + 1 + 1 + 2);
  EXPECT_EQ(fused.mlp_fwd.kernels, 5);
  EXPECT_EQ(fused.mlp_bwd.kernels, 1 + 2 + 1 + 2);
  const LlmCosts eager = price_llm(m, p, none, {}, framework_profile("pytorch"));
  EXPECT_EQ(eager.attention_fwd.kernels, 8 + 6 + 10 + 1 + 2 + 1);
  EXPECT_EQ(eager.attention_bwd.kernels, 11 + 9 + 10 + 1 + 3);
  EXPECT_EQ(eager.mlp_fwd.kernels, 8 + 4 + 2 + 2 + 1);
  EXPECT_EQ(eager.mlp_bwd.kernels, 11 + 6 + 3 + 3);

  // Eager RMSNorm's bytes over 128 rows of 256 bf16 values: to FP32 (2 + 4), pow (8), mean (4),
  // product with the reciprocal root (8), back to bf16 (4 + 2), weight product (4) per value,
  // and 8 + 8 per row for epsilon and rsqrt; the fused norm is one layernorm op.
  FrameworkProfile only_norm = framework_profile("megatron-te");
  only_norm.fused.norm = false;
  const LlmCosts eager_norm = price_llm(m, p, none, {}, only_norm);
  const ModelOp ln = query_op("ln", {{"B", "128"}, {"H", "256"}}, DType::kBF16, "test");
  EXPECT_DOUBLE_EQ(eager_norm.attention_qkv_fwd.bytes - fused.attention_qkv_fwd.bytes,
                   128.0 * 256 * 36 + 128 * 16 - ln.bytes);
  EXPECT_EQ(eager_norm.attention_qkv_fwd.kernels - fused.attention_qkv_fwd.kernels, 7);

  // Optimizer: gradient norm and FusedAdam (2 kernels), or the norm, clip_grad_norm_'s scaling
  // and foreach AdamW's seven passes (9 kernels, 4 + 8 + 72 bytes per parameter).
  ASSERT_EQ(fused.optimizer.size(), 1u);
  EXPECT_EQ(fused.optimizer[0].kernels, 2);
  EXPECT_EQ(eager.optimizer[0].kernels, 9);
  FrameworkProfile adam = framework_profile("megatron-te");
  adam.fused.optimizer = false;
  const LlmCosts foreach_adam = price_llm(m, p, none, {}, adam);
  const double params = foreach_adam.optimizer[0].flops / (1 + 1 + 7);
  EXPECT_NEAR(foreach_adam.optimizer[0].bytes, params * (4 + 8 + 72),
              1e-6 * foreach_adam.optimizer[0].bytes);
  EXPECT_GT(foreach_adam.optimizer[0].bytes, fused.optimizer[0].bytes);

  // The loss upcasts the logits: a cast each way and the cross entropy in FP32.
  std::map<std::string, int> ce;
  price_llm(
      m, p,
      [&](const ModelOp& op) {
        ++ce[op.type + "/" + dtype_name(op.dtype)];
        return 0.0;
      },
      {}, framework_profile("pytorch"));
  EXPECT_EQ(ce["cross_entropy/fp32"], 1);
  EXPECT_EQ(ce["cross_entropy_bwd/fp32"], 1);
  EXPECT_EQ(ce["cross_entropy/bf16"], 0);
}

// The host launches each kernel: a block of short kernels takes its launches' time.
TEST(Framework, HostLaunchesBoundBlocksOfShortKernels) {
  const LlmConfig m = tiny_llama();
  const ParallelPlan p = tiny_plan();
  LlmGpu gpu;
  gpu.kernel_host_s = 1e-3;
  const FrameworkProfile eager = framework_profile("pytorch");
  const LlmCosts shortk = price_llm(
      m, p, [](const ModelOp&) { return 1e-6; }, gpu, eager);
  EXPECT_DOUBLE_EQ(shortk.attention_fwd.seconds, 28 * 1e-3);
  EXPECT_DOUBLE_EQ(shortk.mlp_bwd.seconds, 23 * 1e-3);
  const LlmCosts longk = price_llm(
      m, p, [](const ModelOp&) { return 1.0; }, gpu, eager);
  EXPECT_DOUBLE_EQ(longk.attention_fwd.seconds, 28.0);
  // CUDA graphs: no launches from the host.
  FrameworkProfile graphs = eager;
  graphs.cuda_graphs = true;
  const DeviceSpec h100 = device_spec("H100-SXM5");
  EXPECT_DOUBLE_EQ(llm_gpu(h100, graphs).kernel_host_s, 0.0);
  EXPECT_DOUBLE_EQ(llm_gpu(h100, eager).kernel_host_s, h100.host.per_op());
  EXPECT_DOUBLE_EQ(llm_gpu(device_spec("Xeon-vCPU-1T"), eager).kernel_host_s, 0.0);
}

// A model workload under a profile with fusion rules: ResNet-50 under TensorFlow 1's remapper
// (batch norm + ReLU, the residual add between them, and their gradients) runs fewer kernels
// and moves fewer bytes than under eager PyTorch; XLA's element-wise fusion fewer still.
TEST(Framework, ModelWorkloadsRunTheProfilesFusedKernels) {
  auto run = [](const std::string& fw, std::string* summary) {
    Scenario sc = load_scenario(testing::source_path("scenarios/resnet50-allreduce.yaml"),
                                {"framework=" + fw, "platform.servers=1"});
    *summary = sc.workload_summary;
    return replay_isolated(sc.platform, sc.graph, ReplayOptions{}).makespan;
  };
  std::string eager_line, tf1_line, xla_line;
  const double eager = run("pytorch", &eager_line);
  const double tf1 = run("tensorflow1", &tf1_line);
  const double xla = run("tensorflow2-xla", &xla_line);
  EXPECT_NE(eager_line.find(", pytorch;"), std::string::npos) << eager_line;
  EXPECT_EQ(eager_line.find("fused away"), std::string::npos) << eager_line;
  // Every one of the 49 ReLUs follows a batch norm (directly, or through the residual add).
  const size_t at = tf1_line.find("tensorflow1 (");
  ASSERT_NE(at, std::string::npos) << tf1_line;
  EXPECT_GE(std::stoi(tf1_line.substr(at + 13)), 49) << tf1_line;
  EXPECT_LT(tf1, eager);
  EXPECT_LT(xla, tf1);
  try {
    load_scenario(testing::source_path("scenarios/resnet50-allreduce.yaml"), {"framework=caffe2"});
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("resnet50-allreduce.yaml"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("unknown framework \"caffe2\""), std::string::npos)
        << e.what();
  }
}

// A language model's host launches: a small model at TP 8 has short kernels, so the eager host
// slows its step; CUDA graphs or strategy.host_overheads: false take the launches away.
TEST(Framework, LanguageModelStepsWaitForTheHostUnlessCudaGraphs) {
  auto step = [](const std::vector<std::string>& extra) {
    std::vector<std::string> sets = {"workload.model=gpt3_1.3b", "strategy.tp=8", "strategy.pp=1",
                                     "workload.global_batch=8", "workload.seq_len=2048"};
    sets.insert(sets.end(), extra.begin(), extra.end());
    Scenario sc =
        load_scenario(testing::source_path("scenarios/llm/llama2-7b-dgx-a100.yaml"), sets);
    return replay_isolated(sc.platform, sc.graph, ReplayOptions{}).makespan;
  };
  const double eager = step({});
  const double graphs = step({"framework={base: megatron-te, cuda_graphs: true}"});
  const double off = step({"strategy.host_overheads=false"});
  EXPECT_LT(graphs, eager);
  EXPECT_DOUBLE_EQ(off, graphs);
}

// docs/validation.md's framework table is what `orrery accuracy` prints now: each published
// run simulated from its setup (a golden result; regenerate it with --update-doc when a model
// changes on purpose).
TEST(Framework, ValidationTableInTheDocsIsWhatAccuracyPrints) {
  if (testing::orrery_bin().empty()) GTEST_SKIP() << "ORRERY_BIN is set by ctest";
  const std::string output = testing::expect_doc_block_is_command_output(
      "accuracy --only deeplearningexamples --only fsdp-throughput --markdown -j 2",
      "docs/validation.md", "framework-validation");
  // Every framework's group in the summary, with its median and signed error.
  for (const char* fw : {"| framework | pytorch-ngc |", "| framework | pytorch |",
                         "| framework | mxnet |", "| framework | pytorch-fsdp |",
                         "| framework | tensorflow2-xla |", "| framework | tensorflow1 |"})
    EXPECT_NE(output.find(fw), std::string::npos) << fw;
}

}  // namespace
}  // namespace orrery
