// Helpers shared by the test suites.
#pragma once

#include <string>

namespace orrery::testing {

// A fresh empty directory under the build's temp area, removed by nobody (ctest's tmp is
// disposable); unique per call.
std::string make_temp_dir(const std::string& tag);
// Writes text to a file, creating parent directories.
void write_file(const std::string& path, const std::string& text);
std::string read_file(const std::string& path);
// Absolute path of a file under the source tree.
std::string source_path(const std::string& relative);

}  // namespace orrery::testing
