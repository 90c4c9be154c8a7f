// scripts/aten_calls_file.py: ATen-calls files are read without unpickling code. A torch.save
// file whose unpickling would run a command (here: create a marker file) is refused by the two
// scripts that read calls files, with the file named, and the command never runs. Skipped where
// /usr/bin/python3 cannot import torch (Debian's python3-torch; scripts/setup installs it).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "test_util.h"

namespace {

using orrery::testing::make_temp_dir;
using orrery::testing::read_file;
using orrery::testing::source_path;
using orrery::testing::write_file;

bool have_torch() {
  return std::system("/usr/bin/python3 -c 'import torch' > /dev/null 2>&1") == 0;
}

// Writes DIR/evil.pt: unpickling it with plain torch.load would create DIR/ran.
std::string write_hostile_calls_file(const std::string& dir) {
  write_file(dir + "/make.py", R"(import os, sys, torch
class Hostile:
    def __reduce__(self):
        return (os.system, ("touch " + sys.argv[1] + "/ran",))
torch.save({"format": "orrery-aten-calls", "version": 2, "ops": [Hostile()]},
           sys.argv[1] + "/evil.pt")
)");
  const std::string cmd = "/usr/bin/python3 " + dir + "/make.py " + dir;
  EXPECT_EQ(std::system(cmd.c_str()), 0);
  return dir + "/evil.pt";
}

TEST(AtenCallsFile, ProfilerRefusesAFileThatWouldRunCode) {
  if (!have_torch()) GTEST_SKIP() << "/usr/bin/python3 cannot import torch";
  const std::string dir = make_temp_dir("calls_hostile");
  const std::string evil = write_hostile_calls_file(dir);
  const std::string cmd = "/usr/bin/python3 " + source_path("scripts/profile_ops.py") +
                          " --calls " + evil + " -o " + dir + "/db.csv > " + dir + "/log.txt 2>&1";
  EXPECT_NE(std::system(cmd.c_str()), 0);
  EXPECT_FALSE(std::filesystem::exists(dir + "/ran")) << "unpickling ran a command";
  EXPECT_FALSE(std::filesystem::exists(dir + "/db.csv"));
  const std::string log = read_file(dir + "/log.txt");
  EXPECT_NE(log.find(evil), std::string::npos) << log;
  EXPECT_NE(log.find("weights_only"), std::string::npos) << log;
}

TEST(AtenCallsFile, DdpRewriterRefusesAFileThatWouldRunCode) {
  if (!have_torch()) GTEST_SKIP() << "/usr/bin/python3 cannot import torch";
  const std::string dir = make_temp_dir("calls_hostile_ddp");
  const std::string evil = write_hostile_calls_file(dir);
  write_file(dir + "/g.model.json", R"({"format": "orrery-model", "name": "g", "ops": []})");
  const std::string cmd = "/usr/bin/python3 " + source_path("scripts/validate_ddp.py") + " " + dir +
                          "/g.model.json " + evil + " -o " + dir + "/ddp.json > " + dir +
                          "/log.txt 2>&1";
  EXPECT_NE(std::system(cmd.c_str()), 0);
  EXPECT_FALSE(std::filesystem::exists(dir + "/ran")) << "unpickling ran a command";
  EXPECT_NE(read_file(dir + "/log.txt").find(evil), std::string::npos)
      << read_file(dir + "/log.txt");
}

// What export_pytorch_graph.py --calls writes comes back identical: tensors (with dtype),
// tuples as tuples, floats (which torch 1.13's weights-only loader cannot read in a pickle).
TEST(AtenCallsFile, RoundTripKeepsTensorsTuplesAndFloats) {
  if (!have_torch()) GTEST_SKIP() << "/usr/bin/python3 cannot import torch";
  const std::string dir = make_temp_dir("calls_roundtrip");
  write_file(dir + "/rt.py", R"(import sys, torch
sys.path.insert(0, sys.argv[1])
import aten_calls_file as A
data = {"model": "m", "ops": [{"calls": [{"args": (torch.arange(3), [1.5, float("inf")], None),
                                          "kwargs": {"dim": -1, "keep": True}}]}]}
A.save(sys.argv[2], data)
back = A.load(sys.argv[2])
args = back["ops"][0]["calls"][0]["args"]
assert isinstance(args, tuple), type(args)
assert torch.equal(args[0], torch.arange(3)) and args[0].dtype == torch.int64
assert args[1] == [1.5, float("inf")] and args[2] is None
assert back["ops"][0]["calls"][0]["kwargs"] == {"dim": -1, "keep": True}
print("ok")
)");
  const std::string cmd = "/usr/bin/python3 " + dir + "/rt.py " + source_path("scripts") + " " +
                          dir + "/c.pt > " + dir + "/log.txt 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << read_file(dir + "/log.txt");
  EXPECT_NE(read_file(dir + "/log.txt").find("ok"), std::string::npos);
}

}  // namespace
