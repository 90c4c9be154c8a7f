// The files side of a sweep's output (sweeps/sweep_store.h), through the command: a write that
// fails (here past the `ulimit -f` file-size limit, as a full disk would) is an error naming
// the output and its cause, exit status 2, and leaves no file that looks like a result; a
// damaged output is refused, never overwritten; an output held by another sweep is refused.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "results/h5_store.h"
#include "results/output_lock.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

namespace fs = std::filesystem;
using testing::make_temp_dir;
using testing::read_file;
using testing::write_file;

const char* kSweep = R"(name: store
platform:
  preset: pcie-server
  server:
    gpus: 4
workload:
  type: synthetic-dp
  layers: 16
  forward_time: 1ms
  backward_factor: 2
  gradient_bytes: 4MB
  update_time: 200us
  input_bytes: 19.3MB
sweep:
  grid:
    workload.layers: [4, 8, 16]
    workload.gradient_bytes: [1MB, 4MB]
)";

struct Ran {
  int status = -1;  // exit status, or 128 + signal
  std::string out;
};

// Runs `orrery ARGS` through the shell, after `prefix` (e.g. "ulimit -f 40;").
Ran run(const std::string& dir, const std::string& args, const std::string& prefix = "") {
  const char* bin = std::getenv("ORRERY_BIN");
  const std::string log = dir + "/log.txt";
  const std::string cmd = "sh -c '" + prefix + " exec " + bin + " " + args + "' >" + log + " 2>&1";
  const int s = std::system(cmd.c_str());
  Ran r;
  r.status = WIFEXITED(s) ? WEXITSTATUS(s) : 128 + WTERMSIG(s);
  r.out = read_file(log);
  return r;
}

#define NEED_BINARY() \
  if (std::getenv("ORRERY_BIN") == nullptr) GTEST_SKIP() << "ORRERY_BIN not set"

TEST(SweepStore, WriteErrorIsNamedAndLeavesNoResult) {
  NEED_BINARY();
  const std::string dir = make_temp_dir("sweep_store");
  write_file(dir + "/s.yaml", kSweep);
  const std::string out = dir + "/out.h5";
  // 30 blocks: 15 KiB in dash's 512-byte blocks, 30 KiB in bash's 1 KiB ones. Either way the
  // journal (about 8.5 KiB: six points' results) fits and the HDF5 file (over 33 KiB) does not.
  Ran r = run(dir, "sweep " + dir + "/s.yaml -o " + out + " -j 1 -q", "ulimit -f 30;");
  EXPECT_EQ(r.status, 2) << r.out;  // not 139: the crash at exit after a failed close is gone
  EXPECT_NE(r.out.find(out + ": cannot write: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ulimit -f"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(out));
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    EXPECT_EQ(name.find(".tmp."), std::string::npos) << name;  // no temp file left
    EXPECT_NE(name, "out.h5.lock");                            // the lock is released
  }
  // The journal kept every point: with room again, the same command finishes the sweep.
  r = run(dir, "sweep " + dir + "/s.yaml -o " + out + " -j 1 -q");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(read_results_h5(out).runs.size(), 6u);
}

TEST(SweepStore, DamagedOutputIsRefusedNotOverwritten) {
  NEED_BINARY();
  const std::string dir = make_temp_dir("sweep_store");
  write_file(dir + "/s.yaml", kSweep);
  const std::string out = dir + "/out.h5";
  ASSERT_EQ(run(dir, "sweep " + dir + "/s.yaml -o " + out + " -j 1 -q").status, 0);
  const std::string whole = read_file(out);
  const std::string cut = whole.substr(0, whole.size() / 2);
  write_file(out, cut);
  Ran r = run(dir, "sweep " + dir + "/s.yaml -o " + out + " -j 1 -q");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_EQ(r.out.find("orrery: error: " + out + ": "), 0u) << r.out;
  EXPECT_NE(r.out.find("--fresh"), std::string::npos) << r.out;
  EXPECT_EQ(read_file(out), cut);  // left as it was
  r = run(dir, "report " + out);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_EQ(r.out.find("orrery: error: " + out + ": "), 0u) << r.out;
}

TEST(SweepStore, OutputHeldByAnotherSweepIsRefused) {
  NEED_BINARY();
  const std::string dir = make_temp_dir("sweep_store");
  write_file(dir + "/s.yaml", kSweep);
  const std::string out = dir + "/out.h5";
  OutputLock held(out);  // what a running sweep holds
  Ran r = run(dir, "sweep " + dir + "/s.yaml -o " + out + " -j 1 -q");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find(out + ": another Orrery process is writing this output (pid " +
                       std::to_string(getpid())),
            std::string::npos)
      << r.out;
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(out + ".journal"));  // refused before touching anything
}

}  // namespace
}  // namespace orrery
