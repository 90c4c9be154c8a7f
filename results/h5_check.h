// A results file checked the way `orrery report` reads it, and then whole, before another
// reader (h5py, for orrery.load_runs and load_devices) opens it: libhdf5 can crash or hang on a
// damaged file, and a crash in the Python interpreter loses the user's session.
#pragma once

#include <string>

namespace orrery {

// Reads `path` with read_results_h5 and then every table the Python loaders read (/runs,
// /run_params, /run_values/<parameter> with its unit, each run's devices), in a forked child
// with a time limit. Throws InputError naming the file when that fails: missing, not HDF5, not
// an Orrery results file, of a newer format, or damaged (a crash or a hang of the library
// included). Never touches libhdf5 in the calling process.
void check_results_file(const std::string& path);

}  // namespace orrery
