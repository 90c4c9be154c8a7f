// Helpers shared by the test suites.
#pragma once

#include <string>

namespace orrery::testing {

// A fresh empty directory under the system's temp area, unique per call; removed with
// everything in it when the test process exits (kept if ORRERY_KEEP_TEST_DIRS is set).
std::string make_temp_dir(const std::string& tag);
// Writes text to a file, creating parent directories.
void write_file(const std::string& path, const std::string& text);
std::string read_file(const std::string& path);
// Absolute path of a file under the source tree.
std::string source_path(const std::string& relative);

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

}  // namespace orrery::testing
