// orrery.load_runs and orrery.load_devices (python/orrery/results.py): a run file and a small
// sweep file read into DataFrames with the rows, columns, numbers and units the HDF5 layout
// (docs/hdf5-layout.md) promises, checked against the C++ reader of the same files; damaged and
// foreign files refused with orrery.InputError naming the file, as `orrery report` refuses them,
// without crashing the interpreter.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "results/h5_store.h"
#include "test_util.h"

namespace orrery {
namespace {

using nlohmann::json;
using testing::input_error_of;
using testing::make_temp_dir;
using testing::read_file;
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

// A 2 x 2 sweep over layers and PCIe bandwidth, written to dir/sweep.h5.
void write_small_sweep(const std::string& dir) {
  write_file(dir + "/sweep.yaml", R"(name: small
platform: {preset: pcie-server, server: {gpus: 2}}
workload: {type: synthetic-dp, layers: 2, forward_time: 1ms, gradient_bytes: 4MB}
sweep:
  grid:
    workload.layers: [2, 4]
    platform.server.pcie.bandwidth: [10GB/s, 20GB/s]
)");
  orrery_cli("sweep " + dir + "/sweep.yaml -o " + dir + "/sweep.h5 -j 1");
}

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
  write_small_sweep(dir);
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

// Calls load_runs and load_devices on each of `paths` in one interpreter, after `prelude`, and
// returns {path: {function: outcome}}: "ok N" (N rows), "InputError: <message>", or
// "<exception type>: <message>". The interpreter must end normally: a damaged file must not
// crash it (a signal shows as status 128 + signal from the shell).
json load_each(const std::vector<std::string>& paths, const std::string& prelude = "") {
  const testing::PythonRun r =
      run_python("import json, orrery\n" + prelude + "PATHS = " + json(paths).dump() + "\n" + R"(
out = {}
for path in PATHS:
    out[path] = {}
    for fn in ('load_runs', 'load_devices'):
        try:
            out[path][fn] = 'ok %d' % len(getattr(orrery, fn)(path))
        except orrery.InputError as e:
            out[path][fn] = 'InputError: %s' % e
        except Exception as e:
            out[path][fn] = '%s: %s' % (type(e).__name__, e)
print(json.dumps(out))
)");
  EXPECT_EQ(r.status, 0) << "the interpreter did not end normally\n" << r.err;
  if (r.status != 0) return json::object();
  return json::parse(r.out, nullptr, false);
}

bool refused_naming(const std::string& outcome, const std::string& path) {
  return outcome.rfind("InputError: ", 0) == 0 && outcome.find(path) != std::string::npos;
}

// Truncated, empty, missing, non-HDF5 and foreign HDF5 files: both loaders raise
// orrery.InputError (a ValueError) naming the file, never h5py's OSError or KeyError.
TEST(PythonResults, DamagedOrForeignFilesRaiseInputErrorNamingTheFile) {
  REQUIRE_BUILT_PYTHON_PACKAGE();
  const std::string dir = make_temp_dir("python_results");
  orrery_cli("run " + source_path("scenarios/quickstart.yaml") + " -o " + dir + "/q.h5");
  const std::string good = read_file(dir + "/q.h5");
  ASSERT_GT(good.size(), 4096u);
  std::vector<std::string> paths;
  auto add = [&](const std::string& name, const std::string& bytes) {
    write_file(dir + "/" + name, bytes);
    paths.push_back(dir + "/" + name);
  };
  add("empty.h5", "");
  for (size_t k : {size_t{8}, size_t{100}, size_t{512}, size_t{2048}, good.size() / 2,
                   good.size() - 100, good.size() - 1})
    add("truncated-" + std::to_string(k) + ".h5", good.substr(0, k));
  add("notes.h5", "these are my notes\n");
  add("json.h5", "{\"runs\": [1, 2, 3]}\n");
  add("signature-only.h5", std::string("\x89HDF\r\n\x1a\n", 8) + std::string(64, '\0'));
  paths.push_back(dir + "/missing.h5");
  ASSERT_EQ(mkdir((dir + "/folder.h5").c_str(), 0755), 0);
  paths.push_back(dir + "/folder.h5");
  // HDF5 files that are not Orrery's: no Orrery datasets, no /runs, /runs of the wrong type.
  for (const char* name : {"foreign.h5", "no-runs.h5", "wrong-runs.h5"})
    paths.push_back(dir + "/" + name);
  const std::string prelude = "import h5py\nD = " + json(dir).dump() + "\n" + R"(
with h5py.File(D + '/foreign.h5', 'w') as f:
    f['x'] = [1, 2]
with h5py.File(D + '/no-runs.h5', 'w') as f:
    f.attrs['format_version'] = 4
    f.create_group('runs_detail')
with h5py.File(D + '/wrong-runs.h5', 'w') as f:
    f.attrs['format_version'] = 4
    f.attrs['orrery_version'] = 7
    f['runs'] = [1, 2, 3]
)";
  const json got = load_each(paths, prelude);
  for (const std::string& path : paths) {
    for (const char* fn : {"load_runs", "load_devices"}) {
      const std::string outcome = got.value(path, json::object()).value(fn, "(no outcome)");
      EXPECT_TRUE(refused_naming(outcome, path)) << fn << "(" << path << "): " << outcome;
    }
  }
  // The same message as `orrery report` for a file that is not HDF5.
  EXPECT_EQ(got[dir + "/notes.h5"]["load_runs"],
            "InputError: " + input_error_of([&] { read_results_h5(dir + "/notes.h5"); }));
}

// Bytes flipped and blocks zeroed in the middle of a run file (with its timeline) and of a sweep
// file (with /run_params and /run_values): whatever `orrery report`'s reader refuses, the
// loaders refuse with InputError naming the file; the rest load, or are refused the same way
// where what only the loaders read (/run_params, /run_values) is damaged. Never another exception
// and never a crash (h5py alone crashes on some such files: SIGSEGV, "malloc(): invalid size").
TEST(PythonResults, FlippedBytesAreRefusedAsOrreryReportRefusesThem) {
  REQUIRE_BUILT_PYTHON_PACKAGE();
  const std::string dir = make_temp_dir("python_results");
  orrery_cli("run " + source_path("scenarios/quickstart.yaml") + " -o " + dir + "/run.h5");
  write_small_sweep(dir);
  std::vector<std::string> paths;
  std::mt19937 rng(36);
  for (const char* base : {"run", "sweep"}) {
    const std::string good = read_file(dir + "/" + base + ".h5");
    ASSERT_GT(good.size(), 4096u) << base;
    std::uniform_int_distribution<size_t> middle(good.size() / 4, 3 * good.size() / 4);
    for (int i = 0; i < 16; ++i) {
      std::string bad = good;
      for (int j = 0; j < 8; ++j) bad[middle(rng)] ^= '\xff';
      paths.push_back(dir + "/" + base + "-flip-" + std::to_string(i) + ".h5");
      write_file(paths.back(), bad);
    }
    // Zeros at half of the run file send libhdf5 into a loop: refused after read_results_h5's
    // 5 s limit (common/h5_guard.h), which is most of this test's time.
    for (int i = 1; i <= 2; ++i) {
      std::string bad = good;
      bad.replace(i * good.size() / 4, 512, 512, '\0');
      paths.push_back(dir + "/" + base + "-zeroed-" + std::to_string(i) + ".h5");
      write_file(paths.back(), bad);
    }
  }
  const json got = load_each(paths);
  int refused = 0;
  for (const std::string& path : paths) {
    const std::string cli = input_error_of([&] { read_results_h5(path); });
    for (const char* fn : {"load_runs", "load_devices"}) {
      const std::string outcome = got.value(path, json::object()).value(fn, "(no outcome)");
      if (cli != "(no InputError)") {
        EXPECT_TRUE(refused_naming(outcome, path))
            << fn << "(" << path << "): " << outcome << "\n`orrery report`: " << cli;
        refused += 1;
      } else {
        EXPECT_TRUE(outcome.rfind("ok ", 0) == 0 || refused_naming(outcome, path))
            << fn << "(" << path << "): " << outcome;
      }
    }
  }
  EXPECT_GT(refused, 0) << "no damaged file was refused: the test damages nothing";
}

// Names whose bytes are not UTF-8 (here bytes 0xff 0xfe, and an overlong 0xc0 0xaf, put into a
// run file's name after it was written): both loaders read the file, each invalid byte a U+FFFD,
// rather than raising UnicodeDecodeError (docs/python.md).
TEST(PythonResults, NamesThatAreNotUtf8LoadWithReplacementCharacters) {
  REQUIRE_BUILT_PYTHON_PACKAGE();
  const std::string dir = make_temp_dir("python_results");
  write_file(dir + "/s.yaml", R"(name: utf8-BADBYTES
platform: {preset: pcie-server, server: {gpus: 2}}
workload: {type: synthetic-dp, layers: 2, forward_time: 1ms, gradient_bytes: 4MB}
)");
  orrery_cli("run " + dir + "/s.yaml -o " + dir + "/u.h5");
  std::string bytes = read_file(dir + "/u.h5");
  const std::string kNotUtf8(
      "\xff\xfe\xc0\xaf"
      "byte",
      8);
  int patched = 0;
  // The strings live in the global heap, which carries no checksum.
  for (size_t at = bytes.find("BADBYTES"); at != std::string::npos;
       at = bytes.find("BADBYTES", at)) {
    bytes.replace(at, 8, kNotUtf8);
    ++patched;
  }
  ASSERT_GE(patched, 3) << "the name is in /runs, /runs_detail/0 and the scenario text";
  write_file(dir + "/u.h5", bytes);
  const json got = run_python_json("import json, orrery\nPATH = " + json(dir + "/u.h5").dump() + R"(
runs = orrery.load_runs(PATH)
devices = orrery.load_devices(PATH)
print(json.dumps({'name': runs['name'][0], 'run_name': devices['run_name'][0],
                  'scenario': runs.attrs['scenario'].splitlines()[0],
                  'rows': len(runs), 'devices': len(devices)}))
)");
  const std::string name = "utf8-\ufffd\ufffd\ufffd\ufffdbyte";
  EXPECT_EQ(got.value("name", ""), name) << got.dump();
  EXPECT_EQ(got.value("run_name", ""), name) << got.dump();
  EXPECT_EQ(got.value("scenario", ""), "name: " + name) << got.dump();
  EXPECT_EQ(got.value("rows", 0), 1) << got.dump();
  EXPECT_GT(got.value("devices", 0), 0) << got.dump();
}

}  // namespace
}  // namespace orrery
