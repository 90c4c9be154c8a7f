// Writing a result file so that it either appears whole or not at all: readers (and a sweep
// resumed after a crash) must never mistake a half-written file for a result.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace orrery {

// Checks that `path` can be created, calls write(tmp) with tmp = "<path>.tmp.<pid>", flushes
// tmp to disk and renames it over `path`. If anything fails, tmp is removed and an existing
// `path` is left untouched; temp files of `path` left by processes that died (kill -9) are
// removed first.
// Throws InputError naming `path` in every failure case: the directory is missing or
// unwritable; `path` is a directory, a device node, a FIFO or a socket (or a link to one),
// which a rename would replace; another process holds the output's lock (a running sweep);
// or writing, flushing or renaming failed (the message then says why, e.g. "no space left on
// device" or the `ulimit -f` file-size limit).
// std::invalid_argument from `write` (a programming error) passes through unchanged.
void write_atomically(const std::string& path,
                      const std::function<void(const std::string& tmp)>& write);

// Throws InputError naming `path` when it names something other than a regular file (or a link
// to one): a directory, a device node, a FIFO, a socket. What a writer may not replace or remove.
void require_file_or_absent(const std::string& path);

// The lock file a long-running writer of `output` holds (results/output_lock.h): beside the file
// the path resolves to through symbolic links, so two paths to one file share one lock.
std::string output_lock_path(const std::string& output);

// Whether this process holds the lock of `output` (results/output_lock.h tells): its own writes
// of that output pass, everyone else's are refused while the lock is held.
void note_output_lock(const std::string& output, bool held);

// Throws InputError naming `path` when a path given as an input of the same command is the
// same file (through links): writing would destroy what is being read.
void require_not_input(const std::string& path, const std::string& what,
                       const std::vector<std::string>& inputs);

// Throws InputError naming `path` when it holds a file that `ours` does not recognize as one
// this command writes (another program's data: Orrery replaces only its own kind of file). A
// path that does not exist yet passes; non-regular files are refused by write_atomically.
void require_replaceable(const std::string& path, const std::string& what,
                         const std::function<bool(const std::string& path)>& ours);

// The first `n` bytes of the file at `path` ("" when it cannot be read): enough to recognize a
// header without reading a large file.
std::string file_head(const std::string& path, size_t n = 512);

// Makes a write past the file-size limit (`ulimit -f`) fail with EFBIG instead of killing the
// process with SIGXFSZ, so it is reported like any other write error. Idempotent.
void ignore_file_size_signal();

// Why writing into the directory of `path` may have failed, from the file system's state:
// "no space left on device", "the file-size limit (ulimit -f) of N bytes" (when the file
// `written`, if given, reached it), or "".
std::string diagnose_write_failure(const std::string& path, const std::string& written = "");

}  // namespace orrery
