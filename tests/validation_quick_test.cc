// scripts/validate --quick: the real-hardware validation loop of docs/validation.md end to end
// on one small model (export the training step and its DDP variant, measure host overheads and
// loopback gloo, profile the ops with the N/M method, time real iterations in one and two
// processes, predict with `orrery run`, print and write the table). It checks that the pipeline
// works and its outputs parse, not the error figure: timings on a CI machine mean nothing.
// Skipped where /usr/bin/python3 cannot import torch (Debian's python3-torch).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "models/profile_io.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

bool have_torch() {
  return std::system("/usr/bin/python3 -c 'import torch' > /dev/null 2>&1") == 0;
}

std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> out;
  std::stringstream s(line);
  std::string field;
  while (std::getline(s, field, sep)) out.push_back(field);
  if (!line.empty() && line.back() == sep) out.push_back("");
  return out;
}

// Rows of a CSV with '#' comment lines, as column -> value maps.
std::vector<std::map<std::string, std::string>> read_csv(const std::string& path) {
  std::stringstream text(testing::read_file(path));
  std::string line;
  std::vector<std::string> header;
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(text, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (header.empty()) {
      header = split(line, ',');
      continue;
    }
    std::vector<std::string> f = split(line, ',');
    EXPECT_EQ(f.size(), header.size()) << path << ": " << line;
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < header.size() && i < f.size(); ++i) row[header[i]] = f[i];
    rows.push_back(row);
  }
  return rows;
}

double number(const std::map<std::string, std::string>& row, const std::string& col) {
  auto it = row.find(col);
  EXPECT_NE(it, row.end()) << col;
  if (it == row.end()) return NAN;
  char* end = nullptr;
  double v = std::strtod(it->second.c_str(), &end);
  EXPECT_TRUE(end && *end == '\0' && !it->second.empty()) << col << " = " << it->second;
  return v;
}

TEST(ValidationQuick, LoopRunsEndToEndAndWritesItsTable) {
  if (!have_torch()) GTEST_SKIP() << "/usr/bin/python3 cannot import torch";
  const std::string dir = testing::make_temp_dir("validation_quick");
  const char* bin = std::getenv("ORRERY_BIN");
  std::string cmd = testing::source_path("scripts/validate") + " --quick -o " + dir + "/out";
  if (bin) cmd += std::string(" --orrery ") + bin;
  cmd += " > " + dir + "/log.txt 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << testing::read_file(dir + "/log.txt");

  // The printed table.
  const std::string log = testing::read_file(dir + "/log.txt");
  EXPECT_NE(log.find("mean |error|"), std::string::npos) << log;

  // validation.csv: one row per mode for the MLP, with positive times and finite errors.
  auto rows = read_csv(dir + "/out/validation.csv");
  ASSERT_EQ(rows.size(), 2u);
  std::map<std::string, bool> modes;
  for (const auto& r : rows) {
    EXPECT_EQ(r.at("model"), "mlp");
    modes[r.at("mode")] = true;
    EXPECT_GT(number(r, "measured_median_s"), 0);
    EXPECT_GT(number(r, "predicted_s"), 0);
    EXPECT_LE(number(r, "measured_p10_s"), number(r, "measured_p90_s"));
    double err = number(r, "error");
    EXPECT_TRUE(std::isfinite(err));
    EXPECT_NEAR(err, number(r, "predicted_s") / number(r, "measured_median_s") - 1, 1e-3);
    EXPECT_GT(number(r, "no_host_overheads_s"), 0);
    if (r.at("mode") == "gloo") {
      EXPECT_GT(number(r, "no_ddp_overheads_s"), 0);
    }
  }
  EXPECT_TRUE(modes["single"]);
  EXPECT_TRUE(modes["gloo"]);

  // The measured data it keeps: ground truth with the machine, and the profile databases.
  const std::string measured = testing::read_file(dir + "/out/measured.csv");
  EXPECT_NE(measured.find("# cpu:"), std::string::npos);
  EXPECT_NE(measured.find("# torch:"), std::string::npos);
  EXPECT_FALSE(read_csv(dir + "/out/measured.csv").empty());
  for (const char* db :
       {"/out/profile-mlp.csv", "/out/profile-mlp-2p.csv", "/out/profile-mlp-rotate.csv"}) {
    ProfileDb rows_db = read_profile_csv(dir + db);
    EXPECT_GE(rows_db.size(), 20u) << db;
  }
  // The two-rank database comes from one profiler timing in lock step with a forked twin.
  EXPECT_NE(testing::read_file(dir + "/out/profile-mlp-2p.csv")
                .find("ranks: 2 (processes timing every call at once"),
            std::string::npos);
  for (const auto& r : rows) {
    if (r.at("mode") == "single") {
      EXPECT_GT(number(r, "rotate_only_s"), 0);
    }
  }
  EXPECT_FALSE(read_csv(dir + "/out/overheads.csv").empty());
  EXPECT_FALSE(read_csv(dir + "/out/comm.csv").empty());
  std::map<std::string, double> ddp;
  for (const auto& r : read_csv(dir + "/out/ddp_overheads.csv"))
    ddp[r.at("quantity")] = number(r, "value");
  EXPECT_TRUE(ddp.count("per_step") && ddp.count("per_param"));
  EXPECT_GT(ddp["ddp_4"], 0);
  EXPECT_GT(ddp["alone_28"], ddp["alone_4"]);  // the longer chain takes longer
}

// profile_ops.py's replayed-traffic context (docs/validation.md, "Replayed traffic"): every
// input gets its own reuse distance of foreign traffic behind it, farthest first, with the
// code-warming copy (None) at its own distance (its bytes) in the order.
TEST(ValidationQuick, TrafficContextReplaysEachInputsReuseDistance) {
  if (!have_torch()) GTEST_SKIP() << "/usr/bin/python3 cannot import torch";
  const std::string dir = testing::make_temp_dir("traffic_plan");
  testing::write_file(dir + "/plan.py", R"(import sys
sys.path.insert(0, sys.argv[1])
import torch, profile_ops as P
def spec(reuse):
    return {"__tensor__": True, "shape": [4], "stride": [1], "offset": 0, "storage": 4,
            "dtype": {"__torch__": "float32"}, "reuse": reuse}
rec = {"phase": "backward", "calls": [{"func": "aten.add.Tensor",
       "args": [spec(10 << 20), spec(1 << 20)], "kwargs": {}}]}
case = P.TrafficCase(rec, torch.device("cpu"), 8 << 20)
gaps = [g for _, g in case.plan]
assert gaps == [(10 << 20) - (1 << 20), (1 << 20) - 32, 32], gaps
assert case.plan[0][0] is not None and case.plan[2][0] is None
assert P.TrafficCase.foreign.numel() * 4 == 8 << 20  # sweeps stop at max_sweep
t = case.timed_call()
assert 0 < t < 1, t
print("ok")
)");
  const std::string cmd = "/usr/bin/python3 " + dir + "/plan.py " +
                          testing::source_path("scripts") + " > " + dir + "/log.txt 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << testing::read_file(dir + "/log.txt");
  EXPECT_NE(testing::read_file(dir + "/log.txt").find("ok"), std::string::npos);
}

// scripts/validate charges DDP's measured synchronisation once per blocking collective: the
// end of backward, and the buffer broadcast before forward for models with buffers (BatchNorm).
TEST(ValidationQuick, DdpWaitsCountTheBufferBroadcast) {
  if (!have_torch()) GTEST_SKIP() << "/usr/bin/python3 cannot import torch";
  const std::string dir = testing::make_temp_dir("ddp_waits");
  testing::write_file(dir + "/waits.py", R"(import sys
from importlib.machinery import SourceFileLoader
sys.path.insert(0, sys.argv[1])
v = SourceFileLoader("validate", sys.argv[1] + "/validate").load_module()
print(" ".join("%s=%d" % (m, v.ddp_waits(m)) for m in ("mlp", "small_cnn", "resnet18", "lstm",
                                                         "transformer")))
)");
  const std::string cmd = "/usr/bin/python3 " + dir + "/waits.py " +
                          testing::source_path("scripts") + " > " + dir + "/log.txt 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << testing::read_file(dir + "/log.txt");
  EXPECT_NE(testing::read_file(dir + "/log.txt")
                .find("mlp=1 small_cnn=2 resnet18=2 lstm=1 transformer=1"),
            std::string::npos)
      << testing::read_file(dir + "/log.txt");
}

// A profile timed in replayed traffic keeps the database's row contract: time = (T_M - T_N) /
// (M - N), here with N = 0 and M = 1 (T_N the empty timed region, T_M the call).
TEST(ValidationQuick, TrafficContextRowsKeepTheNmContract) {
  if (!have_torch()) GTEST_SKIP() << "/usr/bin/python3 cannot import torch";
  const std::string dir = testing::make_temp_dir("traffic_rows");
  const std::string scripts = testing::source_path("scripts");
  std::string cmd = "/usr/bin/python3 " + scripts + "/export_pytorch_graph.py " + scripts +
                    "/ground_truth_models.py:mlp --batch 8 --name mlp -o " + dir +
                    "/mlp.model.json --calls " + dir + "/mlp.calls.pt && /usr/bin/python3 " +
                    scripts + "/profile_ops.py --calls " + dir + "/mlp.calls.pt --device-name " +
                    "Xeon-vCPU-1T --clock thread --calls-context traffic --calls-samples 3 -o " +
                    dir + "/db.csv > " + dir + "/log.txt 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << testing::read_file(dir + "/log.txt");
  EXPECT_NE(testing::read_file(dir + "/db.csv").find("# context: traffic"), std::string::npos);
  auto rows = read_csv(dir + "/db.csv");
  ASSERT_GE(rows.size(), 10u);
  for (const auto& r : rows) {
    EXPECT_EQ(r.at("n"), "0");
    EXPECT_EQ(r.at("m"), "1");
    double t = number(r, "time_s");
    EXPECT_GT(t, 0) << r.at("op");
    EXPECT_NEAR(t, number(r, "t_m_s") - number(r, "t_n_s"), 1e-6 * t + 1e-12) << r.at("op");
  }
  EXPECT_EQ(read_profile_csv(dir + "/db.csv").size(), rows.size());
}

}  // namespace
}  // namespace orrery
