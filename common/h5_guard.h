// Reading an HDF5 file a user names without trusting it. libhdf5 checks its metadata only where
// the file format carries checksums; a flipped bit in a global heap (where variable-length
// strings live) or in a file written by an older format makes it read out of bounds and crash.
// So every read first runs in a forked child: if the child dies, the file is reported as
// corrupt; only when the child read the whole file cleanly does the caller read it again.
#pragma once

#include <exception>
#include <functional>
#include <string>

#include "common/errors.h"
#include "common/h5_util.h"

namespace orrery {

// Refuses `path` unless it is a regular file with the HDF5 signature, then runs `read_all` in a
// child process. Throws InputError naming `path` and `what` ("results file", "profile
// database"...) when the child throws anything or dies. `reads`: how many times read_all reads
// the whole file, for the child's time limit.
void probe_h5_input(const std::string& path, const std::string& what,
                    const std::function<void()>& read_all, int reads = 1);

// probe_h5_input, then `read()` here with HDF5's error printing off; any error it throws becomes
// an InputError naming `path` and `what` (the file is the only input).
template <typename Fn>
auto read_h5_input(const std::string& path, const std::string& what, Fn&& read)
    -> decltype(read()) {
  probe_h5_input(path, what, [&] { read(); });
  h5::QuietErrors quiet;
  try {
    return read();
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    throw InputError(path + ": not a valid " + what + ": " + e.what());
  }
}

}  // namespace orrery
