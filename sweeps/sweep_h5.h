// A sweep's HDF5 file: the ordinary result layout (results/h5_store.h, one run per finished
// point) plus a /sweep group whose attributes say how far the sweep got, so a file written by
// an interrupted sweep says so. Layout: docs/sweeps.md.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "results/h5_store.h"

namespace orrery {

struct SweepFileStatus {
  bool present = false;  // false: the file has no /sweep group (not written by a sweep)
  int points_total = 0;
  int points_done = 0;  // finished, ok or failed
  int points_failed = 0;
  bool complete = false;                     // every point finished
  std::map<std::string, std::string> attrs;  // further string attributes (plan target, ...)
};

// Writes atomically (temp file, fsync, rename): readers never see a partial file.
void write_sweep_h5(const std::string& path, const ResultFileMeta& meta,
                    const std::vector<RunRecord>& runs, const SweepFileStatus& status);

// The /sweep group of a results file; `present` false when it has none. Throws InputError
// when the file cannot be read as HDF5.
SweepFileStatus read_sweep_status(const std::string& path);

}  // namespace orrery
