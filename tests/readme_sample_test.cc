// The README's quickstart sample is the program's real output: every line of it (up to the
// "..." that cuts it short) must appear in what `orrery run scenarios/quickstart.yaml` prints.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <sstream>

#include "test_util.h"

namespace orrery {
namespace {

TEST(ReadmeSample, QuickstartOutputMatchesTheReadme) {
  const char* bin = std::getenv("ORRERY_BIN");
  if (!bin) GTEST_SKIP() << "ORRERY_BIN not set (run through ctest)";
  const std::string readme = testing::read_file(testing::source_path("README.md"));
  const auto start = readme.find("Scenario   quickstart");
  ASSERT_NE(start, std::string::npos);
  const auto end = readme.find("  ...", start);
  ASSERT_NE(end, std::string::npos);
  const std::string dir = testing::make_temp_dir("readme");
  const std::string cmd = std::string(bin) + " run " +
                          testing::source_path("scenarios/quickstart.yaml") + " -o " + dir +
                          "/q.h5 > " + dir + "/out.txt 2>&1";
  int s = std::system(cmd.c_str());
  const std::string out = testing::read_file(dir + "/out.txt");
  ASSERT_TRUE(WIFEXITED(s) && WEXITSTATUS(s) == 0) << out;
  std::istringstream sample(readme.substr(start, end - start));
  for (std::string line; std::getline(sample, line);)
    EXPECT_NE(out.find(line), std::string::npos) << "README line not printed: " << line << "\n"
                                                 << out;
}

}  // namespace
}  // namespace orrery
