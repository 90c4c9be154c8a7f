#include "results/h5_store.h"

#include <gtest/gtest.h>
#include <hdf5.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/errors.h"
#include "results/param_values.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

namespace fs = std::filesystem;

ExecutionGraph sample_graph() {
  ExecutionGraph g;
  g.devices = {{"gpu0", "gpu0", "gpu0", "", {}}, {"gpu1", "gpu1", "gpu1", "", {}}};
  auto add = [&](const std::string& name, int device, Stream stream, const std::string& phase) {
    Op op;
    op.name = name;
    op.device = device;
    op.stream = stream;
    op.phase = phase;
    op.duration = 1e-3;
    g.ops.push_back(op);
  };
  add("load_batch", 0, {StreamClass::kCopyH2D, 0}, "io");
  add("fwd/matmul \"q\"", 0, {StreamClass::kCompute, 0}, "forward");
  add("allreduce.0", 1, {StreamClass::kComm, 1}, "comm");
  add("bwd/matmul", 1, {StreamClass::kCompute, 0}, "backward");
  return g;
}

RunResult sample_result(double scale, bool with_timeline) {
  RunResult r;
  r.makespan = 0.125 * scale;
  r.activities = 4242;
  r.wall_seconds = 0.75;
  r.analytical_seconds = 0.0625 * scale;
  DeviceStats d0;
  d0.name = "gpu0";
  d0.busy = {0.1 * scale, 0.02, 0.003, 0.0004, 0.005};
  d0.idle = 0.025 * scale;
  d0.ops = 3;
  DeviceStats d1 = d0;
  d1.name = "gpu1";
  d1.busy = {0.05 * scale, 0.04, 0.0, 0.001, 0.0};
  d1.idle = 0.075 * scale;
  d1.ops = 5;
  r.devices = {d0, d1};
  r.links = {{"nvlink_0_1", 300e9, 1e-6, 1.5e9, ""}, {"pcie0", 32e9, 5e-7, 6.4e7, ""}};
  if (with_timeline) {
    r.timeline = {{0.0, 0.01}, {0.01, 0.05}, {0.02, 0.06}, {0.06, 0.125}};
    // Three bins of 2^26 ns (67.108864 ms) cover the 125 ms run.
    r.link_usage_bin_width = 0.067108864;
    r.links[0].utilization = {0.25, 1.0, 0.0};
    r.links[1].utilization = {0.0, 0.5, 0.125};
  }
  return r;
}

ResultFileMeta sample_meta() {
  ResultFileMeta m;
  // Long enough to overflow an HDF5 object header if it were stored as a fixed-size attribute.
  m.scenario_text = "name: pai-sweep  # héllo ✓\nplatform: dgx1\n";
  m.scenario_text += std::string(200000, 'x') + "\n";
  m.orrery_version = "0.1.0";
  m.platform_description = "dgx1: 8x V100, NVLink 300 GB/s";
  m.created_by = "orrery sweep scenarios/pai.yaml";
  return m;
}

std::vector<RunRecord> sample_runs() {
  RunRecord a;
  a.name = "pai/bw=100";
  a.params = {{"bandwidth", "100e9"}, {"gpus", "8"}, {"name", "clash-free"}};
  a.result = sample_result(1.0, true);
  RunRecord b;
  b.name = "pai/bw=25";
  b.params = {{"bandwidth", "25e9"}, {"platform.nic", "ib"}};
  b.result = sample_result(2.0, false);
  RunRecord c;
  c.name = "no params";
  c.result = sample_result(3.0, false);
  c.result.devices.clear();
  c.result.links.clear();
  return {a, b, c};
}

void expect_same(const RunResult& want, const RunResult& got) {
  EXPECT_EQ(want.makespan, got.makespan);
  EXPECT_EQ(want.activities, got.activities);
  EXPECT_EQ(want.wall_seconds, got.wall_seconds);
  EXPECT_EQ(want.analytical_seconds, got.analytical_seconds);
  ASSERT_EQ(want.devices.size(), got.devices.size());
  for (size_t i = 0; i < want.devices.size(); ++i) {
    EXPECT_EQ(want.devices[i].name, got.devices[i].name);
    EXPECT_EQ(want.devices[i].busy, got.devices[i].busy);
    EXPECT_EQ(want.devices[i].idle, got.devices[i].idle);
    EXPECT_EQ(want.devices[i].ops, got.devices[i].ops);
  }
  ASSERT_EQ(want.links.size(), got.links.size());
  for (size_t i = 0; i < want.links.size(); ++i) {
    EXPECT_EQ(want.links[i].name, got.links[i].name);
    EXPECT_EQ(want.links[i].bandwidth, got.links[i].bandwidth);
    EXPECT_EQ(want.links[i].latency, got.links[i].latency);
    EXPECT_EQ(want.links[i].bytes, got.links[i].bytes);
    EXPECT_EQ(want.links[i].utilization, got.links[i].utilization);
  }
  EXPECT_EQ(want.link_usage_bin_width, got.link_usage_bin_width);
  ASSERT_EQ(want.timeline.size(), got.timeline.size());
  for (size_t i = 0; i < want.timeline.size(); ++i) {
    EXPECT_EQ(want.timeline[i].start, got.timeline[i].start);
    EXPECT_EQ(want.timeline[i].end, got.timeline[i].end);
  }
}

// The sample runs, written with the graph their timeline needs.
void write_sample(const std::string& path, const std::vector<RunRecord>& runs = sample_runs()) {
  ExecutionGraph g = sample_graph();
  write_results_h5(path, sample_meta(), runs, {&g, nullptr, nullptr});
}

std::vector<std::string> dir_entries(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  return names;
}

TEST(H5Store, RoundTripsMetaRunsAndDetail) {
  std::string dir = testing::make_temp_dir("h5");
  std::string path = dir + "/results.h5";
  ExecutionGraph g = sample_graph();
  std::vector<RunRecord> runs = sample_runs();
  write_results_h5(path, sample_meta(), runs, {&g, nullptr, nullptr});

  LoadedResults got = read_results_h5(path);
  EXPECT_EQ(got.format_version, kResultsFormatVersion);
  EXPECT_EQ(got.meta.scenario_text, sample_meta().scenario_text);
  EXPECT_EQ(got.meta.orrery_version, "0.1.0");
  EXPECT_EQ(got.meta.platform_description, sample_meta().platform_description);
  EXPECT_EQ(got.meta.created_by, sample_meta().created_by);
  ASSERT_EQ(got.runs.size(), runs.size());
  ASSERT_EQ(got.summaries.size(), runs.size());
  ASSERT_EQ(got.timelines.size(), runs.size());
  for (size_t i = 0; i < runs.size(); ++i) {
    SCOPED_TRACE("run " + std::to_string(i));
    EXPECT_EQ(got.runs[i].name, runs[i].name);
    EXPECT_EQ(got.runs[i].params, runs[i].params);
    expect_same(runs[i].result, got.runs[i].result);
    RunSummary want = summarize_run(runs[i].result);
    EXPECT_EQ(got.summaries[i].iteration_time_s, want.iteration_time_s);
    EXPECT_EQ(got.summaries[i].compute_s, want.compute_s);
    EXPECT_EQ(got.summaries[i].comm_s, want.comm_s);
    EXPECT_EQ(got.summaries[i].io_s, want.io_s);
    EXPECT_EQ(got.summaries[i].host_s, want.host_s);
    EXPECT_EQ(got.summaries[i].idle_s, want.idle_s);
  }
  EXPECT_TRUE(got.timelines[1].empty());
  EXPECT_TRUE(got.timelines[2].empty());
}

TEST(H5Store, SummaryIsMeanOverDevices) {
  RunResult r = sample_result(1.0, false);
  RunSummary s = summarize_run(r);
  EXPECT_DOUBLE_EQ(s.iteration_time_s, 0.125);
  EXPECT_DOUBLE_EQ(s.compute_s, (0.1 + 0.05) / 2);
  EXPECT_DOUBLE_EQ(s.comm_s, (0.02 + 0.04) / 2);
  EXPECT_DOUBLE_EQ(s.io_s, (0.003 + 0.0004 + 0.0 + 0.001) / 2);
  EXPECT_DOUBLE_EQ(s.host_s, 0.005 / 2);
  EXPECT_DOUBLE_EQ(s.idle_s, (0.025 + 0.075) / 2);
  EXPECT_EQ(summarize_run(RunResult{}).compute_s, 0.0);  // no devices: no division by zero
}

TEST(H5Store, RoundTripsTimelineByName) {
  std::string dir = testing::make_temp_dir("h5");
  std::string path = dir + "/timeline.h5";
  ExecutionGraph g = sample_graph();
  std::vector<RunRecord> runs = sample_runs();
  write_results_h5(path, sample_meta(), runs, {&g, nullptr, nullptr});

  std::vector<TimelineRow> rows = read_results_h5(path).timelines[0];
  ASSERT_EQ(rows.size(), g.ops.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].op, g.ops[i].name);
    EXPECT_EQ(rows[i].device, g.devices[g.ops[i].device].name);
    EXPECT_EQ(rows[i].stream, stream_name(g.ops[i].stream));
    EXPECT_EQ(rows[i].phase, g.ops[i].phase);
    EXPECT_EQ(rows[i].start, runs[0].result.timeline[i].start);
    EXPECT_EQ(rows[i].end, runs[0].result.timeline[i].end);
  }
  EXPECT_EQ(rows[2].stream, "comm:1");
  EXPECT_EQ(rows[0].stream, "copy_h2d");
}

TEST(H5Store, LargeTimelineCrossesSlabs) {
  std::string dir = testing::make_temp_dir("h5");
  std::string path = dir + "/big.h5";
  ExecutionGraph g;
  g.devices = {{"gpu0", "gpu0", "gpu0", "", {}}};
  RunRecord run;
  run.name = "big";
  const size_t n = 150000;  // more than two write slabs
  for (size_t i = 0; i < n; ++i) {
    Op op;
    op.name = "op" + std::to_string(i);
    op.device = 0;
    op.stream = {i % 2 ? StreamClass::kComm : StreamClass::kCompute, 0};
    op.phase = "forward";
    g.ops.push_back(op);
    run.result.timeline.push_back({i * 1e-6, i * 1e-6 + 5e-7});
  }
  write_results_h5(path, ResultFileMeta{}, {run}, {&g});
  LoadedResults got = read_results_h5(path);
  ASSERT_EQ(got.timelines[0].size(), n);
  EXPECT_EQ(got.timelines[0][n - 1].op, "op" + std::to_string(n - 1));
  EXPECT_EQ(got.timelines[0][n - 1].stream, "comm");
  EXPECT_EQ(got.timelines[0][n - 1].start, (n - 1) * 1e-6);
  EXPECT_EQ(got.runs[0].result.timeline.size(), n);
}

TEST(H5Store, NoRunsIsAValidFile) {
  std::string dir = testing::make_temp_dir("h5");
  std::string path = dir + "/empty.h5";
  write_results_h5(path, sample_meta(), {}, {});
  LoadedResults got = read_results_h5(path);
  EXPECT_TRUE(got.runs.empty());
  EXPECT_EQ(got.meta.created_by, sample_meta().created_by);
}

TEST(H5Store, LeavesNoTempFileAfterSuccess) {
  std::string dir = testing::make_temp_dir("h5");
  write_sample(dir + "/results.h5");
  EXPECT_EQ(dir_entries(dir), std::vector<std::string>{"results.h5"});
}

TEST(H5Store, MissingDirectoryIsAnInputErrorAndWritesNothing) {
  std::string dir = testing::make_temp_dir("h5");
  std::string path = dir + "/no/such/dir/results.h5";
  EXPECT_THROW(write_sample(path), InputError);
  EXPECT_FALSE(fs::exists(path));
  EXPECT_TRUE(dir_entries(dir).empty());
}

TEST(H5Store, DirectoryInTheWayIsAnInputError) {
  std::string dir = testing::make_temp_dir("h5");
  fs::create_directory(dir + "/results.h5");
  EXPECT_THROW(write_sample(dir + "/results.h5"), InputError);
}

TEST(H5Store, FailedWriteKeepsThePreviousFileAndRemovesTheTemp) {
  std::string dir = testing::make_temp_dir("h5");
  std::string path = dir + "/results.h5";
  write_sample(path);
  // Block the temp name with a (removable) empty directory so HDF5 cannot create the file.
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  fs::create_directory(tmp);
  std::vector<RunRecord> other = sample_runs();
  other[0].name = "replacement";
  try {
    write_sample(path, other);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(path + ": cannot write: ", 0), 0u) << e.what();
  }
  EXPECT_FALSE(fs::exists(tmp));
  EXPECT_EQ(read_results_h5(path).runs[0].name, "pai/bw=100");
}

TEST(H5Store, TimelineWithoutMatchingGraphIsRejectedBeforeWriting) {
  std::string dir = testing::make_temp_dir("h5");
  std::string path = dir + "/results.h5";
  ExecutionGraph g = sample_graph();
  g.ops.pop_back();
  std::vector<RunRecord> runs = sample_runs();
  EXPECT_THROW(write_results_h5(path, sample_meta(), runs, {&g, nullptr, nullptr}),
               std::invalid_argument);
  EXPECT_THROW(write_results_h5(path, sample_meta(), runs, {}), std::invalid_argument);
  EXPECT_THROW(write_results_h5(path, sample_meta(), runs, {&g}), std::invalid_argument);
  EXPECT_TRUE(dir_entries(dir).empty());
}

TEST(H5Store, LinkUtilizationIsTwoDimensionalWithItsBinWidth) {
  std::string dir = testing::make_temp_dir("h5");
  std::string path = dir + "/results.h5";
  write_sample(path);
  hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  hid_t dset = H5Dopen2(file, "runs_detail/0/link_utilization", H5P_DEFAULT);
  ASSERT_GE(dset, 0);
  hid_t space = H5Dget_space(dset);
  hsize_t dims[2] = {0, 0};
  EXPECT_EQ(H5Sget_simple_extent_ndims(space), 2);
  H5Sget_simple_extent_dims(space, dims, nullptr);
  EXPECT_EQ(dims[0], 2u);  // the rows of runs_detail/0/links
  EXPECT_EQ(dims[1], 3u);  // bins
  double width = 0;
  hid_t attr = H5Aopen(dset, "bin_width", H5P_DEFAULT);
  H5Aread(attr, H5T_NATIVE_DOUBLE, &width);
  EXPECT_EQ(width, 0.067108864);
  H5Aclose(attr);
  H5Sclose(space);
  H5Dclose(dset);
  // Runs that sampled nothing have no dataset.
  EXPECT_EQ(H5Lexists(file, "runs_detail/1/link_utilization", H5P_DEFAULT), 0);
  H5Fclose(file);
}

TEST(H5Store, UtilizationOfUnequalLengthIsRejectedBeforeWriting) {
  std::string dir = testing::make_temp_dir("h5");
  std::vector<RunRecord> runs = sample_runs();
  runs[0].result.links[1].utilization.pop_back();
  ExecutionGraph g = sample_graph();
  EXPECT_THROW(write_results_h5(dir + "/results.h5", sample_meta(), runs, {&g, nullptr, nullptr}),
               std::invalid_argument);
  EXPECT_TRUE(dir_entries(dir).empty());
}

TEST(H5Store, ReadingANonResultFileIsAnInputError) {
  std::string dir = testing::make_temp_dir("h5");
  EXPECT_THROW(read_results_h5(dir + "/missing.h5"), InputError);
  testing::write_file(dir + "/text.h5", "not hdf5\n");
  EXPECT_THROW(read_results_h5(dir + "/text.h5"), InputError);
  // A valid HDF5 file that Orrery did not write.
  hid_t f = H5Fcreate((dir + "/foreign.h5").c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  H5Fclose(f);
  EXPECT_THROW(read_results_h5(dir + "/foreign.h5"), InputError);
}

bool have_h5py() {
  if (!fs::exists("/usr/bin/python3")) return false;
  return std::system("/usr/bin/python3 -c 'import h5py' >/dev/null 2>&1") == 0;
}

TEST(H5Store, ReadableByH5py) {
  if (!have_h5py()) GTEST_SKIP() << "/usr/bin/python3 with h5py not available";
  std::string dir = testing::make_temp_dir("h5");
  std::string path = dir + "/results.h5";
  ExecutionGraph g = sample_graph();
  write_results_h5(path, sample_meta(), sample_runs(), {&g, nullptr, nullptr});
  // Mirrors the snippet in docs/hdf5-layout.md.
  std::string script = dir + "/check.py";
  testing::write_file(script, R"PY(
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r") as f:
    assert f.attrs["format_version"] == 4
    assert isinstance(f.attrs["scenario"], str)
    assert f.attrs["scenario"].startswith("name: pai-sweep  # h\u00e9llo \u2713\n")
    assert f.attrs["orrery_version"] == "0.1.0"
    runs = f["runs"][:]
    assert len(runs) == 3
    names = [n.decode() for n in runs["name"]]
    assert names == ["pai/bw=100", "pai/bw=25", "no params"], names
    assert abs(runs["iteration_time_s"][1] - 0.25) < 1e-15
    assert abs(runs["compute_s"][0] - 0.075) < 1e-15
    assert runs["activities"][0] == 4242
    assert abs(runs["analytical_s"][1] - 0.125) < 1e-15
    params = f["run_params"][:]
    assert params.dtype.names == ("bandwidth", "gpus", "name", "platform.nic"), params.dtype.names
    assert params["bandwidth"][1].decode() == "25e9"
    assert params["gpus"][1].decode() == ""
    # Parameters as numbers (SI units, `unit` attribute) beside their text; NaN where absent.
    rv = f["run_values"]
    assert sorted(rv) == ["bandwidth", "gpus"], list(rv)  # "clash-free" and "ib" are not numbers
    bw = rv["bandwidth"][:]
    assert bw[0] == 100e9 and bw[1] == 25e9 and np.isnan(bw[2]), bw
    assert rv["bandwidth"].attrs["unit"] == "1"
    assert rv["gpus"][0] == 8 and np.isnan(rv["gpus"][1])
    d = f["runs_detail/0"]
    assert d.attrs["name"] == "pai/bw=100"
    assert dict(d["params"].attrs) == {"bandwidth": "100e9", "gpus": "8", "name": "clash-free"}
    dev = d["devices"][:]
    assert [n.decode() for n in dev["name"]] == ["gpu0", "gpu1"]
    assert dev["ops"][1] == 5
    links = d["links"][:]
    assert links["bandwidth"][0] == 300e9
    # One row per links row, one column per bin; bin j spans [j, j + 1) x bin_width seconds.
    u = d["link_utilization"]
    assert u.shape == (2, 3) and u.dtype == np.float64, (u.shape, u.dtype)
    assert u.attrs["bin_width"] == 0.067108864 and u.attrs["unit"] == "1"
    assert list(u[1]) == [0.0, 0.5, 0.125]
    assert "link_utilization" not in f["runs_detail/1"]
    tl = d["timeline"][:]
    assert tl["op"][1].decode() == 'fwd/matmul "q"'
    assert tl["stream"][2].decode() == "comm:1"
    assert tl["end"][3] == 0.125
    assert "timeline" not in f["runs_detail/1"]
    assert len(f["runs_detail/2/devices"]) == 0
print("ok")
)PY");
  std::string cmd = "/usr/bin/python3 " + script + " " + path;
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;

  // A file of format_version 1 (before /runs had analytical_s) still reads, with 0 there.
  testing::write_file(dir + "/to_v1.py", R"PY(
import sys, shutil, h5py, numpy as np
shutil.copy(sys.argv[1], sys.argv[2])
with h5py.File(sys.argv[2], "r+") as f:
    runs = f["runs"][:]
    names = [n for n in runs.dtype.names if n != "analytical_s"]
    old = np.empty(len(runs), dtype=[(n, runs.dtype[n]) for n in names])
    for n in names:
        old[n] = runs[n]
    del f["runs"]
    f.create_dataset("runs", data=old)
    f.attrs["format_version"] = 1
)PY");
  cmd = "/usr/bin/python3 " + dir + "/to_v1.py " + path + " " + dir + "/v1.h5";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  LoadedResults v1 = read_results_h5(dir + "/v1.h5");
  ASSERT_EQ(v1.runs.size(), 3u);
  EXPECT_EQ(v1.format_version, 1);
  EXPECT_EQ(v1.runs[1].result.makespan, 0.25);
  EXPECT_EQ(v1.runs[1].result.analytical_seconds, 0.0);
}

TEST(ParamValues, QuantitiesBecomeSiNumbersWithTheirUnit) {
  struct Case {
    const char* text;
    double value;
    const char* unit;
  };
  for (const Case& c :
       {Case{"8", 8, "1"}, Case{"-2.5e3", -2500, "1"}, Case{"25Gbps", 3.125e9, "B/s"},
        Case{"10 GB/s", 1e10, "B/s"}, Case{"4MiB", 4194304, "B"}, Case{"1.5ms", 1.5e-3, "s"},
        Case{"8TFLOP/s", 8e12, "FLOP/s"}}) {
    double v = 0;
    std::string unit;
    ASSERT_TRUE(parse_param_value(c.text, &v, &unit)) << c.text;
    EXPECT_DOUBLE_EQ(v, c.value) << c.text;
    EXPECT_EQ(unit, c.unit) << c.text;
  }
  for (const char* text : {"ring", "", "true", "inf", "nan", "0x10", "8 apples", "1e999"}) {
    double v = 0;
    std::string unit;
    EXPECT_FALSE(parse_param_value(text, &v, &unit)) << text;
  }
}

TEST(H5Store, ReadableByH5dump) {
  if (std::system("command -v h5dump >/dev/null 2>&1") != 0) GTEST_SKIP() << "no h5dump";
  std::string dir = testing::make_temp_dir("h5");
  std::string path = dir + "/results.h5";
  ExecutionGraph g = sample_graph();
  write_results_h5(path, sample_meta(), sample_runs(), {&g, nullptr, nullptr});
  std::string cmd = "h5dump " + path + " >/dev/null && h5ls -r " + path + " >/dev/null";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
}

}  // namespace
}  // namespace orrery
