// Writing a result file so that it either appears whole or not at all: readers (and a sweep
// resumed after a crash) must never mistake a half-written file for a result.
#pragma once

#include <functional>
#include <string>

namespace orrery {

// Checks that `path` can be created, calls write(tmp) with tmp = "<path>.tmp.<pid>", flushes
// tmp to disk and renames it over `path`. If anything throws, tmp is removed and the exception
// propagates; an existing `path` is then left untouched.
// Throws InputError when the directory is missing or unwritable or `path` is a directory, and
// std::runtime_error when the flush or rename fails.
void write_atomically(const std::string& path,
                      const std::function<void(const std::string& tmp)>& write);

}  // namespace orrery
