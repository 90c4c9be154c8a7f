// scripts/profile_ops.py, run for a tiny grid on this machine's CPU, produces rows Orrery
// loads. Skipped where Debian's python3-torch is missing (CI installs it via scripts/setup).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "models/profile_io.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

bool torch_available() {
  return std::system("/usr/bin/python3 -c 'import torch' > /dev/null 2>&1") == 0;
}

TEST(ProfilerScript, TinyGridOnCpuGivesLoadableRows) {
  if (!torch_available()) GTEST_SKIP() << "/usr/bin/python3 cannot import torch";
  std::string dir = testing::make_temp_dir("profiler");
  std::string out = dir + "/rows.csv";
  std::string cmd = "/usr/bin/python3 " + testing::source_path("scripts/profile_ops.py") +
                    " --grid tiny --threads 1 --repeats 3 -o " + out + " > " + dir +
                    "/log.txt 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << testing::read_file(dir + "/log.txt");
  ProfileDb db = read_profile_csv(out);
  ASSERT_GE(db.size(), 3u);  // a few rows may be dropped when noise makes T_M <= T_N
  bool matmul = false;
  for (const auto& r : db.rows()) {
    EXPECT_GT(r.time_s, 0);
    EXPECT_EQ(r.n, 2);
    EXPECT_EQ(r.m, 10);
    EXPECT_EQ(r.device.rfind("cpu-", 0), 0u) << r.device;
    EXPECT_NEAR(r.time_s, (r.t_m_s - r.t_n_s) / (r.m - r.n), 1e-6 * r.time_s);
    if (r.op == "matmul") {
      matmul = true;
      EXPECT_TRUE(r.inputs == "32x64;64x64" || r.inputs == "64x64;64x64") << r.inputs;
    }
  }
  EXPECT_TRUE(matmul);
  std::string text = testing::read_file(out);
  EXPECT_NE(text.find("# torch:"), std::string::npos);
  EXPECT_NE(text.find("# command:"), std::string::npos);
}

}  // namespace
}  // namespace orrery
