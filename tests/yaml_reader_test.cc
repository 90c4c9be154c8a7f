#include "common/yaml_reader.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "common/errors.h"
#include "common/input_limits.h"
#include "test_util.h"

namespace orrery {
namespace {

// Runs `f` and returns the InputError's message ("" when nothing was thrown).
template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(YamlReader, DuplicateKeyNamesBothLinesAndThePath) {
  const std::string text = "a:\n  b: 1\n  c: 2\n  b: 3\n";
  std::string msg = error_of([&] { load_yaml_text(text, "s.yaml"); });
  EXPECT_NE(msg.find("s.yaml:4"), std::string::npos) << msg;
  EXPECT_NE(msg.find("duplicate key \"a.b\""), std::string::npos) << msg;
  EXPECT_NE(msg.find("line 2"), std::string::npos) << msg;
}

TEST(YamlReader, DuplicateKeyInsideAListIsFound) {
  std::string msg = error_of([] { load_yaml_text("l:\n  - x: 1\n    x: 2\n", "s.yaml"); });
  EXPECT_NE(msg.find("duplicate key \"l[0].x\""), std::string::npos) << msg;
}

TEST(YamlReader, SameKeyInSiblingMappingsIsFine) {
  EXPECT_EQ(error_of([] { load_yaml_text("a: {x: 1}\nb: {x: 2}\n", "s.yaml"); }), "");
}

TEST(YamlReader, DeepNestingIsAnErrorNotACrash) {
  std::string text = "a: " + std::string(100000, '[') + std::string(100000, ']') + "\n";
  std::string msg = error_of([&] { load_yaml_text(text, "deep.yaml"); });
  EXPECT_NE(msg.find("deep.yaml"), std::string::npos) << msg;
  EXPECT_NE(msg.find("nests deeper"), std::string::npos) << msg;
}

TEST(YamlReader, IntegersThatDoNotFitAreRefusedNotWrapped) {
  YAML::Node n = load_yaml_text("layers: 4294967297\nok: 7\nneg: -3\n", "s.yaml");
  YamlMap m(n, "s.yaml");
  EXPECT_EQ(m.integer("ok", 0), 7);
  EXPECT_EQ(m.integer("neg", 0), -3);
  std::string msg = error_of([&] { m.integer("layers", 1); });
  EXPECT_NE(msg.find("s.yaml:1: layers"), std::string::npos) << msg;
  EXPECT_NE(msg.find("out of range"), std::string::npos) << msg;
  EXPECT_NE(error_of([&] { m.integer("ok", 0, 8, 100); }).find("between 8 and 100"),
            std::string::npos);
  EXPECT_EQ(m.integer("missing", 5, 8, 100), 5);  // the fallback is the caller's business
}

TEST(YamlReader, QuantitiesNeedAUnit) {
  YAML::Node n = load_yaml_text("bw: 25\nsz: 4\nt: 5\nf: 15\nzero: 0\ngood: 25Gbps\n", "s.yaml");
  YamlMap m(n, "s.yaml");
  std::string msg = error_of([&] { m.bandwidth("bw", 0); });
  EXPECT_NE(msg.find("s.yaml:1: bw"), std::string::npos) << msg;
  EXPECT_NE(msg.find("has no unit"), std::string::npos) << msg;
  EXPECT_NE(msg.find("25Gbps"), std::string::npos) << msg;  // the likely intended value
  EXPECT_NE(error_of([&] { m.size("sz", 0); }).find("4MB"), std::string::npos);
  EXPECT_NE(error_of([&] { m.time("t", 0); }).find("5ms"), std::string::npos);
  EXPECT_NE(error_of([&] { m.flops("f", 0); }).find("15TFLOP/s"), std::string::npos);
  EXPECT_EQ(m.bandwidth("zero", 1), 0.0);
  EXPECT_DOUBLE_EQ(m.bandwidth("good", 0), 3.125e9);
}

TEST(YamlReader, NegativeQuantitiesAreRefusedBeforeTheUnitHint) {
  YAML::Node n = load_yaml_text("bare: -1\nunit: -5ms\nfit: -0.84us\n", "s.yaml");
  YamlMap m(n, "s.yaml");
  std::string msg = error_of([&] { m.size("bare", 0); });
  // Not "write -1MB": that value would be refused next.
  EXPECT_NE(msg.find("s.yaml:1: bare: must not be negative, got \"-1\""), std::string::npos) << msg;
  EXPECT_NE(error_of([&] { m.time("unit", 0); }).find("s.yaml:2: unit: must not be negative"),
            std::string::npos);
  EXPECT_DOUBLE_EQ(m.signed_time("fit", 0), -0.84e-6);  // a fitted correction may be negative
}

TEST(YamlReader, RangedReadersNameTheKeyAndTheAcceptedRange) {
  YAML::Node n = load_yaml_text("f: 0\ng: 11\nh: 2.5\nbucket: 0\ntdp: 0\nclock: 1kHz\n", "s.yaml");
  YamlMap m(n, "s.yaml");
  EXPECT_EQ(error_of([&] { m.number("f", 1, limits::kSpeedFactor); }),
            "s.yaml:1: f: 0 is outside the accepted range, above 0 and at most 10");
  EXPECT_NE(error_of([&] { m.number("g", 1, limits::kSpeedFactor); }).find("11 is outside"),
            std::string::npos);
  EXPECT_DOUBLE_EQ(m.number("h", 1, limits::kSpeedFactor), 2.5);
  EXPECT_DOUBLE_EQ(m.number("absent", 1, limits::kSpeedFactor), 1);  // the fallback stands
  EXPECT_EQ(error_of([&] { m.size("bucket", 1, limits::kBucketBytes); }),
            "s.yaml:4: bucket: 0 B is outside the accepted range, above 0 B and at most 1000 TB");
  EXPECT_EQ(error_of([&] { m.number("tdp", 1, limits::kPowerWatts); }),
            "s.yaml:5: tdp: 0 W is outside the accepted range, between 1 W and 100 kW");
  EXPECT_EQ(error_of([&] { m.frequency("clock", 1, limits::kClockHz); }),
            "s.yaml:6: clock: 1 kHz is outside the accepted range, between 1 MHz and 100 GHz");
  // An interval open at the top.
  EXPECT_EQ(limits::kOverhead.text(), "at least 0 and below 1");
  EXPECT_FALSE(limits::kOverhead.contains(1));
}

TEST(YamlReader, AMappingWithoutAPositionIsNotCalledAnOverride) {
  // An absent section read as an empty map has no line; only --set values say "(--set)".
  YamlMap absent(YAML::Node(), "s.yaml", "precision");
  EXPECT_EQ(error_of([&] { absent.required_str("policy"); }),
            "s.yaml: precision.policy: is required");
  YAML::Node n = load_yaml_text("a: 1\n", "s.yaml");
  n["a"] = YAML::Node("2");
  n["a"].SetTag(kOverrideTag);
  EXPECT_EQ(YamlMap(n, "s.yaml").where("a"), "s.yaml (--set)");
}

TEST(YamlReader, FileKeysAndDottedPathsPointAtTheirLine) {
  const std::string dir = testing::make_temp_dir("yaml-reader");
  testing::write_file(dir + "/g.json", "{}");
  YAML::Node n = load_yaml_text("w:\n  file: g.json\n  gone: nope.json\n  dir: .\n", "s.yaml");
  YamlMap w(n["w"], "s.yaml", "w");
  EXPECT_EQ(w.input_file("file", dir, "graph"), dir + "/g.json");
  EXPECT_EQ(error_of([&] { w.input_file("gone", dir, "graph"); }).rfind("s.yaml:3: w.gone: ", 0), 0u);
  EXPECT_NE(error_of([&] { w.input_file("dir", dir, "graph"); }).find("directory"),
            std::string::npos);
  YamlMap root(n, "s.yaml");
  EXPECT_EQ(root.where_path("w.gone"), "s.yaml:3");
  EXPECT_EQ(root.where_path("w.missing"), "s.yaml:2");  // the deepest part that is there
  EXPECT_EQ(root.where_path("nothing.here"), "");
}

TEST(YamlReader, NumbersComputedInBaseUnitsAreAccepted) {
  YAML::Node n = load_yaml_text("bw: 1\n", "s.yaml");
  n["bw"] = YAML::Node("6250000000");
  n["bw"].SetTag(kBaseUnitsTag);
  EXPECT_DOUBLE_EQ(YamlMap(n, "s.yaml").bandwidth("bw", 0), 6.25e9);
}

TEST(YamlReader, UnknownKeySuggestsTheClosestKnownOne) {
  YAML::Node n = load_yaml_text("layres: 3\n", "s.yaml");
  YamlMap m(n, "s.yaml");
  m.integer("layers", 1);
  m.integer("batch", 1);
  std::string msg = error_of([&] { m.reject_unknown_keys(); });
  EXPECT_NE(msg.find("did you mean \"layers\"?"), std::string::npos) << msg;
}

TEST(YamlReader, OnlyRegularFilesAreRead) {
  std::string dir = testing::make_temp_dir("yaml_reader");
  std::string fifo = dir + "/pipe.yaml";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  // Opening a FIFO without a writer would block forever; it must be refused at once.
  EXPECT_NE(error_of([&] { load_yaml_file(fifo); }).find("FIFO"), std::string::npos);
  EXPECT_NE(error_of([&] { load_yaml_file(dir); }).find("directory"), std::string::npos);
  EXPECT_NE(error_of([&] { load_yaml_file("/dev/zero"); }).find("character device"),
            std::string::npos);
  EXPECT_NE(error_of([&] { load_yaml_file(dir + "/none.yaml"); }).find("none.yaml"),
            std::string::npos);
}

}  // namespace
}  // namespace orrery
