// The shipped studies (scenarios/studies/) and the plot scripts that read their files: every
// study expands to the points its docs promise, and the Fig. 9 speedup CDF and the breakdown
// plot compute what they claim from a real sweep file.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>

#include "results/h5_store.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

namespace fs = std::filesystem;
using testing::make_temp_dir;
using testing::read_file;
using testing::source_path;
using testing::write_file;

#define NEED_BINARY() \
  if (!std::getenv("ORRERY_BIN")) GTEST_SKIP() << "ORRERY_BIN not set (run through ctest)"

int sh(const std::string& cmd, const std::string& log) {
  int s = std::system((cmd + " >" + log + " 2>&1").c_str());
  return WIFEXITED(s) ? WEXITSTATUS(s) : 128 + WTERMSIG(s);
}

bool have_plotting() {
  return std::system("/usr/bin/python3 -c 'import h5py, matplotlib' >/dev/null 2>&1") == 0;
}

// Runs scripts/<script> on a sweep file with --table (and `options`), drawing FILE.png beside
// it; returns what it printed (the table), after checking that it succeeded and drew.
std::string plot_table(const std::string& script, const std::string& h5,
                       const std::string& options = "") {
  const std::string png = h5 + ".png", log = h5 + ".table.txt";
  EXPECT_EQ(sh("/usr/bin/python3 " + source_path("scripts/" + script) + " " + h5 + " -o " + png +
                   " --table" + options,
               log),
            0)
      << read_file(log);
  EXPECT_TRUE(fs::exists(png) && fs::file_size(png) > 1000) << png;
  return read_file(log);
}

// Runs `orrery sweep DIR/s.yaml -j 2` into DIR/NAME and returns the file's runs (none, with the
// sweep's log in the failure, when it did not succeed).
std::vector<RunRecord> sweep_runs(const std::string& dir, const std::string& name) {
  const std::string log = dir + "/run.txt";
  const int rc = sh(std::string(std::getenv("ORRERY_BIN")) + " sweep " + dir +
                        "/s.yaml -q -j 2 -o " + dir + "/" + name,
                    log);
  EXPECT_EQ(rc, 0) << read_file(log);
  return rc == 0 ? read_results_h5(dir + "/" + name).runs : std::vector<RunRecord>{};
}

TEST(Studies, EveryStudyExpandsToItsDocumentedPoints) {
  NEED_BINARY();
  const std::map<std::string, int> points = {{"pai-hw-1w1g", 13},
                                             {"pai-hw-1wng", 13},
                                             {"pai-hw-ps-worker", 13},
                                             {"pai-hw-allreduce-local", 13},
                                             {"pai-table3-grid", 288},
                                             {"pai-ps-to-allreduce", 72},
                                             {"pai-pearl-vs-ps", 4},
                                             {"pai-sim-vs-analytical", 9},
                                             {"plan-capacity", 24},
                                             {"gpu-upgrade", 30},
                                             {"ps-vs-one-gpu", 5},
                                             {"ps-poseidon", 16},
                                             {"llama2-70b-plans", 64},
                                             {"llama2-70b-plan-search", 1848},
                                             {"cluster-network-upgrade", 80},
                                             {"nvl72-vs-dgx-plan", 64},
                                             {"fp8-blackwell", 8},
                                             {"campaign-405b", 9}};
  auto dir = make_temp_dir("studies");
  int seen = 0;
  for (const auto& entry : fs::directory_iterator(source_path("scenarios/studies"))) {
    std::string stem = entry.path().stem().string();
    ASSERT_TRUE(points.count(stem)) << "a study without a documented point count: " << stem;
    ++seen;
    std::string log = dir + "/" + stem + ".txt";
    ASSERT_EQ(sh(std::string(std::getenv("ORRERY_BIN")) + " sweep " + entry.path().string() +
                     " --dry-run",
                 log),
              0)
        << read_file(log);
    std::string first_line = read_file(log).substr(0, read_file(log).find('\n'));
    EXPECT_NE(first_line.find(" " + std::to_string(points.at(stem)) + " point"), std::string::npos)
        << stem << ": " << first_line;
  }
  EXPECT_EQ(seen, static_cast<int>(points.size()));
}

// Two jobs (a model at two batch sizes) under three architectures; the script's speedups must
// be the ratios of the iteration times in the file.
TEST(Studies, SpeedupCdfIsTheRatioOfIterationTimes) {
  NEED_BINARY();
  if (!have_plotting()) GTEST_SKIP() << "/usr/bin/python3 with h5py and matplotlib not available";
  auto dir = make_temp_dir("fig9");
  write_file(dir + "/s.yaml", R"(name: fig9
platform: {preset: pai-pcie, servers: 3}
workload: {type: model, model: resnet50, batch: 8}
strategy: {type: ps_worker, ps_servers: 1}
output: {analytical: true}
sweep:
  named:
    arch:
      ps-worker: {strategy: {type: ps_worker, ps_servers: 1}}
      allreduce-local: {platform: {preset: pai-nvlink, servers: 1}, strategy: {type: allreduce}}
  grid:
    workload.batch: [4, 8]
)");
  const std::vector<RunRecord> runs = sweep_runs(dir, "s.h5");
  ASSERT_EQ(runs.size(), 4u);
  std::map<std::string, std::map<std::string, double>> t;  // batch -> arch -> seconds
  for (const auto& run : runs) {
    t[run.params.at("workload.batch")][run.params.at("arch")] = run.result.makespan;
    EXPECT_GT(run.result.analytical_seconds, 0) << run.name;
  }
  ASSERT_EQ(sh("/usr/bin/python3 " + source_path("scripts/plot_speedup_cdf.py") + " " + dir +
                   "/s.h5 -o " + dir + "/cdf.png --table --gpus ps-worker=16,allreduce-local=8",
               dir + "/cdf.txt"),
            0)
      << read_file(dir + "/cdf.txt");
  std::string out = read_file(dir + "/cdf.txt");
  EXPECT_TRUE(fs::file_size(dir + "/cdf.png") > 1000);
  for (const char* batch : {"4", "8"}) {
    double s = t[batch]["ps-worker"] / t[batch]["allreduce-local"];
    char want[96];
    std::snprintf(want, sizeof want, "%8.2fx  workload.batch=%s", s, batch);
    EXPECT_NE(out.find(want), std::string::npos) << want << "\n" << out;
  }
  // The throughput curve halves the speedup: AllReduce-Local does the job on 8 GPUs, not 16.
  double lo = std::min(t["4"]["ps-worker"] / t["4"]["allreduce-local"],
                       t["8"]["ps-worker"] / t["8"]["allreduce-local"]);
  char want[64];
  std::snprintf(want, sizeof want, "(throughput): 2 jobs");
  EXPECT_NE(out.find(want), std::string::npos) << out;
  std::snprintf(want, sizeof want, "range %.2fx", lo / 2);
  EXPECT_NE(out.find(want), std::string::npos) << want << "\n" << out;
  // Missing GPU counts are an error, not a silent guess.
  EXPECT_EQ(sh("/usr/bin/python3 " + source_path("scripts/plot_speedup_cdf.py") + " " + dir +
                   "/s.h5 -o " + dir + "/x.png --gpus ps-worker=16",
               dir + "/bad.txt"),
            2);
  EXPECT_NE(read_file(dir + "/bad.txt").find("no GPU count for allreduce-local"),
            std::string::npos);
  // The option repeated says the same as the list: the same table.
  ASSERT_EQ(sh("/usr/bin/python3 " + source_path("scripts/plot_speedup_cdf.py") + " " + dir +
                   "/s.h5 -o " + dir +
                   "/cdf2.png --table --gpus ps-worker=16 --gpus "
                   "allreduce-local=8",
               dir + "/cdf2.txt"),
            0);
  const std::string again = read_file(dir + "/cdf2.txt");
  EXPECT_EQ(again.substr(0, again.rfind(dir)), out.substr(0, out.rfind(dir)));
  // The breakdown plot of the same file (with its analytical markers) renders.
  ASSERT_EQ(sh("/usr/bin/python3 " + source_path("scripts/plot_breakdown.py") + " " + dir +
                   "/s.h5 -o " + dir + "/b.png",
               dir + "/b.txt"),
            0)
      << read_file(dir + "/b.txt");
  EXPECT_TRUE(fs::file_size(dir + "/b.png") > 1000);
}

// 1,234.5 -> "1,235", as Python's f"{x:,.0f}".
std::string with_commas(double x) {
  std::string digits = std::to_string(static_cast<long long>(std::llround(x)));
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(i, ",");
  return digits;
}

// The GPU-upgrade study: 5 GPUs x 3 models x {1, 8} GPUs = 30 points, every one runs, and the
// plot script's throughput is the point's batch x its GPUs / its iteration time, normalised to
// the P100 of the same model and GPU count.
TEST(Studies, GpuUpgradeThroughputIsBatchTimesGpusOverIterationTime) {
  NEED_BINARY();
  if (!have_plotting()) GTEST_SKIP() << "/usr/bin/python3 with h5py and matplotlib not available";
  auto dir = make_temp_dir("gpu-upgrade");
  const std::string bin = std::getenv("ORRERY_BIN");
  ASSERT_EQ(sh(bin + " sweep " + source_path("scenarios/studies/gpu-upgrade.yaml") +
                   " -q -j 2 -o " + dir + "/g.h5",
               dir + "/run.txt"),
            0)
      << read_file(dir + "/run.txt");
  LoadedResults r = read_results_h5(dir + "/g.h5");
  ASSERT_EQ(r.runs.size(), 30u);
  std::map<std::string, double> t;  // "gpu gpus model" -> seconds
  for (const auto& run : r.runs)
    t[run.params.at("gpu") + " " + run.params.at("gpus") + " " + run.params.at("model")] =
        run.result.makespan;
  const std::string out = plot_table("plot_gpu_upgrade.py", dir + "/g.h5");
  // The batches the scenario sets per model: ResNet-50 128 (FP32) and 256 (AMP), BERT-large 64.
  const std::pair<const char*, double> models[] = {
      {"resnet50-fp32", 128}, {"resnet50-amp", 256}, {"bert_large-amp", 64}};
  for (const char* gpus : {"1", "8"}) {
    for (const auto& [model, batch] : models) {
      std::string row = std::string("| ") + gpus + " | " + model + " |";
      const double p100 = batch * std::stoi(gpus) / t.at(std::string("P100 ") + gpus + " " + model);
      for (const char* gpu : {"P100", "V100", "A100", "H100", "H200"}) {
        const double tput =
            batch * std::stoi(gpus) / t.at(std::string(gpu) + " " + gpus + " " + model);
        char speedup[32];
        std::snprintf(speedup, sizeof speedup, "%.2fx", tput / p100);
        row += " " + with_commas(tput) + " (" + speedup + ") |";
      }
      EXPECT_NE(out.find(row), std::string::npos) << row << "\n" << out;
    }
  }
}

// A job-mix sweep of two networks x two placements x two job sets.
constexpr const char* kMiniCluster = R"(name: mini-cluster
description: two networks
platform: {preset: ethernet-cluster, servers: 4}
job_mix:
  types:
    - {name: small, share: 1, gpus: [1, 2], iterations: [1, 2],
       workload: {type: synthetic-dp, layers: 2, forward_time: 2ms, gradient_bytes: 8MiB}}
    - {name: big, share: 1, gpus: [8, 12], iterations: [1, 2],
       workload: {type: synthetic-dp, layers: 2, forward_time: 2ms, gradient_bytes: 32MiB}}
sweep:
  named:
    network:
      slow: {platform.server.nic.bandwidth: 10Gbps}
      fast: {platform.server.nic.bandwidth: 100Gbps}
    placement:
      packed: {job_mix.placement: packed}
      spread: {job_mix.placement: spread}
    job_set:
      "1": {job_mix.seed: 1}
      "2": {job_mix.seed: 2}
)";

// kMiniCluster swept into DIR/c.h5: each point's GPU-batches/s by "network placement set".
std::map<std::string, double> mini_cluster_throughput(const std::string& dir) {
  write_file(dir + "/s.yaml", kMiniCluster);
  std::map<std::string, double> b;
  for (const auto& run : sweep_runs(dir, "c.h5"))
    b[run.params.at("network") + " " + run.params.at("placement") + " " +
      run.params.at("job_set")] = std::stod(run.params.at("jobs.gpu_batches_per_s"));
  return b;
}

// The cluster study's throughput is each point's GPU-batches/s over the baseline network's under
// the first placement, on the same job set, averaged over the sets.
TEST(Studies, ClusterStudyComparesEveryPointWithTheBaselineOnTheSameJobSet) {
  NEED_BINARY();
  if (!have_plotting()) GTEST_SKIP() << "/usr/bin/python3 with h5py and matplotlib not available";
  auto dir = make_temp_dir("cluster-study");
  const std::map<std::string, double> b = mini_cluster_throughput(dir);
  ASSERT_EQ(b.size(), 8u);
  const std::string out = plot_table("plot_cluster_study.py", dir + "/c.h5");
  for (const char* placement : {"packed", "spread"}) {
    for (const char* network : {"slow", "fast"}) {
      const std::string p = std::string(" ") + placement + " ";
      const double ratio = (b.at(network + p + "1") / b.at("slow packed 1") +
                            b.at(network + p + "2") / b.at("slow packed 2")) /
                           2;
      char cell[64];
      std::snprintf(cell, sizeof cell, "| %s | %s | %.2fx |", placement, network, ratio);
      EXPECT_NE(out.find(cell), std::string::npos) << cell << "\n" << out;
    }
  }
  // A faster network never makes the same job set slower.
  EXPECT_GE(b.at("fast spread 1"), b.at("slow spread 1"));
}

// --axis placement: a bar per placement, coloured by the network (the named axis left), each
// against the first placement on the first network, on the same job set; GPU-batches/s is the
// mean over the sets.
TEST(Studies, ClusterStudyComparesPlacements) {
  NEED_BINARY();
  if (!have_plotting()) GTEST_SKIP() << "/usr/bin/python3 with h5py and matplotlib not available";
  auto dir = make_temp_dir("cluster-placement");
  const std::map<std::string, double> b = mini_cluster_throughput(dir);
  ASSERT_EQ(b.size(), 8u);
  const std::string out = plot_table("plot_cluster_study.py", dir + "/c.h5", " --axis placement");
  EXPECT_NE(out.find("| network | placement | throughput vs packed (network: slow) |"),
            std::string::npos)
      << out;
  for (const char* network : {"slow", "fast"}) {
    for (const char* placement : {"packed", "spread"}) {
      const std::string p = std::string(network) + " " + placement + " ";
      const double ratio =
          (b.at(p + "1") / b.at("slow packed 1") + b.at(p + "2") / b.at("slow packed 2")) / 2;
      char cell[96];
      std::snprintf(cell, sizeof cell, "| %s | %s | %.2fx | %s |", network, placement, ratio,
                    with_commas((b.at(p + "1") + b.at(p + "2")) / 2).c_str());
      EXPECT_NE(out.find(cell), std::string::npos) << cell << "\n" << out;
    }
  }
}

// Legends name the NIC bandwidth after the platform's fabric: a preset's own (dgx-a100:
// InfiniBand, pcie-server: Ethernet), one the sweep or a --set gives (RoCE, InfiniBand), and
// "NIC bandwidth" over points of several fabrics.
TEST(Studies, NicBandwidthIsNamedAfterTheFabric) {
  NEED_BINARY();
  if (!have_plotting()) GTEST_SKIP() << "/usr/bin/python3 with h5py and matplotlib not available";
  auto dir = make_temp_dir("fabric-label");
  write_file(dir + "/s.yaml", R"(name: fabrics
platform: {preset: pcie-server, servers: 2}
workload: {type: synthetic-dp, layers: 2, forward_time: 1ms, gradient_bytes: 4MiB}
sweep:
  named:
    fabric:
      ib: {platform: {preset: dgx-a100, servers: 2}}
      eth: {platform: {preset: pcie-server, servers: 2}}
      roce: {platform.fabric.kind: roce}
  grid:
    platform.server.nic.bandwidth: [25Gbps, 100Gbps]
)");
  ASSERT_EQ(sweep_runs(dir, "f.h5").size(), 6u);
  write_file(dir + "/set.yaml", R"(name: ethernet-set-to-infiniband
platform: {preset: pcie-server, servers: 2}
workload: {type: synthetic-dp, layers: 2, forward_time: 1ms, gradient_bytes: 4MiB}
sweep:
  grid:
    platform.server.nic.bandwidth: [25Gbps, 100Gbps]
)");
  ASSERT_EQ(sh(std::string(std::getenv("ORRERY_BIN")) + " sweep " + dir + "/set.yaml -q -o " + dir +
                   "/set.h5 --set platform.fabric.kind=infiniband",
               dir + "/set.txt"),
            0)
      << read_file(dir + "/set.txt");
  write_file(dir + "/label.py", R"(import sys
sys.path.insert(0, sys.argv[1])
import plot_common as pc
for path, where in ((sys.argv[2], []), (sys.argv[2], ["fabric=ib"]), (sys.argv[2], ["fabric=eth"]),
                    (sys.argv[2], ["fabric=roce"]), (sys.argv[3], [])):
    rows, _, attrs = pc.load(path)
    kind = pc.fabric_kind(pc.filter_rows(rows, where), attrs)
    print(" ".join(where) or "all", "->", pc.friendly("platform.server.nic.bandwidth", kind))
)");
  ASSERT_EQ(sh("/usr/bin/python3 " + dir + "/label.py " + source_path("scripts") + " " + dir +
                   "/f.h5 " + dir + "/set.h5",
               dir + "/label.txt"),
            0)
      << read_file(dir + "/label.txt");
  EXPECT_EQ(read_file(dir + "/label.txt"),
            "all -> NIC bandwidth\nfabric=ib -> InfiniBand\nfabric=eth -> Ethernet\n"
            "fabric=roce -> RoCE\nall -> InfiniBand\n");
}

// Two systems of one model: the script's tokens/s per GPU and $ per million tokens are the
// file's throughput over its GPUs and the price x GPUs x step over the step's tokens.
TEST(Studies, PrecisionStudyPricesTokensFromTheStepTime) {
  NEED_BINARY();
  if (!have_plotting()) GTEST_SKIP() << "/usr/bin/python3 with h5py and matplotlib not available";
  auto dir = make_temp_dir("precision-study");
  write_file(dir + "/s.yaml", R"(name: mini-precision
description: bf16 against fp8
platform: {preset: dgx-h100, servers: 1}
workload: {type: llm, model: llama2_7b, seq_len: 1024, global_batch: 8, micro_batch: 1}
strategy: {tp: 8, sequence_parallel: true, replicas: one, tp_collectives: analytical}
sweep:
  named:
    model:
      llama2-7b: {workload.model: llama2_7b}
    system:
      H100-BF16: {strategy.precision: bf16}
      H100-FP8: {strategy.precision: fp8}
)");
  const std::vector<RunRecord> runs = sweep_runs(dir, "p.h5");
  ASSERT_EQ(runs.size(), 2u);
  const std::string out = plot_table("plot_precision_study.py", dir + "/p.h5");
  std::map<std::string, double> step;
  for (const auto& run : runs) {
    const std::string system = run.params.at("system");
    step[system] = run.result.makespan;
    const double tokens = 8 * 1024;
    EXPECT_NEAR(std::stod(run.params.at("llm.tokens_per_s")) * run.result.makespan, tokens, 1e-6);
    char cell[128];
    const double usd_per_mtok = 2.69 * 8 * run.result.makespan / 3600 / (tokens / 1e6);
    std::snprintf(cell, sizeof cell, "| %.4f |", usd_per_mtok);
    EXPECT_NE(out.find(cell), std::string::npos) << cell << "\n" << out;
  }
  EXPECT_LT(step.at("H100-FP8"), step.at("H100-BF16"));
}

// The campaign plot: one row per system and GPU count, each the point's own campaign figures.
TEST(Studies, CampaignPlotShowsEachPointsCampaign) {
  NEED_BINARY();
  if (!have_plotting()) GTEST_SKIP() << "/usr/bin/python3 with h5py and matplotlib not available";
  auto dir = make_temp_dir("campaign-study");
  write_file(dir + "/s.yaml", R"(name: mini-campaign
description: a 7B model to 20B tokens
platform: {preset: dgx-h100, servers: 1}
workload: {type: llm, model: llama2_7b, seq_len: 1024, global_batch: 16, micro_batch: 1}
strategy: {tp: 8, sequence_parallel: true, replicas: one, tp_collectives: analytical}
campaign: {tokens: 20B, prices: {gpu_hour: 2}}
sweep:
  named:
    system:
      H100: {platform.preset: dgx-h100}
      H200: {platform.preset: dgx-h200}
    gpus:
      "8": {description: "8 GPUs"}
      "16": {description: "16 GPUs"}
  derived:
    platform.servers: "${gpus} / 8"
)");
  const std::vector<RunRecord> runs = sweep_runs(dir, "c.h5");
  ASSERT_EQ(runs.size(), 4u);
  const std::string out = plot_table("plot_campaign.py", dir + "/c.h5");
  for (const auto& run : runs) {
    char row[160];
    std::snprintf(row, sizeof row, "| %s | %s | %.2f s | %.1f | %.1f | %.1f%% |",
                  run.params.at("system").c_str(), run.params.at("gpus").c_str(),
                  run.result.makespan, std::stod(run.params.at("campaign.work_days")),
                  std::stod(run.params.at("campaign.wall_days")),
                  100 * std::stod(run.params.at("campaign.goodput")));
    EXPECT_NE(out.find(row), std::string::npos) << row << "\n" << out;
  }
}

}  // namespace
}  // namespace orrery
