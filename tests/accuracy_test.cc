// `orrery accuracy` (scenario/accuracy.h, cli/accuracy_command.cc): the published-measurement
// files, the signed errors and their groups by hand, bad files named with their line, and the
// docs' validation tables as the command prints them.
#include "scenario/accuracy.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "common/errors.h"
#include "scenario/error_band.h"
#include "scenario/scenario.h"
#include "scenario/scenario_run.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

using testing::make_temp_dir;
using testing::write_file;

const char* const kHeader =
    "case,date,kind,framework,gpu,gpus,scenario,set,metric,published,per_step\n";

std::string error_of(const std::string& dir) {
  try {
    read_published_cases(dir);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Accuracy, ReadsEveryFileWithItsSourceAndOverrides) {
  const std::string dir = make_temp_dir("acc");
  write_file(dir + "/b.csv", std::string("# source: Someone, A Paper,\n#   its Table 2\n") +
                                 kHeader +
                                 "\"x, y\",2024-01,llm,megatron-lm,H100,64,llm/a.yaml,"
                                 "strategy.tp=2; strategy.pp=4,iteration_s,2.5,\n");
  write_file(dir + "/a.csv", std::string("# source: README\n") + kHeader +
                                 "r1,2017-09,cnn,tensorflow1,P100,16,cnn/h.yaml,,samples_s,"
                                 "100,1024\n");
  write_file(dir + "/notes.txt", "not read");
  const auto cases = read_published_cases(dir);
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases[0].file, "a.csv");  // files in name order
  EXPECT_EQ(cases[0].per_step, 1024);
  EXPECT_EQ(cases[1].id, "x, y");
  EXPECT_EQ(cases[1].source, "Someone, A Paper, its Table 2");
  ASSERT_EQ(cases[1].overrides.size(), 2u);
  EXPECT_EQ(cases[1].overrides[1], "strategy.pp=4");
  EXPECT_EQ(cases[1].line, 4);
  EXPECT_EQ(cases[1].gpus, 64);
}

TEST(Accuracy, BadFilesNameTheFileLineAndColumn) {
  auto one = [](const std::string& body) {
    const std::string dir = make_temp_dir("acc");
    write_file(dir + "/s.csv", body);
    return error_of(dir);
  };
  const std::string src = "# source: x\n";
  EXPECT_NE(one(src + kHeader + "a,d,llm,f,H100,8,s.yaml,,iteration_s,-1,\n").find("s.csv:3"),
            std::string::npos);
  EXPECT_NE(one(src + kHeader + "a,d,llm,f,H100,8,s.yaml,,iteration_s,-1,\n").find("published"),
            std::string::npos);
  EXPECT_NE(one(src + kHeader + "a,d,llm,f,H100,8,s.yaml,,seconds,1,\n").find("metric"),
            std::string::npos);
  EXPECT_NE(one(src + kHeader + "a,d,llm,f,H100,8,s.yaml,,samples_s,1,\n").find("per_step"),
            std::string::npos);
  EXPECT_NE(one(src + kHeader + "a,d,llm,f,H100,8,s.yaml,tp2,iteration_s,1,\n").find("key=value"),
            std::string::npos);
  EXPECT_NE(one(src + kHeader + "a,d,llm,f,H100,8\n").find("fields"), std::string::npos);
  EXPECT_NE(one(src + "case,scenario\na,b\n").find("\"date\""), std::string::npos);
  EXPECT_NE(one(kHeader + std::string("a,d,llm,f,H100,8,s.yaml,,iteration_s,1,\n")).find("source"),
            std::string::npos);
  EXPECT_NE(one(src + kHeader + "a,d,llm,f,H100,8,s.yaml,,iteration_s,1,\n" +
                "a,d,llm,f,H100,8,s.yaml,,iteration_s,2,\n")
                .find("named already at"),
            std::string::npos);
  EXPECT_NE(one(src + kHeader + "\"a,d,llm\n").find("quote"), std::string::npos);
  EXPECT_NE(error_of("/nonexistent/published").find("not a directory"), std::string::npos);
}

// Kernels and collectives: the scenario column is the command a user would run, checked against
// the metric.
TEST(Accuracy, CommandCasesNameTheirCommandAndMetric) {
  const std::string dir = make_temp_dir("acc");
  write_file(dir + "/k.csv",
             std::string("# source: x\n") + kHeader +
                 "g,2025,kernel,cublas,H100,1,orrery cost linear B=1 M=8 N=8 K=8 --device "
                 "H100-SXM5,,matmul_tflops,700,\n"
                 "c,2024,collective,torch-distributed,H100,8,orrery  bench collective allreduce "
                 "--platform "
                 "dgx-h100 --loop pytorch -b 8 -e 8,,collective_us,40,\n");
  const auto cases = read_published_cases(dir);
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases[0].command, (std::vector<std::string>{"cost", "linear", "B=1", "M=8", "N=8",
                                                        "K=8", "--device", "H100-SXM5"}));
  const CaseCommand k = case_command(cases[0]);
  EXPECT_EQ(k.args.back(), "--json");
  EXPECT_EQ(k.kind, "kernel");
  EXPECT_EQ(k.framework, "cublas");
  const CaseCommand c = case_command(cases[1]);
  EXPECT_EQ(c.args.front(), "bench");
  EXPECT_EQ(c.args.back(), "--csv");
  EXPECT_EQ(c.kind, "collective");
  EXPECT_EQ(c.framework, "torch-distributed");  // --loop pytorch: PyTorch's host work per call

  auto one = [](const std::string& row) {
    const std::string d = make_temp_dir("acc");
    write_file(d + "/s.csv", std::string("# source: x\n") + kHeader + row);
    return error_of(d);
  };
  // A collective metric on a scenario, a cost command with a collective metric, overrides on a
  // command.
  EXPECT_NE(one("a,d,collective,n,H100,8,s.yaml,,busbw_gbs,1,\n").find("orrery bench collective"),
            std::string::npos);
  EXPECT_NE(one("a,d,kernel,c,H100,1,orrery cost linear M=1,,busbw_gbs,1,\n").find("expected"),
            std::string::npos);
  EXPECT_NE(one("a,d,kernel,c,H100,1,orrery cost linear M=1,x=1,kernel_us,1,\n").find("set "),
            std::string::npos);
}

TEST(Accuracy, CommandOutputGivesThePublishedMetric) {
  PublishedCase busbw;
  busbw.metric = "busbw_gbs";
  busbw.published = 400;
  const std::string csv =
      "size_bytes,count,type,redop,root,time_us,algbw_GBps,busbw_GBps,algorithm,protocol,"
      "channels\n"
      "8,2,float,sum,-1,15.74,0.0005,0.0009,ring,LL,1\n"
      "1073741824,268435456,float,sum,-1,3974.59,270.151,472.765,nvls,Simple,16\n";
  std::string detail;
  // The last size's bus bandwidth; 472.765 against 400 published is 18.2% too fast.
  EXPECT_DOUBLE_EQ(command_prediction(busbw, csv, &detail), 472.765);
  EXPECT_EQ(detail, "nvls Simple");
  EXPECT_NEAR(case_error(busbw, 472.765), 472.765 / 400 - 1, 1e-12);
  PublishedCase time = busbw;
  time.metric = "collective_us";
  time.published = 5000;
  EXPECT_DOUBLE_EQ(command_prediction(time, csv, nullptr), 3974.59);
  // A time: the measured 5000 us took 5000 / 3974.59 - 1 longer than predicted.
  EXPECT_NEAR(case_error(time, 3974.59), 5000 / 3974.59 - 1, 1e-12);
  PublishedCase tflops;
  tflops.metric = "matmul_tflops";
  const std::string json =
      "{\"op\": \"linear\", \"seconds\": 0.0001, \"flops\": 8e10, \"kernel\": \"gemm\", "
      "\"tile\": \"256x128\"}\n";
  EXPECT_NEAR(command_prediction(tflops, json, &detail), 800, 1e-9);  // 8e10 / 1e-4 / 1e12
  EXPECT_EQ(detail, "gemm 256x128");
  tflops.metric = "kernel_us";
  EXPECT_NEAR(command_prediction(tflops, json, nullptr), 100, 1e-9);
  EXPECT_THROW(command_prediction(tflops, "{}", nullptr), InputError);
  EXPECT_THROW(command_prediction(busbw, "size_bytes,time_us\n", nullptr), InputError);
}

TEST(Accuracy, ErrorsArePositiveWhenTheModelIsTooFast) {
  PublishedCase time;
  time.metric = "iteration_s";
  time.published = 1.10;
  // 0.95 s predicted for 1.10 s published: the measured run was 1.10 / 0.95 - 1 = 15.8% slower.
  EXPECT_NEAR(case_error(time, case_prediction(time, 0.95, 0)), 1.10 / 0.95 - 1, 1e-12);
  PublishedCase rate;
  rate.metric = "tokens_per_gpu_s";
  rate.published = 1602;
  EXPECT_NEAR(case_error(rate, case_prediction(rate, 9, 1364)), 1364.0 / 1602 - 1, 1e-12);
  PublishedCase samples;
  samples.metric = "samples_s";
  samples.published = 74.7;
  samples.per_step = 1024;
  // 1,024 images in 13.7 s: 74.7 images/s, no error.
  EXPECT_NEAR(case_prediction(samples, 1024 / 74.7, 0), 74.7, 1e-9);
  EXPECT_NEAR(case_error(samples, 74.7 * 1.5), 0.5, 1e-12);
}

TEST(Accuracy, GenerationsAndScaleBands) {
  EXPECT_EQ(gpu_generation("A100"), "Ampere");
  EXPECT_EQ(gpu_generation("H100"), "Hopper");
  EXPECT_EQ(gpu_generation("GB200"), "Blackwell");
  EXPECT_EQ(gpu_generation("B200"), "Blackwell");
  EXPECT_EQ(gpu_generation("V100"), "Volta");
  EXPECT_EQ(gpu_generation("P100"), "Pascal");
  EXPECT_EQ(gpu_generation("L40S"), "Ada");
  EXPECT_EQ(gpu_generation("MI300X"), "other");
  EXPECT_EQ(scale_band(1), "1");
  EXPECT_EQ(scale_band(8), "2-8");
  EXPECT_EQ(scale_band(9), "9-64");
  EXPECT_EQ(scale_band(512), "65-512");
  EXPECT_EQ(scale_band(1024), "513+");
}

TEST(Accuracy, GroupsGiveMedianAndP90OfTheMagnitudes) {
  // Five runs: errors -10%, +20%, +5%, +30%, -40% (by hand: |e| sorted 5, 10, 20, 30, 40; median
  // 20%, p90 at rank 3.6: 30 + 0.6 x 10 = 36%; the signed median +5%).
  std::vector<PublishedCase> c(5);
  const char* gpus[] = {"A100", "A100", "H100", "H100", "H100"};
  const int counts[] = {8, 64, 64, 512, 1024};
  for (int i = 0; i < 5; ++i) {
    c[i].kind = i < 2 ? "llm" : "cnn";
    c[i].framework = "f";
    c[i].gpu = gpus[i];
    c[i].gpus = counts[i];
    c[i].file = "s.csv";
  }
  const std::vector<double> e = {-0.10, 0.20, 0.05, 0.30, -0.40};
  const auto groups = group_errors(c, e);
  ASSERT_FALSE(groups.empty());
  EXPECT_EQ(groups[0].dimension, "all");
  EXPECT_EQ(groups[0].runs, 5);
  EXPECT_NEAR(groups[0].median_abs, 0.20, 1e-12);
  EXPECT_NEAR(groups[0].p90_abs, 0.36, 1e-12);
  EXPECT_NEAR(groups[0].median_signed, 0.05, 1e-12);
  std::vector<std::string> scales;
  for (const auto& g : groups) {
    if (g.dimension == "generation" && g.name == "Ampere") {
      EXPECT_EQ(g.runs, 2);
      EXPECT_NEAR(g.median_abs, 0.15, 1e-12);
    }
    if (g.dimension == "scale") scales.push_back(g.name);
  }
  // Scale bands in GPU order, not name order.
  EXPECT_EQ(scales, (std::vector<std::string>{"2-8", "9-64", "65-512", "513+"}));
}

// The shipped files read, every case's scenario exists.
TEST(Accuracy, ShippedCasesReadAndNameExistingScenarios) {
  const auto cases = read_published_cases(testing::source_path("scenarios/validation/published"));
  EXPECT_GE(cases.size(), 28u);
  for (const auto& c : cases) {
    EXPECT_FALSE(c.source.empty()) << c.file;
    if (!c.command.empty()) continue;  // a kernel's or collective's command
    EXPECT_TRUE(std::ifstream(testing::source_path("scenarios/validation/" + c.scenario)).good())
        << c.file << ":" << c.line << " " << c.scenario;
  }
}

// The command: a reduced run (two small cases), its CSV, and refusals.
TEST(Accuracy, CommandRunsTheSelectedCases) {
  if (testing::orrery_bin().empty()) GTEST_SKIP() << "ORRERY_BIN is set by ctest";
  const std::string bin = testing::orrery_bin();
  const std::string dir = testing::source_path("scenarios/validation/published");
  auto r = testing::run_shell(bin + " accuracy --dir " + dir +
                              " --only 'VGG-16, one GPU' --only 'VGG-16, Horovod, NCCL' --csv "
                              "2>/dev/null");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output.rfind("case,file,source,date,metric,published,predicted,error", 0), 0u)
      << r.output;
  EXPECT_NE(r.output.find("\"VGG-16, one GPU\",horovod-readme-2017.csv"), std::string::npos)
      << r.output;
  r = testing::run_shell(bin + " accuracy --dir " + dir + " --only nothing-matches");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("--only"), std::string::npos) << r.output;
  r = testing::run_shell(bin + " accuracy --dir " + dir + " --csv --markdown");
  EXPECT_EQ(r.status, 2) << r.output;
  // A case whose scenario does not load: its file, line and case, exit 2.
  const std::string bad = make_temp_dir("acc");
  std::filesystem::create_directories(bad + "/published");
  write_file(bad + "/published/x.csv", std::string("# source: x\n") + kHeader +
                                           "broken,d,llm,f,H100,8,missing.yaml,,iteration_s,1,\n");
  r = testing::run_shell(bin + " accuracy --dir " + bad + "/published");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("x.csv:3 (broken)"), std::string::npos) << r.output;
}

// docs/validation.md's tables of published large-model runs are what `orrery accuracy` prints
// now (golden results: regenerate with --update-doc when a model changes on purpose).
TEST(Accuracy, ValidationTablesInTheDocsAreWhatTheCommandPrints) {
  if (testing::orrery_bin().empty()) GTEST_SKIP() << "ORRERY_BIN is set by ctest";
  testing::expect_doc_block_is_command_output(
      "accuracy --only korthikanti --only v24.11.1 --markdown -j 2", "docs/validation.md",
      "accuracy-megatron");
  testing::expect_doc_block_is_command_output(
      "accuracy --only megatron-bridge-performance --only nemo-performance --markdown -j 2",
      "docs/validation.md", "accuracy-nvidia");
}

// The matmul and nccl-tests tables: each case runs the command it names (`cost --json`, `bench
// collective --csv`) in the same binary.
TEST(Accuracy, KernelAndCollectiveTablesInTheDocsAreWhatTheCommandPrints) {
  if (testing::orrery_bin().empty()) GTEST_SKIP() << "ORRERY_BIN is set by ctest";
  testing::expect_doc_block_is_command_output("accuracy --only mamf --markdown -j 2",
                                              "docs/validation.md", "accuracy-mamf");
  testing::expect_doc_block_is_command_output("accuracy --only nccl-tests --markdown -j 2",
                                              "docs/collectives.md", "accuracy-nccl-tests");
}

// A made-up validation set: 6 llm runs under megatron-te on Hopper, 4 of them at 65-512 GPUs,
// 3 on Ampere, 2 cnn runs.
std::vector<ValidationRecord> made_up() {
  std::vector<ValidationRecord> r;
  for (double e : {0.10, -0.05, 0.20, 0.02})
    r.push_back({"llm", "megatron-te", "Hopper", "65-512", e});
  for (double e : {0.30, -0.10}) r.push_back({"llm", "megatron-te", "Hopper", "9-64", e});
  for (double e : {0.08, 0.12, 0.04}) r.push_back({"llm", "megatron-te", "Ampere", "9-64", e});
  for (double e : {0.5, 0.6}) r.push_back({"cnn", "tensorflow1", "Pascal", "9-64", e});
  return r;
}

TEST(ErrorBand, TheNarrowestGroupWithFiveRunsGivesTheRange) {
  const auto records = made_up();
  // Hopper at 65-512 GPUs has 4 runs, too few: all 6 Hopper runs under megatron-te. Sorted
  // errors -0.10, -0.05, 0.02, 0.10, 0.20, 0.30: the 10th percentile at rank 0.5 is -0.075, the
  // 90th at rank 4.5 is 0.25; |e| sorted 0.02, 0.05, 0.10, 0.10, 0.20, 0.30: median 0.10.
  ErrorBand b = error_band(records, {"llm", "megatron-te", "Hopper", "65-512"});
  ASSERT_TRUE(b.known);
  EXPECT_EQ(b.runs, 6);
  EXPECT_NEAR(b.low, -0.075, 1e-12);
  EXPECT_NEAR(b.high, 0.25, 1e-12);
  EXPECT_NEAR(b.median_abs, 0.10, 1e-12);
  EXPECT_EQ(b.group, "llm runs under megatron-te on Hopper GPUs");
  // A predicted 8 s step: likely 8 x 0.925 = 7.4 s to 8 x 1.25 = 10 s.
  EXPECT_NEAR(likely_low(b, 8.0), 7.4, 1e-12);
  EXPECT_NEAR(likely_high(b, 8.0), 10.0, 1e-12);
  // Blackwell has none: every llm run under megatron-te (9), then the generation is dropped.
  b = error_band(records, {"llm", "megatron-te", "Blackwell", "65-512"});
  ASSERT_TRUE(b.known);
  EXPECT_EQ(b.runs, 9);
  EXPECT_EQ(b.group, "llm runs under megatron-te");
  // Another stack on Ampere: 3 Ampere runs are too few, and no run under pytorch: all llm runs.
  b = error_band(records, {"llm", "pytorch", "Ampere", "2-8"});
  EXPECT_EQ(b.runs, 9);
  EXPECT_EQ(b.group, "llm runs");
  // Two cnn runs are not enough: no range is made up.
  EXPECT_FALSE(error_band(records, {"cnn", "tensorflow1", "Pascal", "9-64"}).known);
  EXPECT_FALSE(error_band(records, {"other", "", "Volta", "1"}).known);
}

TEST(ErrorBand, RecordsReadFromAccuracysCsvAndBadRowsAreNamed) {
  const std::string dir = make_temp_dir("band");
  write_file(dir + "/a.csv",
             "case,kind,framework,generation,scale,error\n"
             "\"a, b\",llm,megatron-te,Hopper,9-64,0.125\n");
  const auto r = read_validation_records(dir + "/a.csv");
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].scale, "9-64");
  EXPECT_DOUBLE_EQ(r[0].error, 0.125);
  write_file(dir + "/b.csv", "case,kind,framework,generation,scale,error\nx,llm,m,H,1,fast\n");
  try {
    read_validation_records(dir + "/b.csv");
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("b.csv:2"), std::string::npos) << e.what();
  }
  write_file(dir + "/c.csv", "case,kind\nx,llm\n");
  EXPECT_THROW(read_validation_records(dir + "/c.csv"), InputError);
}

// The shipped errors are what `orrery accuracy --csv` prints now: ranges come from the model as
// it is (a golden result; regenerate with `orrery accuracy --csv -j 2 >
// scenarios/validation/accuracy.csv` when a model changes on purpose).
TEST(ErrorBand, ShippedErrorsAreWhatAccuracyPrints) {
  if (testing::orrery_bin().empty()) GTEST_SKIP() << "ORRERY_BIN is set by ctest";
  const auto r = testing::run_shell("cd '" + testing::source_path(".") + "' && " +
                                    testing::orrery_bin() + " accuracy --csv -j 2 2>/dev/null");
  ASSERT_EQ(r.status, 0) << r.output;
  std::ifstream f(testing::source_path("scenarios/validation/accuracy.csv"));
  const std::string shipped((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_EQ(shipped, r.output) << "regenerate: orrery accuracy --csv -j 2 > "
                                  "scenarios/validation/accuracy.csv";
  EXPECT_GE(
      read_validation_records(testing::source_path("scenarios/validation/accuracy.csv")).size(),
      46u);
}

// A run like validated ones carries its range as figures (HDF5, sweeps and Python get them);
// a synthetic one has none.
TEST(ErrorBand, RunsCarryTheirLikelyRange) {
  const Scenario sc =
      load_scenario(testing::source_path("scenarios/validation/llm/korthikanti-22b.yaml"), {});
  EXPECT_EQ(sc.traits.kind, "llm");
  EXPECT_EQ(sc.traits.framework, "megatron-te");
  EXPECT_EQ(sc.traits.generation, "Ampere");
  EXPECT_EQ(sc.traits.scale, "2-8");
  ASSERT_TRUE(sc.error_band.known);
  RunOptions options;
  options.isolated = true;
  const ScenarioRun run = run_scenario(sc, options);
  double low = 0, high = 0;
  for (const auto& [name, value] : run.metrics) {
    if (name == "likely.low_s") low = value;
    if (name == "likely.high_s") high = value;
  }
  EXPECT_NEAR(low, run.iteration_s * (1 + sc.error_band.low), 1e-12);
  EXPECT_NEAR(high, run.iteration_s * (1 + sc.error_band.high), 1e-12);
  EXPECT_LT(low, high);
  const Scenario synthetic = load_scenario(testing::source_path("scenarios/quickstart.yaml"), {});
  EXPECT_FALSE(synthetic.error_band.known);
  // orrery run prints the range, and for a language model the same as tokens/s per GPU: the
  // step's tokens over the top and the bottom of the range.
  if (testing::orrery_bin().empty()) return;
  const auto r = testing::run_shell(
      testing::orrery_bin() + " run " +
      testing::source_path("scenarios/validation/llm/korthikanti-22b.yaml") + " --no-timeline");
  ASSERT_EQ(r.status, 0) << r.output;
  const size_t at = r.output.find("Likely range    ");
  ASSERT_NE(at, std::string::npos) << r.output;
  const double tokens = run.llm->tokens_per_s_per_gpu;
  char want[96];
  std::snprintf(want, sizeof want, "%.0f to %.0f tokens/s per GPU",
                tokens / (1 + sc.error_band.high), tokens / (1 + sc.error_band.low));
  EXPECT_NE(r.output.find(want, at), std::string::npos) << r.output << " wants " << want;
}

}  // namespace
}  // namespace orrery
