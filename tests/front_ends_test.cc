// One scenario, every front end, the same figures (scenario/scenario_run.h): `orrery run -o`,
// a sweep of that one point (the forked child's stored row and parameters), `orrery sweep
// --point 0` and Python's orrery.run. A model workload of two iterations with its PAI estimate,
// a language model, a scenario of two jobs and a Chakra trace; every figure compared exactly
// (the numbers travel as shortest round-trip text or as doubles, so equal means bit-identical).
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "common/units.h"
#include "results/h5_store.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

using nlohmann::json;
using testing::make_temp_dir;
using testing::read_file;
using testing::run_shell;
using testing::source_path;
using testing::write_file;

struct Case {
  const char* name;
  std::string scenario;  // without a sweep section
};

// A sweep of one point: the name set to itself.
std::string one_point_sweep(const std::string& scenario, const std::string& name) {
  return scenario + "\nsweep:\n  grid:\n    name: [" + name + "]\n";
}

std::vector<Case> cases() {
  return {
      {"model", R"(name: model
platform: {preset: pai-nvlink, servers: 2}
workload: {type: model, model: resnet50, batch: 32}
strategy: {type: allreduce, iterations: 2}
output: {analytical: true}
)"},
      {"llm", R"(name: llm
platform: {preset: dgx-a100, servers: 1}
workload: {type: llm, model: llama2_7b, seq_len: 2048, global_batch: 16, micro_batch: 1}
strategy: {tp: 2, pp: 2, sequence_parallel: true, recompute: selective, flash_attention: true}
)"},
      {"jobs", read_file(source_path("scenarios/shared-cluster.yaml"))},
      {"chakra",
       "name: chakra\nplatform: {preset: dgx1-v100, servers: 1}\nworkload:\n  type: "
       "chakra\n  files: " +
           source_path("scenarios/traces/allreduce-8/all_reduce") + "\n"},
  };
}

// Without output.file: each front end is told where to write.
std::string without_output(std::string text) {
  const auto at = text.find("\noutput:");
  if (at == std::string::npos) return text;
  auto end = text.find("\n", at + 1);
  while (end != std::string::npos && end + 1 < text.size() && text[end + 1] == ' ')
    end = text.find("\n", end + 1);
  return text.erase(at, end == std::string::npos ? std::string::npos : end - at);
}

std::map<std::string, double> figures_of(const RunRecord& r) {
  std::map<std::string, double> out;
  for (const auto& [k, v] : r.params)
    if (k.rfind("llm.", 0) == 0 || k.rfind("jobs.", 0) == 0 || k.rfind("likely.", 0) == 0)
      out[k] = std::stod(v);
  return out;
}

void expect_same_summary(const RunSummary& a, const RunSummary& b, const std::string& what) {
  EXPECT_EQ(a.iteration_time_s, b.iteration_time_s) << what;
  EXPECT_EQ(a.compute_s, b.compute_s) << what;
  EXPECT_EQ(a.comm_s, b.comm_s) << what;
  EXPECT_EQ(a.exposed_comm_s, b.exposed_comm_s) << what;
  EXPECT_EQ(a.idle_s, b.idle_s) << what;
  EXPECT_EQ(a.io_s, b.io_s) << what;
  EXPECT_EQ(a.host_s, b.host_s) << what;
  EXPECT_EQ(a.memory_bound_s, b.memory_bound_s) << what;
}

void expect_same_jobs(const std::vector<JobRecord>& a, const std::vector<JobRecord>& b,
                      const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t j = 0; j < a.size(); ++j) {
    EXPECT_EQ(a[j].name, b[j].name) << what;
    EXPECT_EQ(a[j].iteration_times, b[j].iteration_times) << what << " " << a[j].name;
    EXPECT_EQ(a[j].alone_mean, b[j].alone_mean) << what << " " << a[j].name;
    EXPECT_EQ(a[j].slowdown, b[j].slowdown) << what << " " << a[j].name;
  }
}

TEST(FrontEnds, EveryFigureIsTheSameWhicheverFrontEndRunsTheScenario) {
  REQUIRE_BUILT_PYTHON_PACKAGE();
  const std::string bin = testing::orrery_bin();
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const std::string dir = make_temp_dir(std::string("front_ends_") + c.name);
    const std::string text = without_output(c.scenario);
    write_file(dir + "/s.yaml", text);
    const std::string name = c.name == std::string("jobs") ? "shared-cluster" : c.name;
    write_file(dir + "/sweep.yaml", one_point_sweep(text, name));

    const auto cli = run_shell(bin + " run -q " + dir + "/s.yaml -o " + dir + "/run.h5");
    ASSERT_EQ(cli.status, 0) << cli.output;
    const auto sweep =
        run_shell(bin + " sweep -q -j 1 " + dir + "/sweep.yaml -o " + dir + "/sweep.h5");
    ASSERT_EQ(sweep.status, 0) << sweep.output;
    const auto point =
        run_shell(bin + " sweep -q " + dir + "/sweep.yaml --point 0 -o " + dir + "/point.h5");
    ASSERT_EQ(point.status, 0) << point.output;
    const LoadedResults run = read_results_h5(dir + "/run.h5");
    const LoadedResults swept = read_results_h5(dir + "/sweep.h5");
    const LoadedResults detail = read_results_h5(dir + "/point.h5");
    ASSERT_EQ(run.runs.size(), 1u);
    ASSERT_EQ(swept.runs.size(), 1u);
    ASSERT_EQ(detail.runs.size(), 1u);

    expect_same_summary(run.summaries[0], swept.summaries[0], "run vs sweep");
    expect_same_summary(run.summaries[0], detail.summaries[0], "run vs --point");
    EXPECT_EQ(run.runs[0].result.analytical_seconds, swept.runs[0].result.analytical_seconds);
    EXPECT_EQ(run.runs[0].result.analytical_seconds, detail.runs[0].result.analytical_seconds);
    const auto figures = figures_of(run.runs[0]);
    EXPECT_EQ(figures, figures_of(swept.runs[0]));
    EXPECT_EQ(figures, figures_of(detail.runs[0]));
    EXPECT_EQ(run.meta.tokens_per_iteration, detail.meta.tokens_per_iteration);
    EXPECT_EQ(run.meta.model_flops_per_iteration, detail.meta.model_flops_per_iteration);
    EXPECT_EQ(run.meta.memory, detail.meta.memory);
    EXPECT_EQ(run.meta.device, detail.meta.device);
    expect_same_jobs(run.meta.jobs, detail.meta.jobs, "run vs --point");

    const json py = testing::run_python_json(
        "import dataclasses, json, orrery\n"
        "print(json.dumps(dataclasses.asdict(orrery.run('" +
        dir + "/s.yaml'))))\n");
    ASSERT_FALSE(py.empty());
    EXPECT_EQ(py.value("iteration_time_s", -1.0), run.summaries[0].iteration_time_s);
    for (const auto& [column, value] :
         {std::pair{"compute_s", run.summaries[0].compute_s},
          std::pair{"exposed_comm_s", run.summaries[0].exposed_comm_s},
          std::pair{"idle_s", run.summaries[0].idle_s}})
      EXPECT_EQ(py["times"].value(column, -1.0), value) << column;
    std::map<std::string, double> py_figures;
    for (const auto& [k, v] : py["metrics"].items()) py_figures[k] = v.get<double>();
    EXPECT_EQ(py_figures, figures);
    const double analytical = run.runs[0].result.analytical_seconds;
    // `orrery report --csv` has the PAI column only where the file has the estimate.
    const auto csv = run_shell(bin + " report " + dir + "/run.h5 --csv -");
    ASSERT_EQ(csv.status, 0) << csv.output;
    const std::string head = csv.output.substr(0, csv.output.find('\n'));
    EXPECT_EQ(head.find("analytical_s") != std::string::npos, analytical > 0) << head;
    if (analytical > 0)
      EXPECT_EQ(py.value("analytical_s", -1.0), analytical);
    else
      EXPECT_TRUE(py["analytical_s"].is_null());
    if (run.meta.tokens_per_iteration > 0) {
      ASSERT_TRUE(py["llm"].is_object());
      EXPECT_EQ(py["llm"].value("tokens_per_iteration", -1.0), run.meta.tokens_per_iteration);
      EXPECT_EQ(py["llm"].value("memory", std::string()), run.meta.memory);
      EXPECT_EQ(py["llm"].value("tokens_per_s", -1.0), figures.at("llm.tokens_per_s"));
      EXPECT_EQ(py["llm"].value("mfu", -1.0), figures.at("llm.mfu"));
    } else {
      EXPECT_TRUE(py["llm"].is_null());
    }
    if (!run.meta.jobs.empty()) {
      ASSERT_TRUE(py["jobs"].is_array());
      ASSERT_EQ(py["jobs"].size(), run.meta.jobs.size());
      for (size_t j = 0; j < run.meta.jobs.size(); ++j) {
        EXPECT_EQ(py["jobs"][j].value("name", std::string()), run.meta.jobs[j].name);
        EXPECT_EQ(py["jobs"][j]["iteration_times_s"].get<std::vector<double>>(),
                  run.meta.jobs[j].iteration_times);
        EXPECT_EQ(py["jobs"][j].value("slowdown", -1.0), run.meta.jobs[j].slowdown);
      }
      EXPECT_EQ(py["cluster"].value("gpu_batches_per_s", -1.0),
                figures.at("jobs.gpu_batches_per_s"));
      EXPECT_EQ(py["job_workloads"].size(), run.meta.jobs.size());
      EXPECT_NE(py["job_workloads"][0].get<std::string>().find("resnet50"), std::string::npos);
    } else {
      EXPECT_TRUE(py["jobs"].is_null());
    }
  }
}

// What each case must have, so the comparison above compares something: the model case its
// two iterations (one iteration's time, not the two-step total) and its PAI estimate, the
// language model its throughput, the jobs their table.
TEST(FrontEnds, TheCasesCarryTheFiguresTheyAreChosenFor) {
  REQUIRE_BUILT_PYTHON_PACKAGE();
  const std::string dir = make_temp_dir("front_ends_cases");
  const std::string bin = testing::orrery_bin();
  const auto all = cases();
  write_file(dir + "/model.yaml", all[0].scenario);
  write_file(dir + "/one.yaml", all[0].scenario + "\n# one step\n");
  const auto two = run_shell(bin + " run " + dir + "/model.yaml -o " + dir + "/two.h5");
  ASSERT_EQ(two.status, 0) << two.output;
  const auto one = run_shell(bin + " run -q " + dir + "/one.yaml --set strategy.iterations=1 -o " +
                             dir + "/one.h5");
  ASSERT_EQ(one.status, 0) << one.output;
  const LoadedResults a = read_results_h5(dir + "/two.h5");
  const LoadedResults b = read_results_h5(dir + "/one.h5");
  // Two steps run back to back: a step is between one and about one step alone (the second
  // may overlap the first one's tail), and the file says so per step.
  EXPECT_LT(a.summaries[0].iteration_time_s, 1.05 * b.summaries[0].iteration_time_s);
  EXPECT_GT(a.summaries[0].iteration_time_s, 0.8 * b.summaries[0].iteration_time_s);
  EXPECT_GT(a.runs[0].result.analytical_seconds, 0);
  // The summary says so: one iteration's time, and the whole run beside it.
  char line[160];
  std::snprintf(line, sizeof line, "Iteration time  %s (the mean of 2 iterations, %s in all)",
                format_time(a.summaries[0].iteration_time_s).c_str(),
                format_time(2 * a.summaries[0].iteration_time_s).c_str());
  EXPECT_NE(two.output.find(line), std::string::npos) << line << "\n" << two.output;
  EXPECT_NE(two.output.find("PAI analytical  "), std::string::npos) << two.output;

  // A language model's throughput per GPU first, as benchmarks quote it, then in all.
  write_file(dir + "/llm.yaml", all[1].scenario);
  const auto llm = run_shell(bin + " run " + dir + "/llm.yaml -o " + dir + "/llm.h5");
  ASSERT_EQ(llm.status, 0) << llm.output;
  const RunRecord r = read_results_h5(dir + "/llm.h5").runs.at(0);
  std::snprintf(line, sizeof line, "Throughput      %.0f tokens/s per GPU (%.0f in all)",
                std::stod(r.params.at("llm.tokens_per_s_per_gpu")),
                std::stod(r.params.at("llm.tokens_per_s")));
  EXPECT_NE(llm.output.find(line), std::string::npos) << line << "\n" << llm.output;
  EXPECT_EQ(std::stod(r.params.at("llm.tokens_per_s_per_gpu")),
            std::stod(r.params.at("llm.tokens_per_s")) / 8);
  EXPECT_EQ(llm.output.find("PAI analytical"), std::string::npos);  // not asked for
}

// Shipped scenarios by name, from any folder, as `orrery run NAME` takes them: the quickstart
// and one in a folder of scenarios/.
TEST(FrontEnds, PythonFindsShippedScenariosByNameAsTheCliDoes) {
  REQUIRE_BUILT_PYTHON_PACKAGE();
  const std::string dir = make_temp_dir("front_ends_names");
  const std::string bin = testing::orrery_bin();
  const auto cli = run_shell("cd " + dir + " && " + bin + " run quickstart -q -o q.h5 && " + bin +
                             " run llama2-7b-dgx-a100 -q -o l.h5");
  ASSERT_EQ(cli.status, 0) << cli.output;
  const json py = testing::run_python_json(
      "import json, os, orrery\n"
      "os.chdir('" +
      dir +
      "')\n"
      "q = orrery.run('quickstart')\n"
      "l = orrery.run('llama2-7b-dgx-a100')\n"
      "print(json.dumps({'q': q.iteration_time_s, 'l': l.iteration_time_s, 'name': l.name}))\n");
  EXPECT_EQ(py.value("q", -1.0), read_results_h5(dir + "/q.h5").summaries.at(0).iteration_time_s);
  EXPECT_EQ(py.value("l", -1.0), read_results_h5(dir + "/l.h5").summaries.at(0).iteration_time_s);
  EXPECT_EQ(py.value("name", std::string()), "llama2-7b-dgx-a100");
}

}  // namespace
}  // namespace orrery
