// orrery.load_runs and orrery.load_devices (python/orrery/results.py): a run file and a small
// sweep file read into DataFrames with the rows, columns, numbers and units the HDF5 layout
// (docs/hdf5-layout.md) promises, checked against the C++ reader of the same files.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "results/h5_store.h"
#include "test_util.h"

namespace orrery {
namespace {

using nlohmann::json;
using testing::make_temp_dir;
using testing::run_python;
using testing::run_python_json;
using testing::source_path;
using testing::write_file;

void orrery_cli(const std::string& args) {
  const std::string cmd = std::string(std::getenv("ORRERY_BIN")) + " " + args + " -q";
  const int raw = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(raw) && WEXITSTATUS(raw) == 0) << cmd;
}

// The frame of a results file as JSON: columns, rows (records), units and the other attrs.
const char* kDump = R"(
import json, sys, orrery
df = getattr(orrery, sys.argv[1])(sys.argv[2])
print(json.dumps({"columns": list(df.columns), "rows": df.to_dict("records"),
                  "units": df.attrs["units"], "scenario": df.attrs["scenario"],
                  "dtypes": {c: str(t) for c, t in df.dtypes.items()}}))
)";

json dump(const std::string& function, const std::string& file) {
  return run_python_json("import sys\nsys.argv = ['', '" + function + "', '" + file + "']\n" +
                         kDump);
}

// `orrery run -o`: one row, the /runs columns, numbers equal to what the C++ reader sees.
TEST(PythonResults, LoadRunsOfARunFile) {
  REQUIRE_BUILT_PYTHON_PACKAGE();
  const std::string h5 = make_temp_dir("python_results") + "/q.h5";
  orrery_cli("run " + source_path("scenarios/quickstart.yaml") + " -o " + h5);
  const LoadedResults want = read_results_h5(h5);
  const json got = dump("load_runs", h5);
  ASSERT_EQ(got["rows"].size(), 1u) << got.dump();
  const json& row = got["rows"][0];
  EXPECT_EQ(row["name"], "quickstart");
  EXPECT_EQ(row["iteration_time_s"].get<double>(), want.summaries[0].iteration_time_s);
  EXPECT_EQ(row["exposed_comm_s"].get<double>(), want.summaries[0].exposed_comm_s);
  EXPECT_EQ(row["activities"], want.runs[0].result.activities);
  EXPECT_EQ(got["dtypes"]["iteration_time_s"], "float64");
  EXPECT_EQ(got["dtypes"]["activities"], "int64");
  EXPECT_EQ(got["units"]["iteration_time_s"], "s");
  EXPECT_EQ(got["scenario"], want.meta.scenario_text);
  EXPECT_EQ(got["columns"].size(), 12u) << got["columns"].dump();  // no parameters in a run file
}

// The per-device breakdown: one row per device, seconds named with _s, equal to the file's.
TEST(PythonResults, LoadDevicesOfARunFile) {
  REQUIRE_BUILT_PYTHON_PACKAGE();
  const std::string h5 = make_temp_dir("python_results") + "/q.h5";
  orrery_cli("run " + source_path("scenarios/quickstart.yaml") + " -o " + h5);
  const LoadedResults want = read_results_h5(h5);
  const json got = dump("load_devices", h5);
  const auto& devices = want.runs[0].result.devices;
  ASSERT_EQ(got["rows"].size(), devices.size()) << got.dump();
  EXPECT_EQ(got["columns"], json({"run", "run_name", "device", "busy_compute_s", "busy_comm_s",
                                  "busy_copy_h2d_s", "busy_copy_d2h_s", "busy_host_s", "idle_s",
                                  "exposed_comm_s", "memory_bound_s", "ops"}));
  for (size_t i = 0; i < devices.size(); ++i) {
    const json& row = got["rows"][i];
    EXPECT_EQ(row["run"], 0);
    EXPECT_EQ(row["run_name"], "quickstart");
    EXPECT_EQ(row["device"], devices[i].name);
    EXPECT_EQ(row["busy_comm_s"].get<double>(), devices[i].busy[1]);
    EXPECT_EQ(row["idle_s"].get<double>(), devices[i].idle);
    EXPECT_EQ(row["ops"], devices[i].ops);
  }
  EXPECT_EQ(got["units"]["busy_compute_s"], "s");
  EXPECT_EQ(got["units"]["ops"], "1");
}

// A 2 x 2 sweep: four rows in point order, each parameter a number in SI units with its unit,
// the sweep's text parameters as text, and a groupby over one axis.
TEST(PythonResults, LoadRunsOfASweepFile) {
  REQUIRE_BUILT_PYTHON_PACKAGE();
  const std::string dir = make_temp_dir("python_results");
  write_file(dir + "/sweep.yaml", R"(name: small
platform: {preset: pcie-server, server: {gpus: 2}}
workload: {type: synthetic-dp, layers: 2, forward_time: 1ms, gradient_bytes: 4MB}
sweep:
  grid:
    workload.layers: [2, 4]
    platform.server.pcie.bandwidth: [10GB/s, 20GB/s]
)");
  orrery_cli("sweep " + dir + "/sweep.yaml -o " + dir + "/sweep.h5 -j 1");
  const LoadedResults want = read_results_h5(dir + "/sweep.h5");
  ASSERT_EQ(want.runs.size(), 4u);
  const json got = dump("load_runs", dir + "/sweep.h5");
  ASSERT_EQ(got["rows"].size(), 4u) << got.dump();
  EXPECT_EQ(got["units"]["workload.layers"], "1");
  EXPECT_EQ(got["units"]["platform.server.pcie.bandwidth"], "B/s");
  EXPECT_EQ(got["dtypes"]["platform.server.pcie.bandwidth"], "float64");
  EXPECT_EQ(got["dtypes"]["sweep.status"], "object");
  for (size_t i = 0; i < 4; ++i) {
    const json& row = got["rows"][i];
    const auto& params = want.runs[i].params;
    EXPECT_EQ(row["name"], want.runs[i].name);
    EXPECT_EQ(row["iteration_time_s"].get<double>(), want.summaries[i].iteration_time_s);
    EXPECT_EQ(row["workload.layers"].get<double>(), std::stod(params.at("workload.layers")));
    const double bandwidth = params.at("platform.server.pcie.bandwidth") == "10GB/s" ? 10e9 : 20e9;
    EXPECT_EQ(row["platform.server.pcie.bandwidth"].get<double>(), bandwidth);
    EXPECT_EQ(row["sweep.status"], "ok");
  }

  // The docs' groupby: the mean iteration time per layer count; 4 layers take longer.
  const json by_layers =
      run_python_json("import json, orrery\nruns = orrery.load_runs('" + dir +
                      "/sweep.h5')\nm = runs.groupby('workload.layers')"
                      "['iteration_time_s'].mean()\nprint(json.dumps({str(int(k)): v "
                      "for k, v in m.items()}))\n");
  ASSERT_EQ(by_layers.size(), 2u) << by_layers.dump();
  EXPECT_LT(by_layers.value("2", 1e9), by_layers.value("4", 0.0));
}

// Anything but an Orrery results file is refused with InputError naming the file.
TEST(PythonResults, NotAResultsFileRaisesInputError) {
  REQUIRE_BUILT_PYTHON_PACKAGE();
  const std::string dir = make_temp_dir("python_results");
  const json got = run_python_json(
      "import h5py, json, orrery\n"
      "with h5py.File('" +
      dir +
      "/other.h5', 'w') as f:\n"
      "    f['x'] = [1, 2]\n"
      "try:\n"
      "    orrery.load_runs('" +
      dir +
      "/other.h5')\n"
      "    print(json.dumps({}))\n"
      "except orrery.InputError as e:\n"
      "    print(json.dumps({'error': str(e)}))\n");
  EXPECT_NE(got.value("error", "").find(dir + "/other.h5: not an Orrery results file"),
            std::string::npos)
      << got.dump();
}

}  // namespace
}  // namespace orrery
