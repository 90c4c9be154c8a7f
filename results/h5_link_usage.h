// The /runs_detail/<i>/link_utilization dataset (docs/hdf5-layout.md): per-link utilization
// over time, one row per row of the run's `links` table, one column per time bin. Shared by the
// writer (h5_store.cc) and the reader (h5_read.cc).
#pragma once

#include "common/h5_util.h"
#include "engine/run_result.h"

namespace orrery::h5 {

// Writes the dataset under `group` when the run sampled link usage (link_usage_bin_width > 0)
// and has links; nothing otherwise. Throws std::invalid_argument when the links' utilization
// series differ in length, std::runtime_error on HDF5 failures.
void write_link_utilization(hid_t group, const RunResult& result);

// Fills result->links[i].utilization and result->link_usage_bin_width from the dataset when
// `group` has one; result->links must already hold the `links` table. Throws
// std::runtime_error when the dataset is not a 2-D float array with one row per link, or its
// bin_width attribute is not one positive number.
void read_link_utilization(hid_t group, RunResult* result);

}  // namespace orrery::h5
