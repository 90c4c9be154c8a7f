// `orrery sweep` end to end, through the binary: every point in its own process, failures
// recorded, resume after a kill or Ctrl-C, results independent of -j and of MPI ranks, files
// readable by h5py. Comparisons of two files cover everything but the wall-clock fields
// (wall_s of each run, created_by), which differ between runs by nature.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <thread>

#include "engine/run_result_io.h"
#include "results/h5_store.h"
#include "sweeps/sweep_h5.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

using testing::make_temp_dir;
using testing::read_file;
using testing::write_file;

// 60 points of 8 GPUs and 40 to 80 layers: long enough to interrupt half-way.
const char* kLong = R"(name: long
platform:
  preset: pcie-server
  server: {gpus: 8}
workload:
  type: synthetic-dp
  forward_time: 1ms
sweep:
  grid:
    workload.layers: [40, 60, 80]
    workload.gradient_bytes: [1MB, 2MB, 4MB, 8MB, 16MB]
    platform.server.pcie.bandwidth: [8GB/s, 16GB/s, 32GB/s, 64GB/s]
)";

// kLong on 8 servers: points of about 0.1 s, so that rank 0 cannot run all 60 before another
// rank has started (at 30 ms a point it sometimes did, on a loaded 2-core machine).
std::string mpi_sweep() {
  std::string s = kLong;
  return s.insert(s.find("  server: {gpus: 8}"), "  servers: 8\n");
}

std::string bin() { return testing::orrery_bin(); }

struct Ran {
  int status = -1;  // exit status, or 128 + signal
  std::string out;
};

Ran run(const std::string& dir, const std::string& args, const std::string& env = "") {
  std::string log = dir + "/log.txt";
  std::string cmd = env + " " + bin() + " " + args + " >" + log + " 2>&1";
  int s = std::system(cmd.c_str());
  Ran r;
  r.status = WIFEXITED(s) ? WEXITSTATUS(s) : 128 + WTERMSIG(s);
  r.out = read_file(log);
  return r;
}

// Everything but wall_s and created_by.
#define NEED_BINARY() \
  if (bin().empty()) GTEST_SKIP() << "ORRERY_BIN not set (run through ctest)"

TEST(SweepRun, RunsEveryPointAndWritesOneFile) {
  NEED_BINARY();
  auto dir = make_temp_dir("sweep_run");
  write_file(dir + "/s.yaml", testing::kSmallSweepScenario);
  Ran r = run(dir, "sweep " + dir + "/s.yaml -o " + dir + "/out.h5 -j2");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("12 ok, 0 failed"), std::string::npos) << r.out;
  LoadedResults res = read_results_h5(dir + "/out.h5");
  ASSERT_EQ(res.runs.size(), 12u);
  for (size_t i = 0; i < res.runs.size(); ++i) {
    const auto& p = res.runs[i].params;
    EXPECT_EQ(p.at("sweep.index"), std::to_string(i));
    EXPECT_EQ(p.at("sweep.status"), "ok");
    EXPECT_EQ(p.at("sweep.hash").size(), 16u);
    EXPECT_GT(res.summaries[i].iteration_time_s, 0);
  }
  EXPECT_EQ(res.runs[1].params.at("depth"), "deep");
  EXPECT_EQ(res.runs[11].params.at("workload.gradient_bytes"), "16MB");
  // More gradient bytes over slower PCIe cannot be faster.
  EXPECT_GE(res.summaries[5].iteration_time_s, res.summaries[1].iteration_time_s);
  SweepFileStatus st = read_sweep_status(dir + "/out.h5");
  EXPECT_TRUE(st.present && st.complete);
  EXPECT_EQ(st.points_total, 12);
  EXPECT_FALSE(std::filesystem::exists(dir + "/out.h5.journal"));  // removed when complete
}

TEST(SweepRun, DryRunListsThePoints) {
  NEED_BINARY();
  auto dir = make_temp_dir("sweep_run");
  write_file(dir + "/s.yaml", testing::kSmallSweepScenario);
  Ran r = run(dir, "sweep " + dir + "/s.yaml --dry-run");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("small: 12 point(s)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("depth=deep"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir + "/out.h5"));
}

TEST(SweepRun, AbortingPointIsRecordedAsFailedAndTheSweepGoesOn) {
  NEED_BINARY();
  auto dir = make_temp_dir("sweep_run");
  write_file(dir + "/s.yaml", testing::kSmallSweepScenario);
  Ran r =
      run(dir, "sweep " + dir + "/s.yaml -o " + dir + "/out.h5 -j2", "ORRERY_SWEEP_TEST_ABORT=3");
  EXPECT_EQ(r.status, 3) << r.out;  // some points failed
  EXPECT_NE(r.out.find("11 ok, 1 failed"), std::string::npos) << r.out;
  LoadedResults res = read_results_h5(dir + "/out.h5");
  ASSERT_EQ(res.runs.size(), 12u);
  EXPECT_EQ(res.runs[3].params.at("sweep.status"), "failed");
  EXPECT_NE(res.runs[3].params.at("sweep.error").find("SIGABRT"), std::string::npos)
      << res.runs[3].params.at("sweep.error");
  EXPECT_EQ(res.runs[4].params.at("sweep.status"), "ok");
  // A failed point counts as finished: the same command reruns nothing...
  Ran again = run(dir, "sweep " + dir + "/s.yaml -o " + dir + "/out.h5");
  EXPECT_EQ(again.status, 3) << again.out;
  EXPECT_NE(again.out.find("0 run now"), std::string::npos) << again.out;
  // ...unless asked to retry.
  Ran retry = run(dir, "sweep " + dir + "/s.yaml -o " + dir + "/out.h5 --retry-failed");
  EXPECT_EQ(retry.status, 0) << retry.out;
  EXPECT_NE(retry.out.find("1 run now"), std::string::npos) << retry.out;
  EXPECT_EQ(read_results_h5(dir + "/out.h5").runs[3].params.at("sweep.status"), "ok");
}

TEST(SweepRun, BadValueOfOnePointIsRecordedWithItsMessage) {
  NEED_BINARY();
  auto dir = make_temp_dir("sweep_run");
  write_file(dir + "/s.yaml", R"(name: bad
platform: {preset: pcie-server, server: {gpus: 2}}
workload: {type: synthetic-dp, layers: 2}
sweep:
  grid:
    workload.gpus: [1, 2, 9]
)");
  Ran r = run(dir, "sweep " + dir + "/s.yaml -o " + dir + "/out.h5");
  EXPECT_EQ(r.status, 3) << r.out;
  LoadedResults res = read_results_h5(dir + "/out.h5");
  ASSERT_EQ(res.runs.size(), 3u);
  const std::string& err = res.runs[2].params.at("sweep.error");
  EXPECT_NE(err.find("s.yaml:6"), std::string::npos) << err;
  EXPECT_NE(err.find("sweep.grid key \"workload.gpus\""), std::string::npos) << err;
  EXPECT_NE(err.find("must be between 1 and the platform's 2 GPUs"), std::string::npos) << err;
}

TEST(SweepRun, ResultsDoNotDependOnJobs) {
  NEED_BINARY();
  auto dir = make_temp_dir("sweep_run");
  write_file(dir + "/s.yaml", testing::kSmallSweepScenario);
  ASSERT_EQ(run(dir, "sweep " + dir + "/s.yaml -q -o " + dir + "/j1.h5 -j1").status, 0);
  ASSERT_EQ(run(dir, "sweep " + dir + "/s.yaml -q -o " + dir + "/j3.h5 -j3").status, 0);
  testing::expect_same_sweep_results(dir + "/j1.h5", dir + "/j3.h5");
}

// Starts `orrery sweep` in the background; returns its pid.
pid_t start(const std::string& dir, const std::string& args, const std::string& env = "") {
  pid_t pid = fork();
  if (pid == 0) {
    int fd = ::open((dir + "/bg.txt").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    std::string cmd = (env.empty() ? "" : "env " + env + " ") + bin() + " " + args;
    execl("/bin/sh", "sh", "-c", ("exec " + cmd).c_str(), nullptr);
    _exit(127);
  }
  return pid;
}

// Waits until the journal of the sweep `pid` writes in `dir` holds exactly points 0 to n-1 and
// two children (-j2) are held at points n and n+1 (ORRERY_SWEEP_TEST_HOLD_FROM=n).
bool wait_until_held(const std::string& dir, pid_t pid, int n) {
  std::set<int64_t> want;
  for (int i = 0; i < n; ++i) want.insert(i);
  for (int i = 0; i < 6000; ++i) {
    if (testing::journal_points(dir + "/out.h5.journal") == want &&
        testing::child_pids(pid).size() == 2)
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

int wait_status(pid_t pid) {
  int s = 0;
  waitpid(pid, &s, 0);
  return WIFEXITED(s) ? WEXITSTATUS(s) : 128 + WTERMSIG(s);
}

TEST(SweepRun, ResumeAfterAKillGivesTheSameFileAsAnUninterruptedRun) {
  NEED_BINARY();
  auto dir = make_temp_dir("sweep_run");
  write_file(dir + "/s.yaml", kLong);
  ASSERT_EQ(run(dir, "sweep " + dir + "/s.yaml -q -o " + dir + "/ref.h5 -j2").status, 0);

  // Points 0-9 finish, 10 and 11 are held in their children (sweeps/point_runner.h), so the
  // kill lands at a known place however loaded the machine is.
  pid_t pid = start(dir, "sweep " + dir + "/s.yaml -q -o " + dir + "/out.h5 -j2",
                    "ORRERY_SWEEP_TEST_HOLD_FROM=10");
  ASSERT_TRUE(wait_until_held(dir, pid, 10)) << read_file(dir + "/bg.txt");
  // A power cut: the sweep and its children die at once. The sweep first: killed after its
  // children, it could see one die and journal that point as failed before its own end.
  const std::vector<int> children = testing::child_pids(pid);
  kill(pid, SIGKILL);
  for (int child : children) kill(child, SIGKILL);
  EXPECT_EQ(wait_status(pid), 128 + SIGKILL);
  ASSERT_TRUE(std::filesystem::exists(dir + "/out.h5.journal"));

  Ran r = run(dir, "sweep " + dir + "/s.yaml -o " + dir + "/out.h5 -j2");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("50 run now, 10 already done"), std::string::npos) << r.out;
  testing::expect_same_sweep_results(dir + "/ref.h5", dir + "/out.h5");
  EXPECT_FALSE(std::filesystem::exists(dir + "/out.h5.journal"));
}

TEST(SweepRun, CtrlCLeavesAValidFileAndTheRunResumes) {
  NEED_BINARY();
  auto dir = make_temp_dir("sweep_run");
  write_file(dir + "/s.yaml", kLong);
  pid_t pid = start(dir, "sweep " + dir + "/s.yaml -q -o " + dir + "/out.h5 -j2",
                    "ORRERY_SWEEP_TEST_HOLD_FROM=10");
  ASSERT_TRUE(wait_until_held(dir, pid, 10)) << read_file(dir + "/bg.txt");
  kill(pid, SIGINT);
  EXPECT_EQ(wait_status(pid), 130) << read_file(dir + "/bg.txt");
  EXPECT_NE(read_file(dir + "/bg.txt").find("run the same command again to resume"),
            std::string::npos);
  SweepFileStatus st = read_sweep_status(dir + "/out.h5");
  ASSERT_TRUE(st.present);
  EXPECT_FALSE(st.complete);
  EXPECT_EQ(st.points_done, 10);  // the held points were stopped, not recorded
  EXPECT_EQ(read_results_h5(dir + "/out.h5").runs.size(), static_cast<size_t>(st.points_done));

  Ran r = run(dir, "sweep " + dir + "/s.yaml -o " + dir + "/out.h5 -j1");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(read_sweep_status(dir + "/out.h5").complete);
  ASSERT_EQ(run(dir, "sweep " + dir + "/s.yaml -q -o " + dir + "/ref.h5 -j1").status, 0);
  testing::expect_same_sweep_results(dir + "/ref.h5", dir + "/out.h5");
}

// mpirun and Slurm stop a job by signalling the children too, and a child's death may be seen
// before the parent's own SIGTERM: a child killed by SIGTERM is stopped, not failed. Its point
// runs again, and is not in the file when the sweep is then interrupted.
TEST(SweepRun, ChildKilledBySigtermIsNotAFailedPoint) {
  NEED_BINARY();
  auto dir = make_temp_dir("sweep_run");
  write_file(dir + "/s.yaml", testing::kSmallSweepScenario);
  // Points 0-4 finish; from 5 on the children sleep (sweeps/point_runner.h).
  pid_t pid = start(dir, "sweep " + dir + "/s.yaml -q -o " + dir + "/out.h5 -j2",
                    "ORRERY_SWEEP_TEST_HOLD_FROM=5");
  // Points 0-4 in the journal, then both children held.
  for (int i = 0; i < 3000 && testing::journal_points(dir + "/out.h5.journal").size() < 5; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_EQ(testing::journal_points(dir + "/out.h5.journal").size(), 5u)
      << read_file(dir + "/bg.txt");
  std::vector<int> held;
  for (int i = 0; i < 3000 && held.size() < 2; ++i) {
    held = testing::child_pids(pid);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ASSERT_EQ(held.size(), 2u) << read_file(dir + "/bg.txt");
  kill(held[0], SIGTERM);
  // The point starts again in a new child.
  bool restarted = false;
  for (int i = 0; i < 3000 && !restarted; ++i) {
    std::vector<int> now = testing::child_pids(pid);
    restarted = now.size() == 2 && std::find(now.begin(), now.end(), held[0]) == now.end();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  EXPECT_TRUE(restarted);
  kill(pid, SIGINT);
  EXPECT_EQ(wait_status(pid), 130) << read_file(dir + "/bg.txt");
  SweepFileStatus st = read_sweep_status(dir + "/out.h5");
  EXPECT_EQ(st.points_done, 5);
  EXPECT_EQ(st.points_failed, 0);
}

TEST(SweepRun, OutputOfAnotherSweepIsNotOverwritten) {
  NEED_BINARY();
  auto dir = make_temp_dir("sweep_run");
  write_file(dir + "/s.yaml", testing::kSmallSweepScenario);
  ASSERT_EQ(run(dir, "sweep " + dir + "/s.yaml -q -o " + dir + "/out.h5").status, 0);
  Ran r =
      run(dir, "sweep " + dir + "/s.yaml -q -o " + dir + "/out.h5 --set workload.forward_time=2ms");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("not in this sweep"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--fresh"), std::string::npos) << r.out;
  Ran fresh = run(dir, "sweep " + dir + "/s.yaml -q -o " + dir +
                           "/out.h5 --set workload.forward_time=2ms --fresh");
  EXPECT_EQ(fresh.status, 0) << fresh.out;
  // Re-running a finished sweep runs nothing and leaves the file as it is.
  auto before = std::filesystem::last_write_time(dir + "/out.h5");
  Ran same =
      run(dir, "sweep " + dir + "/s.yaml -o " + dir + "/out.h5 --set workload.forward_time=2ms");
  EXPECT_EQ(same.status, 0) << same.out;
  EXPECT_NE(same.out.find("0 run now, 12 already done"), std::string::npos) << same.out;
  EXPECT_EQ(std::filesystem::last_write_time(dir + "/out.h5"), before);
}

TEST(SweepRun, OnePointWithItsTimelineMatchesTheSweep) {
  NEED_BINARY();
  auto dir = make_temp_dir("sweep_run");
  write_file(dir + "/s.yaml", testing::kSmallSweepScenario);
  ASSERT_EQ(run(dir, "sweep " + dir + "/s.yaml -q -o " + dir + "/all.h5").status, 0);
  Ran r = run(
      dir, "sweep " + dir + "/s.yaml --point 7 -o " + dir + "/p7.h5 --trace " + dir + "/p7.json");
  ASSERT_EQ(r.status, 0) << r.out;
  LoadedResults all = read_results_h5(dir + "/all.h5"), one = read_results_h5(dir + "/p7.h5");
  ASSERT_EQ(one.runs.size(), 1u);
  EXPECT_EQ(one.summaries[0].iteration_time_s, all.summaries[7].iteration_time_s);
  EXPECT_EQ(one.runs[0].params.at("sweep.hash"), all.runs[7].params.at("sweep.hash"));
  EXPECT_FALSE(one.timelines[0].empty());
  EXPECT_TRUE(std::filesystem::exists(dir + "/p7.json"));
  EXPECT_EQ(one.meta.scenario_text.find("sweep:"), std::string::npos);  // the point's own
  EXPECT_EQ(run(dir, "sweep " + dir + "/s.yaml --point 12 -o " + dir + "/x.h5").status, 2);
}

TEST(SweepRun, UnknownKeyIsBadInput) {
  NEED_BINARY();
  auto dir = make_temp_dir("sweep_run");
  write_file(dir + "/s.yaml", std::string(kLong) + "    platform.fabrik.latency: [1us]\n");
  Ran r = run(dir, "sweep " + dir + "/s.yaml -o " + dir + "/out.h5");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("platform.fabrik"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("set by the sweep"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir + "/out.h5"));
}

TEST(SweepRun, FileIsReadableByH5py) {
  NEED_BINARY();
  if (std::system("/usr/bin/python3 -c 'import h5py' >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "/usr/bin/python3 with h5py (python3-h5py) is not installed";
  auto dir = make_temp_dir("sweep_run");
  write_file(dir + "/s.yaml", testing::kSmallSweepScenario);
  ASSERT_EQ(run(dir, "sweep " + dir + "/s.yaml -q -o " + dir + "/out.h5 -j2").status, 0);
  write_file(dir + "/read.py", R"(import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    runs = f["runs"][:]
    params = f["run_params"][:]
    sweep = dict(f["sweep"].attrs)
    assert len(runs) == 12 and len(params) == 12, (len(runs), len(params))
    assert sweep["complete"] == 1 and sweep["points_total"] == 12, sweep
    assert all(p == b"ok" for p in params["sweep.status"])
    assert (runs["iteration_time_s"] > 0).all()
    assert f["runs_detail/3/params"].attrs["depth"] == "deep"
    print("h5py ok", params["depth"][0].decode(), f.attrs["orrery_version"])
)");
  int s = std::system(
      ("/usr/bin/python3 " + dir + "/read.py " + dir + "/out.h5 >" + dir + "/py.txt 2>&1").c_str());
  EXPECT_EQ(s, 0) << read_file(dir + "/py.txt");
  EXPECT_NE(read_file(dir + "/py.txt").find("h5py ok shallow"), std::string::npos)
      << read_file(dir + "/py.txt");
}

// Run by the sweep_mpi_np2 ctest entry (CMakeLists.txt), which sets ORRERY_MPIEXEC.
TEST(SweepMpi, TwoRanksShareThePointsAndMatchOneProcess) {
  NEED_BINARY();
  const char* mpiexec = std::getenv("ORRERY_MPIEXEC");
  if (!mpiexec) GTEST_SKIP() << "ORRERY_MPIEXEC not set (the sweep_mpi_np2 ctest sets it)";
  auto dir = make_temp_dir("sweep_mpi");
  write_file(dir + "/s.yaml", mpi_sweep());
  ASSERT_EQ(run(dir, "sweep " + dir + "/s.yaml -q -o " + dir + "/seq.h5 -j1").status, 0);
  std::string root = geteuid() == 0 ? " --allow-run-as-root" : "";
  std::string cmd = std::string(mpiexec) + root + " --oversubscribe -np 2 " + bin() + " sweep " +
                    dir + "/s.yaml -o " + dir + "/mpi.h5 -j1 >" + dir + "/mpi.txt 2>&1";
  int s = std::system(cmd.c_str());
  std::string out = read_file(dir + "/mpi.txt");
  ASSERT_TRUE(WIFEXITED(s) && WEXITSTATUS(s) == 0) << out;
  EXPECT_NE(out.find("2 ranks x 1 job(s); run per rank:"), std::string::npos) << out;
  // Both ranks ran points: "run per rank: A, B" with B > 0.
  auto at = out.find("run per rank:");
  ASSERT_NE(at, std::string::npos);
  int a = 0, b = 0;
  ASSERT_EQ(std::sscanf(out.c_str() + at, "run per rank: %d, %d", &a, &b), 2) << out;
  EXPECT_EQ(a + b, 60);
  EXPECT_GT(b, 0) << out;
  testing::expect_same_sweep_results(dir + "/seq.h5", dir + "/mpi.h5");
}

}  // namespace
}  // namespace orrery

namespace orrery {
namespace {

// Under mpirun, nohup or Slurm stderr is a file: progress comes as whole lines with points
// done / total and an ETA, the last one saying every point is done; -q prints none.
TEST(SweepRun, ProgressLinesWhenStderrIsNotATerminal) {
  NEED_BINARY();
  auto dir = make_temp_dir("sweep_run");
  write_file(dir + "/s.yaml", testing::kSmallSweepScenario);
  Ran r = run(dir, "sweep " + dir + "/s.yaml -o " + dir + "/out.h5 -j1 --progress-interval 0");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out.find('\r'), std::string::npos) << "no in-place redraws in a log";
  EXPECT_NE(r.out.find("sweep: 12/12 done, 0 failed, 0 running, ETA 0:00"), std::string::npos)
      << r.out;
  // At interval 0 a line for every count the sweep reached, each once.
  int lines = 0;
  for (size_t at = r.out.find("sweep: "); at != std::string::npos;
       at = r.out.find("sweep: ", at + 1))
    if (at == 0 || r.out[at - 1] == '\n') ++lines;
  EXPECT_GE(lines, 2) << r.out;
  EXPECT_LE(lines, 13) << r.out;
  Ran quiet = run(dir, "sweep " + dir + "/s.yaml -q --fresh -o " + dir + "/q.h5 -j1");
  ASSERT_EQ(quiet.status, 0) << quiet.out;
  EXPECT_EQ(quiet.out.find("sweep: "), std::string::npos) << quiet.out;
}

}  // namespace
}  // namespace orrery
