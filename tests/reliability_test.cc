// Inputs that used to crash, or to succeed with a wrong answer (issue 36): each is now refused
// with exit status 2 and a message naming the file or option and what was expected, or gives
// the right answer.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "common/errors.h"
#include "results/h5_store.h"
#include "scenario/scenario.h"
#include "tests/test_util.h"

namespace fs = std::filesystem;

namespace orrery {
namespace {

using testing::input_error_of;
using testing::make_temp_dir;
using testing::read_file;
using testing::run_shell;
using testing::write_file;

#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

#define NEED_BINARY() \
  if (testing::orrery_bin().empty()) GTEST_SKIP() << "ORRERY_BIN not set (run through ctest)"

// Two hosts and a link, no route between them.
std::string two_hosts(const std::string& routing) {
  return R"(<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="z" routing=")" +
         routing + R"(">
    <host id="g0" speed="1Tf"/>
    <host id="g1" speed="1Tf"/>
    <link id="l0" bandwidth="10GBps" latency="1us"/>
  </zone>
</platform>
)";
}

// SimGrid 3.32 crashed looking up the missing route in a Dijkstra zone (SIGSEGV), and gave an
// empty one in a Full zone, over which all-reduces cost nothing: both are the user's error, in
// `orrery validate` as in `orrery run`.
TEST(Reliability, NoRouteBetweenGpusOfAnXmlPlatformIsAnError) {
  NEED_BINARY();
  const std::string dir = make_temp_dir("reliability");
  for (const char* routing : {"Dijkstra", "Full", "Floyd"}) {
    SCOPED_TRACE(routing);
    write_file(dir + "/p.xml", two_hosts(routing));
    write_file(dir + "/s.yaml",
               "platform: {xml: p.xml, gpus: [g0, g1]}\n"
               "workload: {type: synthetic-dp, layers: 2, gradient_bytes: 64MB}\n");
    for (const char* command : {"validate", "run -q"}) {
      const auto r = run_shell(testing::orrery_bin() + " " + command + " " + dir + "/s.yaml");
      EXPECT_EQ(r.status, 2) << command << "\n" << r.output;
      EXPECT_NE(r.output.find("p.xml: no route from host \"g0\" to host \"g1\""), std::string::npos)
          << command << "\n"
          << r.output;
    }
  }
  // With the route declared, both run.
  write_file(dir + "/p.xml",
             std::string(two_hosts("Full"))
                 .insert(two_hosts("Full").find("  </zone>"),
                         "    <route src=\"g0\" dst=\"g1\"><link_ctn id=\"l0\"/></route>\n"));
  const auto ok = run_shell(testing::orrery_bin() + " run -q " + dir + "/s.yaml");
  EXPECT_EQ(ok.status, 0) << ok.output;
}

// Values that used to be read as "left out": 0 tokens per sequence, 0 sequences per batch.
TEST(Reliability, ZeroSequenceOrBatchIsRefusedNotReplacedByADefault) {
  const std::string dir = make_temp_dir("reliability");
  const std::string base =
      "platform: {preset: dgx-a100, servers: 1}\n"
      "workload: {type: llm, model: llama2_7b, seq_len: 2048, global_batch: 16}\n"
      "strategy: {tp: 2, pp: 2}\n";
  write_file(dir + "/s.yaml", base);
  for (const char* set : {"workload.seq_len=0", "workload.global_batch=0", "workload.micro_batch=0",
                          "workload.seq_len=-4"}) {
    const std::string e = input_error_of([&] { load_scenario(dir + "/s.yaml", {set}); });
    const std::string key = std::string(set).substr(0, std::string(set).find('='));
    EXPECT_NE(e.find(key), std::string::npos) << set << ": " << e;
    EXPECT_NE(e.find("must be at least 1"), std::string::npos) << set << ": " << e;
  }
  EXPECT_EQ(input_error_of([&] { load_scenario(dir + "/s.yaml"); }), "(no InputError)");
}

// Plan errors found after reading (a batch that does not divide, degrees that do not fit the
// GPUs, a capacity factor out of range) used to name the file alone, and put global_batch
// under "strategy": they name the line and the key where it was written.
TEST(Reliability, PlanErrorsNameTheLineAndTheSectionOfTheirKey) {
  const std::string dir = make_temp_dir("reliability");
  write_file(dir + "/s.yaml",
             "platform: {preset: dgx-a100, servers: 1}\n"
             "workload:\n"
             "  type: llm\n"
             "  model: llama2_7b\n"
             "  seq_len: 1024\n"
             "  global_batch: 3\n"
             "  micro_batch: 2\n"
             "strategy:\n"
             "  tp: 4\n"
             "  pp: 2\n"
             "  tp_comm_overlap: true\n");
  const std::string path = dir + "/s.yaml";
  auto error = [&](std::vector<std::string> sets) {
    return input_error_of([&] { load_scenario(path, sets); });
  };
  EXPECT_HAS(error({}), path + ":6: workload.global_batch: 3 sequences are not a");
  EXPECT_HAS(error({"strategy.tp=3"}),
             path + " (--set): strategy.tp: tp x pp x cp = 6 must divide the 8 GPUs");
  EXPECT_HAS(error({"workload.global_batch=4"}),
             path + ":11: strategy.tp_comm_overlap: needs sequence_parallel");
  EXPECT_HAS(error({"workload.global_batch=4", "strategy.capacity_factor=100"}),
             " (--set): strategy.capacity_factor: 100 is outside the accepted range, "
             "above 0 and at most 64");
}

TEST(Reliability, LlmMemoryRefusesZeroSequenceAndInfiniteReserve) {
  NEED_BINARY();
  const std::string bin = testing::orrery_bin() + " llm memory llama2_7b --tp 8 ";
  for (const char* args : {"--seq 0", "--global-batch 0", "--micro-batch 0", "--reserved inf",
                           "--reserved nan", "--reserved -1"}) {
    const auto r = run_shell(bin + args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.output;
    const std::string option = std::string(args).substr(0, std::string(args).find(' '));
    EXPECT_NE(r.output.find(option), std::string::npos) << args << "\n" << r.output;
    EXPECT_EQ(r.output.find("inf GiB"), std::string::npos) << r.output;
  }
}

// A job mix's start times need units, as a job's own start does.
TEST(Reliability, JobMixStartNeedsItsUnit) {
  const std::string dir = make_temp_dir("reliability");
  auto scenario = [&](const std::string& start) {
    write_file(dir + "/s.yaml",
               "platform: {preset: ethernet-cluster, servers: 1}\n"
               "job_mix:\n  seed: 1\n  types:\n    - {name: a, gpus: 2, start: " +
                   start + ", workload: {type: synthetic-dp, layers: 1}}\n");
    return input_error_of([&] { load_scenario(dir + "/s.yaml"); });
  };
  for (const char* bare : {"[0, 5]", "5", "[1, 2ms]"}) {
    const std::string e = scenario(bare);
    EXPECT_NE(e.find("start"), std::string::npos) << bare << ": " << e;
    EXPECT_NE(e.find("unit"), std::string::npos) << bare << ": " << e;
  }
  EXPECT_EQ(scenario("[0, 5ms]"), "(no InputError)");
  EXPECT_EQ(scenario("0"), "(no InputError)");
}

// A key of gpu_speeds that is a list was an internal error (yaml-cpp's bad conversion).
TEST(Reliability, GpuSpeedsKeysMustBeHostNames) {
  const std::string dir = make_temp_dir("reliability");
  for (const char* speeds : {"{[a, b]: 0.5}", "{{a: 1}: 0.5}"}) {
    write_file(dir + "/s.yaml", std::string("platform: {preset: pcie-server}\n"
                                            "workload: {type: synthetic-dp}\ngpu_speeds: ") +
                                    speeds + "\n");
    const std::string e = input_error_of([&] { load_scenario(dir + "/s.yaml"); });
    EXPECT_NE(e.find("gpu_speeds: expected GPU host names as keys"), std::string::npos)
        << speeds << ": " << e;
  }
}

// Output paths: a path given with --set is the one used; one file cannot be results and trace.
TEST(Reliability, OutputPathsAreTheOnesAskedFor) {
  NEED_BINARY();
  const std::string dir = make_temp_dir("reliability");
  write_file(dir + "/s.yaml", "platform: {preset: pcie-server}\nworkload: {type: synthetic-dp}\n");
  const std::string run = "cd " + dir + " && " + testing::orrery_bin() + " run -q s.yaml ";
  auto r = run_shell(run + "--set output.file=mine.h5");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(fs::exists(dir + "/mine.h5"));
  EXPECT_FALSE(fs::exists(dir + "/mine--output.file=mine.h5.h5"));
  r = run_shell(run + "-o same.x --trace same.x");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("both \"same.x\""), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir + "/same.x"));
  r = run_shell(run + "-o ./sub/../same.x --trace same.x");
  EXPECT_EQ(r.status, 2) << r.output;
}

// --point -1 was taken for "no --point" and ran the whole sweep.
TEST(Reliability, NegativePointIsOutOfRange) {
  NEED_BINARY();
  const std::string dir = make_temp_dir("reliability");
  write_file(dir + "/s.yaml", testing::kSmallSweepScenario);
  const auto r =
      run_shell(testing::orrery_bin() + " sweep " + dir + "/s.yaml --point -1 -o " + dir + "/p.h5");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("--point -1: the sweep has points 0 to 11"), std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(dir + "/p.h5"));
}

// rank_by cost prices the GPU a point simulates: the scenario's `device`, not the preset's.
TEST(Reliability, PlanPricesTheDeviceItSimulates) {
  NEED_BINARY();
  const std::string dir = make_temp_dir("reliability");
  write_file(dir + "/p.yaml", R"(name: priced
platform: {preset: dgx-a100, servers: 1}
device: H100-SXM5
workload: {type: llm, model: llama2_7b, seq_len: 512, global_batch: 8}
plan:
  search: {tp: [8], pp: [1], micro_batch: [1], zero: [1], recompute: [none]}
  rank_by: cost
  prices: {gpu_hour: {H100-SXM5: 3}}
)");
  const auto r =
      run_shell(testing::orrery_bin() + " plan " + dir + "/p.yaml -o " + dir + "/out.h5");
  ASSERT_EQ(r.status, 0) << r.output;  // before: no price for the preset's A100
  const RunRecord run = read_results_h5(dir + "/out.h5").runs.at(0);
  EXPECT_NEAR(std::stod(run.params.at("plan.cost_per_iteration")),
              8 * run.result.makespan / 3600 * 3, 1e-12);
}

}  // namespace
}  // namespace orrery

namespace orrery {
namespace {

// One rule for every writer (common/atomic_file.h): never the command's own input, never a file
// of another kind that Orrery did not write, never a device node, and nothing while a running
// sweep holds the output's lock, through whatever link names it.
class Writers : public ::testing::Test {
 protected:
  void SetUp() override {
    if (testing::orrery_bin().empty()) GTEST_SKIP() << "ORRERY_BIN not set (run through ctest)";
    dir_ = make_temp_dir("writers");
    write_file(dir_ + "/s.yaml",
               "platform: {preset: pcie-server}\nworkload: {type: synthetic-dp}\n");
    ASSERT_EQ(sh("run -q s.yaml -o r.h5").status, 0);
  }
  testing::ShellResult sh(const std::string& args) {
    return run_shell("cd " + dir_ + " && " + testing::orrery_bin() + " " + args);
  }
  void expect_refused(const std::string& args, const std::string& file, const std::string& why) {
    const std::string before = read_file(dir_ + "/" + file);
    const auto r = sh(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find(why), std::string::npos) << args << "\n" << r.output;
    EXPECT_EQ(read_file(dir_ + "/" + file), before) << args << ": " << file << " changed";
  }
  std::string dir_;
};

TEST_F(Writers, NeverTheCommandsOwnInput) {
  const std::string same = "is the input";
  expect_refused("report r.h5 --csv r.h5", "r.h5", same);
  write_file(dir_ + "/ops.csv", "op,B,M,N,K\nmatmul,1,64,64,64\n");
  expect_refused("cost --csv ops.csv --device A100-SXM4-80GB -o ops.csv", "ops.csv", same);
  write_file(dir_ + "/p.csv", "device,op,time_s\n");
  expect_refused("profile import p.csv -o p.csv", "p.csv", same);
  // Through a link too.
  ASSERT_EQ(run_shell("ln -s r.h5 " + dir_ + "/link.h5").status, 0);
  expect_refused("report r.h5 --csv link.h5", "r.h5", same);
}

TEST_F(Writers, OnlyFilesOfTheirOwnKind) {
  write_file(dir_ + "/mine.txt", "someone's notes\n");
  const std::string foreign = "refusing to replace it: it is not a file this command writes";
  expect_refused("report r.h5 --csv mine.txt", "mine.txt", foreign);
  expect_refused("platform export pcie-server -o mine.txt", "mine.txt", foreign);
  expect_refused("bench collective all_reduce --platform pcie-server -b 8 -e 64 -o mine.txt",
                 "mine.txt", foreign);
  write_file(dir_ + "/ops.csv", "op,B,M,N,K\nmatmul,1,64,64,64\n");
  expect_refused("cost --csv ops.csv --device A100-SXM4-80GB -o mine.txt", "mine.txt", foreign);
  expect_refused("workload export resnet50 -o mine.txt", "mine.txt", foreign);
  expect_refused("estimator train " +
                     testing::source_path("models/profiles/cpu-intel-xeon-processor-1t.csv") +
                     " --budget 1 -o mine.txt",
                 "mine.txt", foreign);
  // Their own earlier output they replace.
  for (const char* again :
       {"report r.h5 --csv r.csv", "platform export pcie-server -o p.xml",
        "bench collective all_reduce --platform pcie-server -b 8 -e 64 -o b.csv",
        "bench collective all_reduce --platform pcie-server -b 8 -e 64 -o b.h5",
        "cost --csv ops.csv --device A100-SXM4-80GB -o priced.csv",
        "workload export resnet50 -o model.json"}) {
    ASSERT_EQ(sh(again).status, 0) << again;
    const auto r = sh(again);
    EXPECT_EQ(r.status, 0) << again << "\n" << r.output;
  }
}

TEST_F(Writers, NeverADeviceNode) {
  if (geteuid() != 0) GTEST_SKIP() << "mknod needs root";
  ASSERT_EQ(run_shell("mknod " + dir_ + "/n c 1 3").status, 0);
  write_file(dir_ + "/sw.yaml", testing::kSmallSweepScenario);
  for (const char* args :
       {"run -q s.yaml -o n", "run -q s.yaml -o n --force", "sweep -q sw.yaml -o n --fresh",
        "report r.h5 --csv n", "platform export pcie-server -o n"}) {
    const auto r = sh(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.output;
    struct stat st;
    ASSERT_EQ(::stat((dir_ + "/n").c_str(), &st), 0);
    EXPECT_TRUE(S_ISCHR(st.st_mode)) << args << " replaced the device node";
  }
}

// A sweep holds its output's lock while it runs: `run -o`, `sweep --point -o` and a second sweep
// through a symbolic link all refuse it.
TEST_F(Writers, ARunningSweepsLockHoldsForEveryWriter) {
  write_file(dir_ + "/sw.yaml", testing::kSmallSweepScenario);
  const pid_t pid = fork();
  if (pid == 0) {
    ::setenv("ORRERY_SWEEP_TEST_HOLD_FROM", "0", 1);
    const std::string cmd = "cd " + dir_ + " && exec " + testing::orrery_bin() +
                            " sweep -q sw.yaml -o out.h5 -j1 >/dev/null 2>&1";
    execl("/bin/sh", "sh", "-c", cmd.c_str(), nullptr);
    _exit(127);
  }
  for (int i = 0; i < 500 && !fs::exists(dir_ + "/out.h5.lock"); ++i) ::usleep(10000);
  ASSERT_TRUE(fs::exists(dir_ + "/out.h5.lock"));
  ASSERT_EQ(run_shell("ln -s out.h5 " + dir_ + "/other.h5").status, 0);
  for (const char* args :
       {"run -q s.yaml -o out.h5", "run -q s.yaml -o other.h5 --force",
        "sweep -q sw.yaml --point 0 -o out.h5", "sweep -q sw.yaml -o other.h5"}) {
    const auto r = sh(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find("another Orrery process is writing this output"), std::string::npos)
        << args << "\n"
        << r.output;
  }
  ::kill(pid, SIGINT);
  int status = 0;
  ::waitpid(pid, &status, 0);
}

// A temp file a killed writer left ("<file>.tmp.<pid>" of a process that is gone) is removed by
// the next write of the file; one of a live process is not.
TEST_F(Writers, TempFilesOfDeadWritersAreRemoved) {
  write_file(dir_ + "/r.h5.tmp.999999999", "half a file");
  const std::string live = dir_ + "/r.h5.tmp." + std::to_string(getpid());
  write_file(live, "being written");
  ASSERT_EQ(sh("run -q s.yaml -o r.h5").status, 0);
  EXPECT_FALSE(fs::exists(dir_ + "/r.h5.tmp.999999999"));
  EXPECT_TRUE(fs::exists(live));
}

}  // namespace
}  // namespace orrery

namespace orrery {
namespace {

// Anchors each repeating the one before nine times, ten deep: 9^10 values in a page of text.
// The walk that checks keys stops at a million values instead of taking minutes.
TEST(Reliability, YamlAliasBombIsRefusedQuickly) {
  const std::string dir = make_temp_dir("reliability");
  std::string text = "x-anchors:\n  a0: &a0 [x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 10; ++i) {
    text += "  a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 9; ++k) text += (k ? ", *a" : "*a") + std::to_string(i - 1);
    text += "]\n";
  }
  for (const char* where : {"description: *a9\n", "workload: {type: synthetic-dp, x: *a9}\n"}) {
    write_file(dir + "/s.yaml", text + "platform: {preset: pcie-server}\n" + where);
    const std::string e = input_error_of([&] { load_scenario(dir + "/s.yaml"); });
    EXPECT_NE(e.find("expands to more than 1000000 values"), std::string::npos) << e;
    EXPECT_NE(e.find("alias"), std::string::npos) << e;
  }
  // Anchors used as intended pass.
  write_file(dir + "/ok.yaml",
             "x: &w {type: synthetic-dp, layers: 2}\n"
             "platform: {preset: pcie-server}\nworkload: *w\n");
  EXPECT_NE(input_error_of([&] { load_scenario(dir + "/ok.yaml"); }).find("\"x\""),
            std::string::npos);  // refused for the unknown key only, as before
}

// Names go into result files, whose readers decode UTF-8: invalid and overlong bytes are refused
// where they are, with the line and column.
TEST(Reliability, ScenarioTextMustBeUtf8) {
  const std::string dir = make_temp_dir("reliability");
  const std::string head = "platform: {preset: pcie-server}\nworkload: {type: synthetic-dp}\n";
  for (const std::string& name :
       {std::string("n\xC0\xAFme"), std::string("bad\xFF"), std::string("cut\xE2\x82"),
        std::string("sur\xED\xA0\x80"), std::string("over\xF0\x82\x82\xAC")}) {
    write_file(dir + "/s.yaml", head + "name: \"" + name + "\"\n");
    const std::string e = input_error_of([&] { load_scenario(dir + "/s.yaml"); });
    EXPECT_NE(e.find("s.yaml:3:"), std::string::npos) << e;
    EXPECT_NE(e.find("not valid UTF-8"), std::string::npos) << e;
  }
  write_file(dir + "/s.yaml", head + "name: \"caf\xC3\xA9 \xE2\x9C\x93 \xF0\x9F\x9A\x80\"\n");
  EXPECT_EQ(input_error_of([&] { load_scenario(dir + "/s.yaml"); }), "(no InputError)");
}

// A job's iterations are copies of its ops: a million of them is refused with the estimate.
TEST(Reliability, JobsWithHugeIterationCountsAreRefusedUpFront) {
  const std::string dir = make_temp_dir("reliability");
  write_file(dir + "/s.yaml",
             "platform: {preset: ethernet-cluster, servers: 1}\n"
             "jobs:\n  - {name: a, gpus: 8, iterations: 1000000, workload: {type: model, "
             "model: resnet50, batch: 8}, strategy: {type: allreduce}}\n");
  const std::string e = input_error_of([&] { load_scenario(dir + "/s.yaml"); });
  EXPECT_NE(e.find("composing the jobs would need about"), std::string::npos) << e;
  EXPECT_NE(e.find("--max-ops"), std::string::npos) << e;
}

}  // namespace
}  // namespace orrery

namespace orrery {
namespace {

// A million points took minutes of silence before --dry-run printed anything: refused at once,
// with what listing them would take and the option that lifts the limit.
TEST(Reliability, SweepsOfTooManyPointsAreRefusedBeforeTheyAreListed) {
  if (testing::orrery_bin().empty()) GTEST_SKIP() << "ORRERY_BIN not set (run through ctest)";
  const std::string dir = make_temp_dir("reliability");
  std::string layers, times;
  for (int i = 1; i <= 1000; ++i) {
    layers += (i > 1 ? ", " : "") + std::to_string(i);
    times += (i > 1 ? ", " : "") + std::to_string(i) + "us";
  }
  write_file(dir + "/s.yaml",
             "name: big\nplatform: {preset: pcie-server}\n"
             "workload: {type: synthetic-dp}\nsweep:\n  grid:\n"
             "    workload.layers: [" +
                 layers +
                 "]\n"
                 "    workload.forward_time: [" +
                 times + "]\n");
  const auto r = run_shell(testing::orrery_bin() + " sweep " + dir + "/s.yaml --dry-run");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("expands to 1e+06 points, over the limit of 100000"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("--max-points"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace orrery

namespace orrery {
namespace {

// Platforms whose size is written small: a SimGrid cluster's radical of 10^8 hosts, an
// ASTRA-sim FullyConnected dimension of 2,048 NPUs (2 million links to route over). Refused
// with the count before SimGrid or the router starts.
TEST(Reliability, PlatformsWrittenSmallButHugeAreRefusedUpFront) {
  const std::string dir = make_temp_dir("reliability");
  write_file(dir + "/c.xml", R"(<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <cluster id="c" prefix="g" suffix="" radical="0-99999999" speed="1Tf" bw="10GBps" lat="1us"
           bb_bw="100GBps" bb_lat="1us"/>
</platform>
)");
  write_file(dir + "/c.yaml",
             "platform: {xml: c.xml, gpus: [g0, g1]}\n"
             "workload: {type: synthetic-dp, layers: 1}\n");
  // An XML platform is loaded by validate and run (SimGrid holds it), not by reading the scenario.
  if (!testing::orrery_bin().empty()) {
    const auto r = run_shell(testing::orrery_bin() + " validate " + dir + "/c.yaml");
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_NE(r.output.find("c.xml: loading this platform would need about"), std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("1e+08 hosts"), std::string::npos) << r.output;
  }
  // 100,000 hosts in a Full zone: SimGrid's table of every pair would need 160 GB.
  std::string full =
      "<?xml version='1.0'?>\n<platform version=\"4.1\">\n"
      "<zone id=\"z\" routing=\"Full\">\n";
  for (int i = 0; i < 100000; ++i)
    full += "<host id=\"h" + std::to_string(i) + "\" speed=\"1Gf\"/>\n";
  write_file(dir + "/f.xml", full + "</zone>\n</platform>\n");
  write_file(dir + "/f.yaml",
             "platform: {xml: f.xml, gpus: [h0, h1]}\n"
             "workload: {type: synthetic-dp, layers: 1}\n");
  if (!testing::orrery_bin().empty()) {
    const auto r = run_shell(testing::orrery_bin() + " validate " + dir + "/f.yaml");
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_NE(r.output.find("100000 hosts, a route table of every pair"), std::string::npos)
        << r.output;
  }
  std::string e;

  write_file(dir + "/fc.yml",
             "topology: [ FullyConnected ]\nnpus_count: [ 2048 ]\n"
             "bandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n");
  write_file(dir + "/fc.yaml",
             "platform: {astra_network: fc.yml}\n"
             "workload: {type: synthetic-dp, layers: 1}\n");
  e = input_error_of([&] { load_scenario(dir + "/fc.yaml"); });
  EXPECT_NE(e.find("fc.yml: building this network would need about 2.1e+06 links"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("Switch"), std::string::npos) << e;
}

}  // namespace
}  // namespace orrery

namespace orrery {
namespace {

// Profile rows are measurements: a time of 1e300 s, a negative count or a shape of 2^64
// elements is a damaged row, refused with the row and the column as a scenario value would be.
TEST(Reliability, ProfileRowsHoldTheRangesScenarioValuesDo) {
  if (testing::orrery_bin().empty()) GTEST_SKIP() << "ORRERY_BIN not set (run through ctest)";
  const std::string dir = make_temp_dir("reliability");
  const std::string head =
      "op,dtype,device,inputs,output,attrs,time_s,n,m,t_n_s,t_m_s,samples,"
      "stdev_s,source\n";
  const struct {
    const char* row;
    const char* why;
  } cases[] = {
      {"matmul,fp32,V100,16x256;256x256,16x256,,1e300,2,22,1e-3,1e-3,15,1e-6,x",
       "time_s: 1e+300 s is outside the accepted range"},
      {"matmul,fp32,V100,16x256;256x256,16x256,,1e-3,2,22,1e-3,1e-3,15,-1,x",
       "stdev_s: -1 s is outside the accepted range"},
      {"matmul,fp32,V100,16x256;256x256,16x256,,1e-3,-2,22,1e-3,1e-3,15,1e-6,x",
       "column n: must not be negative"},
      {"matmul,fp32,V100,16x256;256x256,16x256,,1e-3,2,22,1e-3,1e-3,-15,1e-6,x",
       "column samples: must not be negative"},
      {"matmul,fp32,V100,4294967296x4294967296;256x256,16x256,,1e-3,2,22,1e-3,1e-3,15,1e-6,x",
       "a shape of more than 1e15 elements"},
  };
  for (const auto& c : cases) {
    write_file(dir + "/p.csv", head + c.row + "\n");
    const auto r =
        run_shell(testing::orrery_bin() + " profile import " + dir + "/p.csv -o " + dir + "/p.h5");
    EXPECT_EQ(r.status, 2) << c.row << "\n" << r.output;
    EXPECT_NE(r.output.find("p.csv:2: "), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(c.why), std::string::npos) << c.why << "\n" << r.output;
    EXPECT_FALSE(fs::exists(dir + "/p.h5"));
  }
}

}  // namespace
}  // namespace orrery
