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
    if (r.at("mode") == "gloo") EXPECT_GT(number(r, "no_ddp_overheads_s"), 0);
  }
  EXPECT_TRUE(modes["single"]);
  EXPECT_TRUE(modes["gloo"]);

  // The measured data it keeps: ground truth with the machine, and the profile databases.
  const std::string measured = testing::read_file(dir + "/out/measured.csv");
  EXPECT_NE(measured.find("# cpu:"), std::string::npos);
  EXPECT_NE(measured.find("# torch:"), std::string::npos);
  EXPECT_FALSE(read_csv(dir + "/out/measured.csv").empty());
  for (const char* db : {"/out/profile-mlp.csv", "/out/profile-mlp-2p.csv"}) {
    ProfileDb rows_db = read_profile_csv(dir + db);
    EXPECT_GE(rows_db.size(), 20u) << db;
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

}  // namespace
}  // namespace orrery
