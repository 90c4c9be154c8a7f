// Inputs that used to crash, or to succeed with a wrong answer (issue 36): each is now refused
// with exit status 2 and a message naming the file or option and what was expected, or gives
// the right answer.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

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
    write_file(dir + "/s.yaml", "platform: {xml: p.xml, gpus: [g0, g1]}\n"
                                "workload: {type: synthetic-dp, layers: 2, gradient_bytes: 64MB}\n");
    for (const char* command : {"validate", "run -q"}) {
      const auto r = run_shell(testing::orrery_bin() + " " + command + " " + dir + "/s.yaml");
      EXPECT_EQ(r.status, 2) << command << "\n" << r.output;
      EXPECT_NE(r.output.find("p.xml: no route from host \"g0\" to host \"g1\""),
                std::string::npos)
          << command << "\n" << r.output;
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
  for (const char* set : {"workload.seq_len=0", "workload.global_batch=0",
                          "workload.micro_batch=0", "workload.seq_len=-4"}) {
    const std::string e = input_error_of([&] { load_scenario(dir + "/s.yaml", {set}); });
    const std::string key = std::string(set).substr(0, std::string(set).find('='));
    EXPECT_NE(e.find(key), std::string::npos) << set << ": " << e;
    EXPECT_NE(e.find("must be at least 1"), std::string::npos) << set << ": " << e;
  }
  EXPECT_EQ(input_error_of([&] { load_scenario(dir + "/s.yaml"); }), "(no InputError)");
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
  const auto r = run_shell(testing::orrery_bin() + " sweep " + dir + "/s.yaml --point -1 -o " +
                           dir + "/p.h5");
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
  const auto r = run_shell(testing::orrery_bin() + " plan " + dir + "/p.yaml -o " + dir +
                           "/out.h5");
  ASSERT_EQ(r.status, 0) << r.output;  // before: no price for the preset's A100
  const RunRecord run = read_results_h5(dir + "/out.h5").runs.at(0);
  EXPECT_NEAR(std::stod(run.params.at("plan.cost_per_iteration")),
              8 * run.result.makespan / 3600 * 3, 1e-12);
}

}  // namespace
}  // namespace orrery
