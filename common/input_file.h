// Opening the files a user names: only regular files are read, so a FIFO, a device or a
// directory given as an input is refused at once instead of blocking forever or reading garbage.
// Every failure is an InputError (common/errors.h) that names the path and what was expected.
#pragma once

#include <cstddef>
#include <string>

namespace orrery {

// Refuses `path` unless it names an existing regular file (symbolic links are followed).
// `what` describes the file in messages ("scenario", "HDF5 result file", ...). Use it before
// handing a path to a library that opens files itself (HDF5, SimGrid).
void require_regular_file(const std::string& path, const std::string& what);

// Reads the whole of the regular file `path` and returns its bytes. Opens without blocking, so a
// FIFO without a writer cannot hang the caller, and checks the type of what was opened (not of
// a path that could change in between). Refuses files larger than `max_bytes` with the size and
// the limit in the message. Throws InputError on any failure, naming `path` and `what`.
std::string read_input_file(const std::string& path, const std::string& what,
                            std::size_t max_bytes = std::size_t{1} << 32);

// A path a file names, as that file means it: relative to `base_dir` (the file's folder),
// normalized; absolute paths and "" unchanged.
std::string resolve_input_path(const std::string& base_dir, const std::string& path);

}  // namespace orrery
