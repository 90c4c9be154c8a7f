// Helpers shared by the test suites.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

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
// Absolute path of a file under the source tree.
std::string source_path(const std::string& relative);

}  // namespace orrery::testing
