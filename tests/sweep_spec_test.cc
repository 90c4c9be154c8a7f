// Sweep expansion: grid, zip, named values, one-at-a-time, derived keys; point identity; and
// the errors a bad sweep section gets (file, line, the dotted key, and that the sweep set it).
#include "sweeps/sweep_spec.h"

#include <gtest/gtest.h>

#include "common/errors.h"
#include "sweeps/expression.h"
#include "sweeps/sweep_input.h"
#include "sweeps/yaml_path.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

using testing::make_temp_dir;
using testing::write_file;

const char* kBase = R"(name: t
platform:
  preset: pcie-server
  server:
    gpus: 4
workload:
  type: synthetic-dp
  layers: 2
  forward_time: 1ms
  gradient_bytes: 1MB
)";

SweepInput load(const std::string& sweep, const std::string& base = kBase,
                std::vector<std::string> overrides = {}) {
  std::string dir = make_temp_dir("sweep_spec");
  write_file(dir + "/s.yaml", base + sweep);
  return load_sweep_input(dir + "/s.yaml", overrides);
}

std::string error_of(const std::string& sweep, bool validate = false) {
  try {
    SweepInput in = load(sweep);
    if (validate) validate_sweep(in);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(SweepSpec, NoSweepIsOnePoint) {
  SweepInput in = load("");
  ASSERT_EQ(in.points.size(), 1u);
  EXPECT_TRUE(in.points[0].params.empty());
  EXPECT_TRUE(in.points[0].assignments.empty());
}

TEST(SweepSpec, GridIsTheProductWithTheLastAxisFastest) {
  SweepInput in = load(R"(sweep:
  grid:
    platform.server.pcie.bandwidth: [10GB/s, 50GB/s]
    workload.layers: [1, 2, 3]
)");
  ASSERT_EQ(in.points.size(), 6u);
  EXPECT_EQ(in.points[0].params.at("platform.server.pcie.bandwidth"), "10GB/s");
  EXPECT_EQ(in.points[0].params.at("workload.layers"), "1");
  EXPECT_EQ(in.points[1].params.at("workload.layers"), "2");
  EXPECT_EQ(in.points[3].params.at("platform.server.pcie.bandwidth"), "50GB/s");
  EXPECT_EQ(in.points[3].params.at("workload.layers"), "1");
  for (size_t i = 0; i < in.points.size(); ++i) EXPECT_EQ(in.points[i].index, (int64_t)i);
  // The value reaches the point's scenario.
  Scenario sc = build_point_scenario(in, in.points[5], fresh_base_tree(in));
  EXPECT_NE(sc.platform_summary.find("PCIe 50 GB/s"), std::string::npos) << sc.platform_summary;
}

TEST(SweepSpec, ZipAdvancesListsTogether) {
  SweepInput in = load(R"(sweep:
  zip:
    - {platform.server.gpus: [2, 4, 8], workload.layers: [1, 2, 3]}
  grid:
    workload.forward_time: [1ms, 2ms]
)");
  ASSERT_EQ(in.points.size(), 6u);
  EXPECT_EQ(in.points[0].params.at("platform.server.gpus"), "2");
  EXPECT_EQ(in.points[0].params.at("workload.layers"), "1");
  EXPECT_EQ(in.points[1].params.at("workload.forward_time"), "2ms");
  EXPECT_EQ(in.points[4].params.at("platform.server.gpus"), "8");
  EXPECT_EQ(in.points[4].params.at("workload.layers"), "3");
}

TEST(SweepSpec, ZipOfUnequalListsIsRejected) {
  std::string msg = error_of(R"(sweep:
  zip:
    platform.server.gpus: [2, 4, 8]
    workload.layers: [1, 2]
)");
  EXPECT_NE(msg.find("s.yaml:14"), std::string::npos) << msg;
  EXPECT_NE(msg.find("workload.layers"), std::string::npos) << msg;
  EXPECT_NE(msg.find("has 2 values but platform.server.gpus has 3"), std::string::npos) << msg;
}

TEST(SweepSpec, NamedValuesSetSeveralKeysAndRecordTheLabel) {
  SweepInput in = load(R"(sweep:
  named:
    gpu:
      V100: {platform.server.gpu.model: V100, platform.server.gpu.flops: 15.7TFLOP/s}
      A100: {platform.server.gpu.model: A100, platform.server.gpu.flops: 19.5TFLOP/s}
)");
  ASSERT_EQ(in.points.size(), 2u);
  EXPECT_EQ(in.points[1].params.at("gpu"), "A100");
  EXPECT_EQ(in.points[1].params.size(), 1u);  // the label stands for its keys
  ASSERT_EQ(in.points[1].assignments.size(), 2u);
  EXPECT_EQ(node_text(point_value(in.base, in.points[1], "platform.server.gpu.flops")),
            "19.5TFLOP/s");
  Scenario sc = build_point_scenario(in, in.points[1], fresh_base_tree(in));
  EXPECT_NE(sc.platform_summary.find("A100"), std::string::npos) << sc.platform_summary;
}

TEST(SweepSpec, NamedValueMayReplaceAWholeSection) {
  SweepInput in = load(R"(sweep:
  named:
    model:
      tiny: {workload: {type: synthetic-dp, layers: 1}}
      deep: {workload: {type: synthetic-dp, layers: 8}}
  grid:
    workload.gradient_bytes: [1MB, 2MB]
)");
  ASSERT_EQ(in.points.size(), 4u);
  // The deeper key refines the mapping the label set, whatever the order of the axes.
  Scenario sc = build_point_scenario(in, in.points[3], fresh_base_tree(in));
  EXPECT_EQ(sc.graph.devices.size(), 4u);
  EXPECT_NE(in.points[2].hash, in.points[3].hash);
  // Building one point does not leak its keys into the shared label value.
  Scenario again = build_point_scenario(in, in.points[2], fresh_base_tree(in));
  EXPECT_EQ(again.graph.ops.size(), sc.graph.ops.size());
}

TEST(SweepSpec, OneAtATimeVariesEachKeyAloneAroundTheBase) {
  SweepInput in = load(R"(sweep:
  one_at_a_time:
    platform.server.pcie.bandwidth: [5GB/s, 50GB/s]
    workload.layers: [4]
)");
  ASSERT_EQ(in.points.size(), 4u);  // base + 2 + 1
  EXPECT_EQ(in.points[0].params.at(kParamVaried), "base");
  EXPECT_TRUE(in.points[0].assignments.empty());
  EXPECT_EQ(in.points[0].params.at("workload.layers"), "2");  // the base value, reported
  // Not in the scenario: the preset's value.
  EXPECT_EQ(in.points[0].params.at("platform.server.pcie.bandwidth"), "15.75GB/s");
  EXPECT_EQ(in.points[2].params.at(kParamVaried), "platform.server.pcie.bandwidth");
  EXPECT_EQ(in.points[2].params.at("platform.server.pcie.bandwidth"), "50GB/s");
  EXPECT_EQ(in.points[3].params.at(kParamVaried), "workload.layers");
  EXPECT_EQ(in.points[3].params.at("workload.layers"), "4");
}

TEST(SweepSpec, DerivedKeysAreEvaluatedPerPoint) {
  SweepInput in = load(R"(sweep:
  grid:
    platform.server.gpus: [2, 8]
  named:
    size: {small: {workload.layers: 1}, big: {workload.layers: 3}}
  derived:
    workload.gpus: "${platform.server.gpus} / 2"
    workload.update_time: "${workload.forward_time} * ${workload.layers}"
    description: "${size} model on ${platform.server.gpus} GPUs"
)");
  ASSERT_EQ(in.points.size(), 4u);
  const auto& p = in.points[3];
  EXPECT_EQ(p.params.at("workload.gpus"), "4");
  EXPECT_EQ(p.params.at("workload.update_time"), "0.003");  // units become base units
  EXPECT_EQ(p.params.at("description"), "big model on 8 GPUs");
  Scenario sc = build_point_scenario(in, p, fresh_base_tree(in));
  EXPECT_EQ(sc.graph.devices.size(), 4u);
}

TEST(SweepSpec, DerivedKeysSeePresetValues) {
  SweepInput in = load(R"(sweep:
  grid:
    platform.server.gpu.mem_bw: [900GB/s, 1.8TB/s]
  derived:
    workload.forward_time: "1e9 / ${platform.server.gpu.flops} + 1e8 / ${platform.server.gpu.mem_bw}"
)");
  // pcie-server's V100: 15.7 TFLOP/s.
  EXPECT_EQ(in.points[1].params.at("workload.forward_time"),
            format_number(1e9 / 15.7e12 + 1e8 / 1.8e12));
}

TEST(SweepSpec, DerivedReferenceWithoutValueIsRejected) {
  std::string msg = error_of(R"(sweep:
  derived:
    workload.gpus: "${workload.input_bytes} * 2"
)");
  EXPECT_NE(msg.find("s.yaml:13"), std::string::npos) << msg;
  EXPECT_NE(msg.find("sweep.derived.workload.gpus"), std::string::npos) << msg;
  EXPECT_NE(msg.find("${workload.input_bytes} has no value"), std::string::npos) << msg;
}

TEST(SweepSpec, UnknownKeyPathIsReportedWithItsPathAndTheSweep) {
  std::string msg = error_of(R"(sweep:
  grid:
    platform.server.nicc.bandwidth: [10Gbps, 25Gbps]
)",
                             true);
  EXPECT_NE(msg.find("s.yaml:13"), std::string::npos) << msg;
  EXPECT_NE(msg.find("sweep.grid key \"platform.server.nicc.bandwidth\""), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("set by the sweep"), std::string::npos) << msg;
  EXPECT_NE(msg.find("unknown key \"platform.server.nicc\""), std::string::npos) << msg;
}

TEST(SweepSpec, UnknownKeyOfAOneAtATimeAxisIsFoundToo) {
  // Point 0 of a one_at_a_time sweep sets nothing; the check still reaches every key.
  std::string msg = error_of(R"(sweep:
  one_at_a_time:
    workload.layers: [4]
    workload.colour: [blue]
)",
                             true);
  EXPECT_NE(msg.find("s.yaml:14"), std::string::npos) << msg;
  EXPECT_NE(msg.find("workload.colour"), std::string::npos) << msg;
  EXPECT_NE(msg.find("sweep.one_at_a_time"), std::string::npos) << msg;
}

TEST(SweepSpec, CheckDoesNotRejectAMixOfValuesNoPointHas) {
  // Together, 2 server GPUs and 8 workload GPUs are impossible; no point has both.
  SweepInput in = load(R"(sweep:
  one_at_a_time:
    platform.server.gpus: [2]
    workload.gpus: [8]
)",
                       kBase, {"platform.server.gpus=8"});
  EXPECT_NO_THROW(validate_sweep(in));
  EXPECT_EQ(in.points.size(), 3u);
}

TEST(SweepSpec, BadValueOfTheFirstPointNamesTheSweepEntry) {
  std::string msg = error_of(R"(sweep:
  grid:
    platform.server.pcie.bandwidth: [fast, 10GB/s]
)",
                             true);
  EXPECT_NE(msg.find("s.yaml:13"), std::string::npos) << msg;
  EXPECT_NE(msg.find("platform.server.pcie.bandwidth"), std::string::npos) << msg;
  EXPECT_NE(msg.find("expected a bandwidth"), std::string::npos) << msg;
}

TEST(SweepSpec, PathThroughAValueIsRejected) {
  std::string msg = error_of(R"(sweep:
  grid:
    workload.layers.count: [1, 2]
)");
  EXPECT_NE(msg.find("s.yaml:13"), std::string::npos) << msg;
  EXPECT_NE(msg.find("\"workload.layers.count\""), std::string::npos) << msg;
  EXPECT_NE(msg.find("\"workload.layers\" holds a value"), std::string::npos) << msg;
}

TEST(SweepSpec, MalformedSectionsAreRejected) {
  EXPECT_NE(error_of("sweep:\n  gird: {workload.layers: [1]}\n")
                .find("sweep.gird: unknown key (expected one of: derived, grid, named, "
                      "one_at_a_time, zip)"),
            std::string::npos);
  EXPECT_NE(error_of("sweep:\n  grid: {workload.layers: 3}\n").find("non-empty list"),
            std::string::npos);
  EXPECT_NE(error_of("sweep:\n  grid: {workload..layers: [1]}\n").find("empty key in path"),
            std::string::npos);
  std::string twice =
      error_of("sweep:\n  grid: {workload.layers: [1]}\n  zip: {workload.layers: [2]}\n");
  EXPECT_NE(twice.find("is also set by sweep.grid"), std::string::npos) << twice;
}

TEST(SweepSpec, IdentityIgnoresKeyOrderOutputAndTags) {
  SweepInput a = load("output: {file: a.h5}\n");
  std::string reordered = R"(workload:
  gradient_bytes: 1MB
  forward_time: 1ms
  layers: 2
  type: synthetic-dp
platform:
  server: {gpus: 4}
  preset: pcie-server
name: t
output: {file: b.h5}
)";
  SweepInput b = load("", reordered);
  EXPECT_EQ(a.points[0].hash, b.points[0].hash);
  EXPECT_EQ(a.points[0].canonical, b.points[0].canonical);
  // A value given with --set is the same scenario as one written in the file.
  SweepInput c = load("", kBase, {"workload.layers=2"});
  EXPECT_EQ(a.points[0].hash, c.points[0].hash);
  SweepInput d = load("", kBase, {"workload.layers=3"});
  EXPECT_NE(a.points[0].hash, d.points[0].hash);
  // A swept value is the same scenario as that value written in the file.
  SweepInput e = load("sweep:\n  grid: {workload.layers: [3]}\n");
  EXPECT_EQ(e.points[0].hash, d.points[0].hash);
}

TEST(SweepSpec, HashIsFnv1a) {
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(hash_hex(0xaf63dc4c8601ec8cULL), "af63dc4c8601ec8c");
}

TEST(Expression, Arithmetic) {
  double v = 0;
  EXPECT_TRUE(evaluate_arithmetic("2 * (3 + 4)", &v));
  EXPECT_EQ(v, 14);
  EXPECT_TRUE(evaluate_arithmetic("25Gbps * 2", &v));
  EXPECT_EQ(v, 6.25e9);
  EXPECT_TRUE(evaluate_arithmetic("10GB/s / 2", &v));
  EXPECT_EQ(v, 5e9);
  EXPECT_TRUE(evaluate_arithmetic("max(1, 5, 3) - ceil(0.5)", &v));
  EXPECT_EQ(v, 4);
  EXPECT_TRUE(evaluate_arithmetic("-2 * 3", &v));
  EXPECT_EQ(v, -6);
  EXPECT_FALSE(evaluate_arithmetic("7", &v));  // a plain number is not an expression
  EXPECT_FALSE(evaluate_arithmetic("V100 * 2", &v));
  EXPECT_FALSE(evaluate_arithmetic("1 / 0", &v));
  EXPECT_FALSE(evaluate_arithmetic("1e308 * 1e308", &v));  // overflows to infinity
  EXPECT_EQ(format_number(0.1), "0.1");
  EXPECT_EQ(format_number(3.0), "3");
  EXPECT_EQ(format_number(6.25e9), "6250000000");
}

TEST(Expression, Templates) {
  Resolver r = [](const std::string& name, std::string* text) {
    if (name == "a")
      *text = "25Gbps";
    else if (name == "n")
      *text = "4";
    else
      return false;
    return true;
  };
  EXPECT_EQ(evaluate_template("${a}", r, "w"), "25Gbps");  // one reference keeps its text
  EXPECT_EQ(evaluate_template("${n} * 8", r, "w"), "32");
  EXPECT_EQ(evaluate_template("run-${n}", r, "w"), "run-4");
  EXPECT_THROW(evaluate_template("${n} / 0", r, "w"), InputError);
  EXPECT_THROW(evaluate_template("${missing}", r, "w"), InputError);
  EXPECT_THROW(evaluate_template("${n", r, "w"), InputError);
  bool computed = true;
  evaluate_template("${a}", r, "w", &computed);
  EXPECT_FALSE(computed);  // text as written, units included
  evaluate_template("${n} * 8", r, "w", &computed);
  EXPECT_TRUE(computed);  // a number in base units
}

TEST(Expression, DeepNestingIsAnErrorNotAStackOverflow) {
  double v;
  EXPECT_TRUE(evaluate_arithmetic(
      std::string(kMaxExpressionDepth, '(') + "1+1" + std::string(kMaxExpressionDepth, ')'), &v));
  EXPECT_EQ(v, 2);
  const std::string deep = std::string(100000, '(') + "1+1" + std::string(100000, ')');
  EXPECT_THROW(evaluate_arithmetic(deep, &v), InputError);
  EXPECT_THROW(evaluate_arithmetic(std::string(100000, '-') + "1*1", &v), InputError);
  Resolver r = [](const std::string&, std::string* text) {
    *text = "2";
    return true;
  };
  try {
    evaluate_template("${n} * " + deep, r, "s.yaml:3: sweep.derived.x");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("s.yaml:3: sweep.derived.x"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("levels deep"), std::string::npos);
  }
}

}  // namespace
}  // namespace orrery
