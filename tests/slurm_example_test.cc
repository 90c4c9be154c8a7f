// scripts/slurm/orrery-sweep.sbatch run with bash, without Slurm: the launcher is mpirun with 4
// ranks (ORRERY_LAUNCHER), as docs/cluster.md tells users to try it. A full run must give the
// file a single `orrery sweep` gives; a run stopped the way Slurm stops a job (SIGTERM to the
// launcher at preemption or scancel, USR1 to the batch shell before the time limit) must leave
// an incomplete file and a journal of the finished points, and running the script again must
// run only the rest and end with the same file. Comparisons cover everything but the
// wall-clock fields (wall_s of each run, created_by).
//
// The MPI cases run under the slurm_example_np4 ctest entry (CMakeLists.txt), which sets
// ORRERY_MPIEXEC. Where a sweep must be interrupted, ORRERY_SWEEP_TEST_HOLD_FROM=N keeps every
// point from N on sleeping (sweeps/point_runner.h), so the signal lands after exactly N points
// whatever the load of the machine: the test waits for N records in the journal, not for time.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

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

using testing::child_pids;
using testing::journal_points;
using testing::make_temp_dir;
using testing::read_file;
using testing::source_path;
using testing::write_file;

std::string bin() { return testing::orrery_bin(); }

std::string script() { return source_path("scripts/slurm/orrery-sweep.sbatch"); }

// The launcher of the local example; as root Open MPI wants --allow-run-as-root.
std::string mpi_launcher() {
  const char* mpiexec = std::getenv("ORRERY_MPIEXEC");
  std::string root = geteuid() == 0 ? " --allow-run-as-root" : "";
  return std::string(mpiexec ? mpiexec : "") + root + " --oversubscribe -np 4";
}

// The environment every run of the script gets: no Slurm job, one point at a time per rank,
// and (for mpirun) 10 s instead of 1 between mpirun's SIGTERM and SIGKILL to the ranks, so that
// rank 0 has time to write the file on a loaded machine (docs/sweeps.md, "Stopping an MPI
// sweep"). mpirun waits that long whether or not the ranks are gone.
std::string base_env(const std::string& launcher) {
  return "env -u SLURM_JOB_ID -u SLURM_CPUS_PER_TASK -u SLURM_RESTART_COUNT ORRERY_BIN='" + bin() +
         "' ORRERY_LAUNCHER='" + launcher +
         "' ORRERY_SWEEP_JOBS=1 OMPI_MCA_odls_base_sigkill_timeout=10 ";
}

struct Ran {
  int status = -1;  // exit status, or 128 + signal
  std::string out;
};

int status_of(int s) { return WIFEXITED(s) ? WEXITSTATUS(s) : 128 + WTERMSIG(s); }

// Runs the script in the foreground: `env` is a prefix of assignments, `args` its arguments.
Ran run_script(const std::string& dir, const std::string& env, const std::string& args) {
  std::string log = dir + "/log.txt";
  std::string cmd = env + " bash " + script() + " " + args + " >" + log + " 2>&1 </dev/null";
  Ran r;
  r.status = status_of(std::system(cmd.c_str()));
  r.out = read_file(log);
  return r;
}

// Starts the script in the background, its output in dir/bg.txt; returns the pid of its bash.
pid_t start_script(const std::string& dir, const std::string& env, const std::string& args) {
  pid_t pid = fork();
  if (pid == 0) {
    int fd = ::open((dir + "/bg.txt").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    std::string cmd = "exec " + env + " bash " + script() + " " + args + " </dev/null";
    execl("/bin/sh", "sh", "-c", cmd.c_str(), nullptr);
    _exit(127);
  }
  return pid;
}

int wait_status(pid_t pid) {
  int s = 0;
  waitpid(pid, &s, 0);
  return status_of(s);
}

// Waits at most `seconds` for a process; -1 if it is still running then.
int wait_status_for(pid_t pid, int seconds) {
  for (int i = 0; i < seconds * 10; ++i) {
    int s = 0;
    if (waitpid(pid, &s, WNOHANG) == pid) return status_of(s);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return -1;
}

// A script started in the background. A stopped sweep ends within seconds (mpirun waits
// odls_base_sigkill_timeout twice): one that does not is a failure, not a hung test. One that
// a failed assertion leaves running gets SIGTERM, as from scancel, so that no held point sleeps
// on after the test.
struct Job {
  pid_t pid;
  ~Job() {
    if (pid <= 0 || ::kill(pid, SIGTERM) != 0) return;
    if (wait_status_for(pid, 120) < 0) {
      ::kill(pid, SIGKILL);
      wait_status(pid);
    }
  }
  int wait() {
    int status = wait_status_for(pid, 180);
    if (status < 0) {
      ADD_FAILURE() << "the script did not stop within 3 minutes of the signal";
      return -1;
    }
    pid = -1;
    return status;
  }
};

// Polls the journal until it holds `n` points; false after two minutes (mpirun starting four
// ranks on a busy machine takes seconds, not minutes).
bool wait_for_points(const std::string& journal, size_t n) {
  for (int i = 0; i < 1200; ++i) {
    if (journal_points(journal).size() >= n) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

// The one child of a process (the launcher the script started in the background), or -1.
pid_t only_child(pid_t parent) {
  std::vector<int> pids = child_pids(parent);
  return pids.size() == 1 ? pids[0] : -1;
}

// A run stopped by a signal: the script exits with the launcher's status, which is neither a
// success nor one of orrery's own (mpirun stopped by a signal exits 1 whatever its ranks
// return), and says so.
void expect_stopped(int status, const std::string& out) {
  EXPECT_TRUE(status != 0 && status != 2 && status != 3) << status << "\n" << out;
  EXPECT_NE(out.find("orrery-sweep: stopped with status " + std::to_string(status) +
                     "; run this again to resume"),
            std::string::npos)
      << out;
}

// Everything but wall_s and created_by.
// The single-process file every run of the script must end up equal to.
void write_reference(const std::string& dir) {
  write_file(dir + "/s.yaml", testing::kSmallSweepScenario);
  std::string cmd =
      bin() + " sweep " + dir + "/s.yaml -q -o " + dir + "/ref.h5 -j2 >" + dir + "/ref.txt 2>&1";
  ASSERT_EQ(status_of(std::system(cmd.c_str())), 0) << read_file(dir + "/ref.txt");
}

#define NEED_BINARY() \
  if (bin().empty()) GTEST_SKIP() << "ORRERY_BIN not set (run through ctest)"

#define NEED_MPI()                                                                     \
  NEED_BINARY();                                                                       \
  if (!std::getenv("ORRERY_MPIEXEC") || ::access(std::getenv("ORRERY_MPIEXEC"), X_OK)) \
  GTEST_SKIP() << "ORRERY_MPIEXEC not set or not there (the slurm_example_np4 ctest sets it)"

TEST(SlurmExample, UsageErrorsAreClearAndExitWithTheirStatus) {
  NEED_BINARY();
  auto dir = make_temp_dir("slurm");
  write_file(dir + "/s.yaml", testing::kSmallSweepScenario);
  Ran none = run_script(dir, base_env(""), "");
  EXPECT_EQ(none.status, 2) << none.out;
  EXPECT_NE(none.out.find("usage: orrery-sweep.sbatch SCENARIO OUT.h5"), std::string::npos)
      << none.out;
  Ran help = run_script(dir, base_env(""), "--help");
  EXPECT_EQ(help.status, 0) << help.out;
  EXPECT_NE(help.out.find("usage:"), std::string::npos) << help.out;
  Ran one = run_script(dir, base_env(""), dir + "/s.yaml");
  EXPECT_EQ(one.status, 2) << one.out;
  Ran missing = run_script(dir, base_env(""), dir + "/nope.yaml " + dir + "/out.h5");
  EXPECT_EQ(missing.status, 2) << missing.out;
  EXPECT_NE(missing.out.find("cannot read the scenario"), std::string::npos) << missing.out;
  Ran no_bin = run_script(dir, base_env("") + "ORRERY_BIN=" + dir + "/no-orrery",
                          dir + "/s.yaml " + dir + "/out.h5");
  EXPECT_EQ(no_bin.status, 127) << no_bin.out;
  EXPECT_NE(no_bin.out.find("no orrery binary at"), std::string::npos) << no_bin.out;
  // Without Slurm the default launcher, srun, is missing (when it is there, skip this check).
  if (std::system("command -v srun >/dev/null 2>&1") != 0) {
    Ran no_srun = run_script(dir, "env -u ORRERY_LAUNCHER ORRERY_BIN='" + bin() + "'",
                             dir + "/s.yaml " + dir + "/out.h5");
    EXPECT_EQ(no_srun.status, 127) << no_srun.out;
    EXPECT_NE(no_srun.out.find("launcher srun not found"), std::string::npos) << no_srun.out;
  }
  EXPECT_FALSE(std::filesystem::exists(dir + "/out.h5"));
}

// With an empty launcher the script runs one orrery process; orrery's status comes through.
TEST(SlurmExample, WithoutALauncherOrreryRunsAloneAndItsStatusComesThrough) {
  NEED_BINARY();
  auto dir = make_temp_dir("slurm");
  write_reference(dir);
  Ran r = run_script(dir, base_env(""), dir + "/s.yaml " + dir + "/out/s.h5");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("orrery-sweep: done: " + dir + "/out/s.h5"), std::string::npos) << r.out;
  testing::expect_same_sweep_results(dir + "/ref.h5", dir + "/out/s.h5");
  Ran failing = run_script(dir, base_env("") + "ORRERY_SWEEP_TEST_ABORT=3",
                           dir + "/s.yaml " + dir + "/f.h5 -j 2");
  EXPECT_EQ(failing.status, 3) << failing.out;
  EXPECT_NE(failing.out.find("(2 job(s))"), std::string::npos) << failing.out;  // -j 2 kept
  EXPECT_NE(failing.out.find("some points failed"), std::string::npos) << failing.out;
}

TEST(SlurmExampleMpi, FourRanksMatchOneProcessAndARerunRunsNothing) {
  NEED_MPI();
  auto dir = make_temp_dir("slurm_mpi");
  write_reference(dir);
  Ran r = run_script(dir, base_env(mpi_launcher()), dir + "/s.yaml " + dir + "/out.h5");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("12 run now (4 ranks x 1 job(s)"), std::string::npos) << r.out;
  testing::expect_same_sweep_results(dir + "/ref.h5", dir + "/out.h5");
  EXPECT_FALSE(std::filesystem::exists(dir + "/out.h5.journal"));
  // A job chained with --dependency=afterany after a job that finished: nothing left to run.
  Ran again = run_script(dir, base_env(mpi_launcher()), dir + "/s.yaml " + dir + "/out.h5");
  ASSERT_EQ(again.status, 0) << again.out;
  EXPECT_NE(again.out.find("0 run now, 12 already done"), std::string::npos) << again.out;
  testing::expect_same_sweep_results(dir + "/ref.h5", dir + "/out.h5");
}

// Preemption and scancel: Slurm sends SIGTERM to the job's processes, srun (here mpirun) among
// them. The launcher passes it to the ranks; rank 0 saves what is done.
TEST(SlurmExampleMpi, SigtermToTheLauncherLeavesAJournalAndTheRerunResumes) {
  NEED_MPI();
  auto dir = make_temp_dir("slurm_mpi");
  write_reference(dir);
  const std::string args = dir + "/s.yaml " + dir + "/out.h5";
  Job job{start_script(dir, base_env(mpi_launcher()) + "ORRERY_SWEEP_TEST_HOLD_FROM=5", args)};
  ASSERT_TRUE(wait_for_points(dir + "/out.h5.journal", 5)) << read_file(dir + "/bg.txt");
  pid_t launcher = only_child(job.pid);
  ASSERT_GT(launcher, 0) << read_file(dir + "/bg.txt");
  ASSERT_EQ(kill(launcher, SIGTERM), 0);
  int status = job.wait();
  std::string out = read_file(dir + "/bg.txt");
  expect_stopped(status, out);
  EXPECT_NE(out.find("interrupted by SIGTERM: 5 of 12 points done"), std::string::npos) << out;

  SweepFileStatus st = read_sweep_status(dir + "/out.h5");
  ASSERT_TRUE(st.present);
  EXPECT_FALSE(st.complete);
  EXPECT_EQ(st.points_done, 5);
  EXPECT_EQ(journal_points(dir + "/out.h5.journal"), (std::set<int64_t>{0, 1, 2, 3, 4}));

  // Resubmitted: only the 7 other points run.
  Ran r = run_script(dir, base_env(mpi_launcher()), args);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("7 run now, 5 already done (4 ranks"), std::string::npos) << r.out;
  testing::expect_same_sweep_results(dir + "/ref.h5", dir + "/out.h5");
  EXPECT_FALSE(std::filesystem::exists(dir + "/out.h5.journal"));
}

// The time limit: --signal=B:USR1@300 warns the batch shell, which stops the sweep and requeues
// the job (scontrol is a stub that records its arguments). Then scancel: SIGTERM to the batch
// shell stops the sweep without a requeue. The third run finishes the sweep.
TEST(SlurmExampleMpi, TimeLimitWarningRequeuesAndScancelDoesNot) {
  NEED_MPI();
  auto dir = make_temp_dir("slurm_mpi");
  write_reference(dir);
  write_file(dir + "/bin/scontrol", "#!/bin/sh\necho \"$@\" >>" + dir + "/scontrol.txt\n");
  ASSERT_EQ(::chmod((dir + "/bin/scontrol").c_str(), 0755), 0);
  const std::string slurm_env = base_env(mpi_launcher()) + "PATH=" + dir +
                                "/bin:" + std::getenv("PATH") + " SLURM_JOB_ID=4242 ";
  const std::string args = dir + "/s.yaml " + dir + "/out.h5";

  Job warned{start_script(dir, slurm_env + "ORRERY_SWEEP_TEST_HOLD_FROM=3", args)};
  ASSERT_TRUE(wait_for_points(dir + "/out.h5.journal", 3)) << read_file(dir + "/bg.txt");
  ASSERT_EQ(kill(warned.pid, SIGUSR1), 0);
  int status = warned.wait();
  std::string out = read_file(dir + "/bg.txt");
  expect_stopped(status, out);
  EXPECT_NE(out.find("time-limit warning (SIGUSR1)"), std::string::npos) << out;
  EXPECT_NE(out.find("interrupted by SIGTERM: 3 of 12 points done"), std::string::npos) << out;
  EXPECT_NE(out.find("requeueing job 4242"), std::string::npos) << out;
  EXPECT_EQ(read_file(dir + "/scontrol.txt"), "requeue 4242\n");
  EXPECT_EQ(read_sweep_status(dir + "/out.h5").points_done, 3);

  // The requeued job starts again, and is cancelled after 8 points.
  Job cancelled{
      start_script(dir, slurm_env + "SLURM_RESTART_COUNT=1 ORRERY_SWEEP_TEST_HOLD_FROM=8", args)};
  ASSERT_TRUE(wait_for_points(dir + "/out.h5.journal", 8)) << read_file(dir + "/bg.txt");
  ASSERT_EQ(kill(cancelled.pid, SIGTERM), 0);
  status = cancelled.wait();
  out = read_file(dir + "/bg.txt");
  expect_stopped(status, out);
  EXPECT_NE(out.find("(restart 1)"), std::string::npos) << out;
  EXPECT_NE(out.find("interrupted by SIGTERM: 8 of 12 points done"), std::string::npos) << out;
  EXPECT_EQ(out.find("requeueing"), std::string::npos) << out;
  EXPECT_EQ(read_file(dir + "/scontrol.txt"), "requeue 4242\n");  // no second requeue
  SweepFileStatus st = read_sweep_status(dir + "/out.h5");
  EXPECT_FALSE(st.complete);
  EXPECT_EQ(st.points_done, 8);

  Ran r = run_script(dir, slurm_env, args);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("4 run now, 8 already done"), std::string::npos) << r.out;
  testing::expect_same_sweep_results(dir + "/ref.h5", dir + "/out.h5");
}

}  // namespace
}  // namespace orrery
