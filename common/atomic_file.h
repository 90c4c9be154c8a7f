// Writing a result file so that it either appears whole or not at all: readers (and a sweep
// resumed after a crash) must never mistake a half-written file for a result.
#pragma once

#include <functional>
#include <string>

namespace orrery {

// Checks that `path` can be created, calls write(tmp) with tmp = "<path>.tmp.<pid>", flushes
// tmp to disk and renames it over `path`. If anything fails, tmp is removed and an existing
// `path` is left untouched.
// Throws InputError naming `path` in every failure case: the directory is missing or
// unwritable, `path` is a directory, or writing, flushing or renaming failed (the message
// then says why, e.g. "no space left on device" or the `ulimit -f` file-size limit).
// std::invalid_argument from `write` (a programming error) passes through unchanged.
void write_atomically(const std::string& path,
                      const std::function<void(const std::string& tmp)>& write);

// Makes a write past the file-size limit (`ulimit -f`) fail with EFBIG instead of killing the
// process with SIGXFSZ, so it is reported like any other write error. Idempotent.
void ignore_file_size_signal();

// Why writing into the directory of `path` may have failed, from the file system's state:
// "no space left on device", "the file-size limit (ulimit -f) of N bytes" (when the file
// `written`, if given, reached it), or "".
std::string diagnose_write_failure(const std::string& path, const std::string& written = "");

}  // namespace orrery
