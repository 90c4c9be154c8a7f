// Installing Orrery: `cmake --install` and the .deb put the binary, its data and its scripts in
// place, and the installed binary runs shipped scenarios from any directory, reading its data
// from PREFIX/share/orrery and never from the source tree (common/data_dir.h).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "common/data_dir.h"
#include "tests/test_util.h"

namespace fs = std::filesystem;

namespace orrery {
namespace {

using testing::make_temp_dir;
using testing::run_shell;
using testing::ShellResult;

// The "Iteration time" line of a run's summary.
std::string iteration_line(const std::string& out) {
  const auto at = out.find("Iteration time");
  return at == std::string::npos ? "" : out.substr(at, out.find('\n', at) - at);
}

// The build folder: where ctest's ORRERY_BIN lives.
std::string build_dir() {
  const char* bin = std::getenv("ORRERY_BIN");
  return bin ? fs::path(bin).parent_path().string() : "";
}

// Runs `bin` in a fresh directory outside the source tree.
ShellResult run_outside(const std::string& bin, const std::string& args) {
  const std::string dir = make_temp_dir("install_run");
  return run_shell("cd " + dir + " && env -u ORRERY_DATA_DIR " + bin + " " + args);
}

TEST(Install, PrefixHoldsBinaryDataAndScripts) {
  if (build_dir().empty()) GTEST_SKIP() << "ORRERY_BIN not set (run through ctest)";
  const std::string prefix = make_temp_dir("install") + "/prefix";
  ShellResult inst = run_shell("cmake --install " + build_dir() + " --prefix " + prefix);
  ASSERT_EQ(inst.status, 0) << inst.output;
  for (const char* f : {"bin/orrery", "share/orrery/scenarios/quickstart.yaml",
                        "share/orrery/scenarios/validation/mlp.yaml",
                        "share/orrery/results/validation/profile-mlp.csv",
                        "share/orrery/platforms/presets/dgx-h100.yaml",
                        "share/orrery/platforms/devices/H100-SXM5.yaml",
                        "share/orrery/scripts/plot_breakdown.py", "share/doc/orrery/design.md"})
    EXPECT_TRUE(fs::exists(prefix + "/" + f)) << f;

  // A shipped scenario by name, from a directory outside the tree: the same answer as the
  // build tree's binary on the source file.
  ShellResult installed = run_outside(prefix + "/bin/orrery", "run quickstart -o q.h5");
  ASSERT_EQ(installed.status, 0) << installed.output;
  ShellResult built =
      run_outside(std::getenv("ORRERY_BIN"),
                  "run " + testing::source_path("scenarios/quickstart.yaml") + " -o q.h5");
  ASSERT_EQ(built.status, 0) << built.output;
  EXPECT_NE(iteration_line(installed.output), "");
  EXPECT_EQ(iteration_line(installed.output), iteration_line(built.output));

  // A scenario whose profile database is a relative path into share/orrery/results: moved to
  // another prefix, the installation still finds it, so nothing points back into the sources.
  const std::string moved = make_temp_dir("install_moved") + "/elsewhere";
  ASSERT_EQ(run_shell("cp -a " + prefix + " " + moved).status, 0);
  ShellResult mlp = run_outside(moved + "/bin/orrery", "validate mlp");
  ASSERT_EQ(mlp.status, 0) << mlp.output;
  EXPECT_NE(mlp.output.find(moved + "/share/orrery/scenarios/validation/mlp.yaml: ok"),
            std::string::npos)
      << mlp.output;
  ShellResult unknown = run_outside(moved + "/bin/orrery", "run no-such-scenario");
  EXPECT_EQ(unknown.status, 2) << unknown.output;
  EXPECT_NE(unknown.output.find("no-such-scenario"), std::string::npos) << unknown.output;
}

TEST(Install, DebianPackageUnpacksToAWorkingOrrery) {
  if (build_dir().empty()) GTEST_SKIP() << "ORRERY_BIN not set (run through ctest)";
  if (run_shell("command -v dpkg-deb && command -v dpkg-shlibdeps").status != 0)
    GTEST_SKIP() << "dpkg-dev is not installed (scripts/setup installs it)";
  const std::string dir = make_temp_dir("deb");
  ShellResult pack =
      run_shell("cpack --config " + build_dir() + "/CPackConfig.cmake -G DEB -B " + dir + "/pkg");
  ASSERT_EQ(pack.status, 0) << pack.output;
  ShellResult name = run_shell("ls " + dir + "/pkg/orrery_*.deb");
  ASSERT_EQ(name.status, 0) << name.output;
  const std::string deb = name.output.substr(0, name.output.find('\n'));
  ShellResult field = run_shell("dpkg-deb -f " + deb + " Package Depends");
  ASSERT_EQ(field.status, 0) << field.output;
  EXPECT_NE(field.output.find("Package: orrery"), std::string::npos) << field.output;
  // dpkg-shlibdeps named the shared libraries the binary links, SimGrid among them.
  EXPECT_NE(field.output.find("libsimgrid"), std::string::npos) << field.output;
  ASSERT_EQ(run_shell("dpkg-deb -x " + deb + " " + dir + "/root").status, 0);
  ShellResult run = run_outside(dir + "/root/usr/bin/orrery", "run quickstart -q -o q.h5");
  EXPECT_EQ(run.status, 0) << run.output;
  // Debian's policy: the licence terms in /usr/share/doc/PACKAGE/copyright, machine-readable,
  // naming the project's licence and that of the data its fitted coefficients come from.
  const std::string copyright = testing::read_file(dir + "/root/usr/share/doc/orrery/copyright");
  EXPECT_EQ(copyright.rfind("Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/", 0), 0u);
  EXPECT_NE(copyright.find("License: Apache-2.0"), std::string::npos);
  EXPECT_NE(copyright.find("License: MIT"), std::string::npos);
  EXPECT_NE(testing::read_file(dir + "/root/usr/share/doc/orrery/LICENSE")
                .find("Apache License"),
            std::string::npos);
}

// The rule itself: a binary outside any installation or build tree has no shipped data, and
// ORRERY_DATA_DIR must name a directory.
TEST(Install, DataDirRules) {
  const std::string dir = make_temp_dir("data_dir");
  ASSERT_EQ(setenv("ORRERY_DATA_DIR", (dir + "/missing").c_str(), 1), 0);
  EXPECT_THROW(shipped_data_dir(), std::exception);
  testing::write_file(dir + "/scenarios/sub/mine.yaml", "name: mine\n");
  ASSERT_EQ(setenv("ORRERY_DATA_DIR", dir.c_str(), 1), 0);
  EXPECT_EQ(shipped_data_dir(), dir);
  EXPECT_EQ(find_scenario_file("mine"), dir + "/scenarios/sub/mine.yaml");
  EXPECT_EQ(find_scenario_file("other"), "other");    // nothing matches: as typed
  EXPECT_EQ(find_scenario_file("./mine"), "./mine");  // a path is never looked up
  unsetenv("ORRERY_DATA_DIR");
}

}  // namespace
}  // namespace orrery
