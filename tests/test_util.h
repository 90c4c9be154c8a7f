// Helpers shared by the test suites.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "engine/collective_bench.h"
#include "platforms/simgrid_platform.h"
#include "workloads/model_graph.h"

namespace orrery::testing {

// A fresh empty directory under the system's temp area, unique per call; removed with
// everything in it when the test process exits (kept if ORRERY_KEEP_TEST_DIRS is set).
std::string make_temp_dir(const std::string& tag);
// Writes text to a file, creating parent directories.
void write_file(const std::string& path, const std::string& text);
std::string read_file(const std::string& path);
// The process ids whose parent is `parent` (read from /proc), in no particular order.
std::vector<int> child_pids(int parent);
// The indices of the points in a sweep journal (sweeps/journal.h), read from a copy: opening a
// journal cuts a torn tail, and a running sweep may be appending to this one. Empty when the
// file is missing or not yet a journal.
std::set<int64_t> journal_points(const std::string& path);
// The message of the InputError that `f` throws; "(no InputError)" when it throws none.
std::string input_error_of(const std::function<void()>& f);
// Absolute path of a file under the source tree.
std::string source_path(const std::string& relative);
// Absolute path of a file under the shared data folder that sits beside the repository
// (../shared from the source tree; CI checks it out there): inputs written by other tools, such
// as the Chakra traces under fixtures/chakra, read in place rather than copied in.
std::string shared_path(const std::string& relative);

// What a shell command printed (stdout and stderr together) and its exit status (-1 when a
// signal ended it).
struct ShellResult {
  int status = -1;
  std::string output;
};
ShellResult run_shell(const std::string& command);

// What a Python script printed, and how it ended.
struct PythonRun {
  int status = -1;  // exit status; -1 if it did not exit normally
  std::string out;  // stdout
  std::string err;  // stderr
};
// The folder holding the built orrery Python package (ORRERY_PYTHONPATH, which ctest sets from
// CMake); "" when unset, e.g. when a suite runs outside ctest.
std::string python_package_dir();
// Runs `script` with /usr/bin/python3 in the source tree, python_package_dir() on PYTHONPATH.
PythonRun run_python(const std::string& script);

// A scenario whose step is kernels alone: one V100 (300 W), four layers of 1 ms forward and
// 2 ms backward and the synthetic workload's 0.2 ms update, 12.2 ms in all.
inline constexpr const char* kOneGpuScenario = R"(name: one-gpu
platform: {preset: pcie-server, server: {gpus: 1}}
workload: {type: synthetic-dp, layers: 4, forward_time: 1ms, backward_factor: 2,
           gradient_bytes: 4MB}
)";

// The `orrery` binary ctest names in ORRERY_BIN; "" outside ctest.
std::string orrery_bin();

// A generated block of the docs (scripts/doc_block.py) against what its script prints now: runs
// `/usr/bin/python3 scripts/<script> --orrery <orrery_bin>` and expects its standard output to
// equal the text between the line `<!-- <tag>:begin (scripts/<script> --update-doc) -->` and
// `<!-- <tag>:end -->` of `doc` (a path in the source tree). Returns the script's output.
std::string expect_doc_block_is_script_output(const std::string& script, const std::string& doc,
                                              const std::string& tag);

// A generated block of the docs against what `orrery <args>` prints now: expects the command's
// standard output to equal the text between the line `<!-- <tag>:begin ... -->` and
// `<!-- <tag>:end -->` of `doc` (a path in the source tree). Returns the output.
std::string expect_doc_block_is_command_output(const std::string& args, const std::string& doc,
                                               const std::string& tag);

// A sweep of 2 x 3 x 2 = 12 synthetic points with 12 different hashes, each a few milliseconds
// (tests/sweep_run_test.cc, tests/slurm_example_test.cc).
extern const char* const kSmallSweepScenario;

// Runs `script` with run_python and parses what it printed as JSON; a non-zero exit or output
// that is no JSON is a test failure (and an empty object).
nlohmann::json run_python_json(const std::string& script);

// Hosts g0..g(n-1) (1 TFLOP/s each), each on its own duplex link of `bandwidth` and `latency`
// to one switch: the smallest platform on which transfers contend only at their ends.
PlatformSource star_platform(int n, double bandwidth, double latency);

// A preset platform built from its YAML (`{preset: dgx-h100, servers: 2}`), with its GPUs as
// collective-bench ranks (node: the server prefix n<S>).
struct BenchPlatform {
  PlatformSource source;
  std::vector<BenchRank> ranks;
};
BenchPlatform bench_platform(const std::string& yaml);

// A model op with its shapes and deps (counts left to fill_op_counts).
ModelOp model_op(const std::string& name, const std::string& type, std::vector<Shape> inputs,
                 Shape output, std::vector<int> deps, const std::string& layer = "");
// The op of `g` named `name`; std::runtime_error when there is none.
const ModelOp& model_op_named(const ModelGraph& g, const std::string& name);

// Two result files of one sweep hold the same thing: scenario, version and platform, every run
// with its parameters and its result (wall times aside), bit for bit, and the same progress.
void expect_same_sweep_results(const std::string& a_path, const std::string& b_path);

}  // namespace orrery::testing

// Skips a test outside ctest, which names the built Python package and the orrery binary.
#define REQUIRE_BUILT_PYTHON_PACKAGE()                                                        \
  if (orrery::testing::python_package_dir().empty() || orrery::testing::orrery_bin().empty()) \
  GTEST_SKIP() << "ORRERY_PYTHONPATH or ORRERY_BIN not set (run through ctest)"
