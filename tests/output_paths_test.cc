// Where `orrery run` writes and what it may replace (cli/output_paths.h), and the run header's
// device and bandwidth labels, through the real binary.
#include "cli/output_paths.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>

#include "common/errors.h"
#include "test_util.h"

namespace orrery {
namespace {

using testing::make_temp_dir;
using testing::read_file;
using testing::write_file;

const char* kScenario = R"(name: small
platform: {preset: pcie-server, server: {gpus: 2}}
workload: {type: synthetic-dp, layers: 2, forward_time: 1ms, gradient_bytes: 1MB}
output: {file: out/small.h5}
)";

struct RunOutput {
  int status;
  std::string out;
};

RunOutput run_orrery(const std::string& dir, const std::string& args) {
  const char* bin = std::getenv("ORRERY_BIN");
  std::string cmd = "cd " + dir + " && " + bin + " " + args + " >out.txt 2>&1";
  int s = std::system(cmd.c_str());
  return {WIFEXITED(s) ? WEXITSTATUS(s) : -1, read_file(dir + "/out.txt")};
}

TEST(OutputPaths, OverridesNameTheFile) {
  EXPECT_EQ(name_for_overrides("out/q.h5", {}), "out/q.h5");
  EXPECT_EQ(name_for_overrides("", {"a=1"}), "");
  EXPECT_EQ(name_for_overrides("out/q.h5", {"platform.server.gpus=8"}),
            "out/q--platform.server.gpus=8.h5");
  EXPECT_EQ(name_for_overrides("q.trace.json", {"a.b=x y/z", "c=2"}),
            "q.trace--a.b=x_y_z--c=2.json");
  // Long override lists become a hash: same overrides, same name; others, another name.
  std::vector<std::string> many(20, "platform.server.nic.bandwidth=100Gbps");
  std::string a = name_for_overrides("out/q.h5", many);
  EXPECT_EQ(a, name_for_overrides("out/q.h5", many));
  EXPECT_EQ(a.rfind("out/q--set-", 0), 0u) << a;
  EXPECT_EQ(a.size(), std::string("out/q--set-0123456789abcdef.h5").size());
  many.back() = "platform.server.nic.bandwidth=25Gbps";
  EXPECT_NE(a, name_for_overrides("out/q.h5", many));
}

TEST(OutputPaths, ForeignFilesAreNotReplacedWithoutForce) {
  auto dir = make_temp_dir("output_paths");
  write_file(dir + "/notes.h5", "my notes\n");
  EXPECT_THROW(check_replaceable(dir + "/notes.h5", "output file", "x", false), InputError);
  EXPECT_EQ(check_replaceable(dir + "/notes.h5", "output file", "x", true), "");
  EXPECT_THROW(check_replaceable(dir, "output file", "x", false), InputError);  // a directory
  EXPECT_EQ(check_replaceable(dir + "/absent.h5", "output file", "x", false), "");
}

TEST(OutputPaths, RunRefusesForeignFileAndKeepsIt) {
  if (!std::getenv("ORRERY_BIN")) GTEST_SKIP() << "ORRERY_BIN not set (run through ctest)";
  auto dir = make_temp_dir("output_paths");
  write_file(dir + "/s.yaml", kScenario);
  write_file(dir + "/data.h5", "not hdf5\n");
  RunOutput r = run_orrery(dir, "run s.yaml -q -o data.h5");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("data.h5"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--force"), std::string::npos) << r.out;
  EXPECT_EQ(read_file(dir + "/data.h5"), "not hdf5\n");
  r = run_orrery(dir, "run s.yaml -q -o data.h5 --force");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(read_file(dir + "/data.h5"), "not hdf5\n");
}

TEST(OutputPaths, SetRunsDoNotReplaceTheBaseResult) {
  if (!std::getenv("ORRERY_BIN")) GTEST_SKIP() << "ORRERY_BIN not set (run through ctest)";
  auto dir = make_temp_dir("output_paths");
  write_file(dir + "/s.yaml", kScenario);
  ASSERT_EQ(run_orrery(dir, "run s.yaml -q").status, 0);
  std::string base = read_file(dir + "/out/small.h5");
  RunOutput r = run_orrery(dir, "run s.yaml -q --set workload.layers=3");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(read_file(dir + "/out/small.h5"), base);
  EXPECT_TRUE(std::filesystem::exists(dir + "/out/small--workload.layers=3.h5"));
  // Replacing a result of another configuration is allowed, and said.
  r = run_orrery(dir, "run s.yaml -q --set workload.layers=4 -o out/small.h5");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("another configuration"), std::string::npos) << r.out;
}

TEST(OutputPaths, HeaderNamesDeviceAndLabelsBandwidths) {
  if (!std::getenv("ORRERY_BIN")) GTEST_SKIP() << "ORRERY_BIN not set (run through ctest)";
  auto dir = make_temp_dir("output_paths");
  write_file(dir + "/m.yaml", R"(platform: {preset: dgx-a100, servers: 1}
device: A100-SXM4-80GB
workload: {type: model, model: resnet50, batch: 32}
strategy: {type: allreduce, gpus: 2}
)");
  RunOutput r = run_orrery(dir, "validate m.yaml");
  ASSERT_EQ(r.status, 0) << r.out;
  // One GPU description: the scenario's device replaces the preset's A100-SXM4-40GB, so the
  // platform line and the device line name the same GPU.
  EXPECT_NE(r.out.find("device    A100-SXM4-80GB (prices every op)\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 server x 8 A100-SXM4-80GB"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("A100-SXM4-40GB"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("per link"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("per GPU in all"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("each ("), std::string::npos) << r.out;  // several NICs: each, and the sum
}

TEST(OutputPaths, BreakdownRowsOfTheComputeStreamAddUp) {
  if (!std::getenv("ORRERY_BIN")) GTEST_SKIP() << "ORRERY_BIN not set (run through ctest)";
  auto dir = make_temp_dir("output_paths");
  write_file(dir + "/s.yaml", kScenario);
  RunOutput r = run_orrery(dir, "run s.yaml");
  ASSERT_EQ(r.status, 0) << r.out;
  auto percent_after = [&](const std::string& label) {
    auto at = r.out.find(label);
    EXPECT_NE(at, std::string::npos) << label << "\n" << r.out;
    auto eol = r.out.find('\n', at);
    auto pct = r.out.rfind(' ', r.out.find('%', at));
    EXPECT_LT(pct, eol);
    return std::atof(r.out.substr(pct, r.out.find('%', at) - pct).c_str());
  };
  double compute = percent_after("    compute ");
  double idle = percent_after("    idle (");
  EXPECT_NEAR(compute + idle, 100.0, 0.11) << r.out;
  EXPECT_EQ(r.out.find("PAI analytical"), std::string::npos) << r.out;  // behind --analytical
}

}  // namespace
}  // namespace orrery
