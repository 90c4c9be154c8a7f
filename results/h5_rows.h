// The in-memory rows of each compound dataset in docs/hdf5-layout.md, and their HDF5 types.
// Shared by the writer and the reader so both always agree on member names and types.
// Strings are pointers: borrowed from the caller's data when writing, allocated by HDF5 (and
// freed with h5::reclaim) when reading.
#pragma once

#include <cstdint>

#include "common/h5_util.h"

namespace orrery::h5 {

struct RunRow {  // /runs
  const char* name;
  double iteration_time_s;
  double compute_s;
  double comm_s;
  double io_s;
  double host_s;
  double idle_s;
  double exposed_comm_s;
  double memory_bound_s;
  int64_t activities;
  double wall_s;
  double analytical_s;  // absent from files of format_version 1
};

struct DeviceRow {  // /runs_detail/<i>/devices
  const char* name;
  double busy_compute;
  double busy_comm;
  double busy_copy_h2d;
  double busy_copy_d2h;
  double busy_host;
  double idle;
  double exposed_comm;
  double memory_bound;
  int64_t ops;
};

struct LinkRow {  // /runs_detail/<i>/links
  const char* name;
  double bandwidth;
  double latency;
  double bytes;
  const char* link_class;
};

struct TimelineRowH5 {  // /runs_detail/<i>/timeline
  const char* op;
  const char* device;
  const char* stream;
  const char* phase;
  double start;
  double end;
};

struct JobRow {  // /jobs
  const char* name;
  const char* placement;
  int64_t gpus;
  int64_t iterations;
  double mean_s;
  double min_s;
  double max_s;
  double stdev_s;
  double alone_mean_s;
  double slowdown;
  double end_s;
  double best_mean_s;     // absent from files of format_version 3 and before
  double placement_cost;  // likewise
};

struct JobIterationRow {  // /job_iterations
  const char* job;
  int64_t iteration;
  double time_s;
};

// Each builds the memory type of its row; `str` is a string_type().
// Files of format_version 1 have no analytical_s column: read them with_analytical false.
Compound run_row_type(hid_t str, bool with_analytical = true);
Compound device_row_type(hid_t str);
Compound link_row_type(hid_t str);
Compound timeline_row_type(hid_t str);
// Files of format_version 3 and before have no best_mean_s or placement_cost: read them
// with_best false.
Compound job_row_type(hid_t str, bool with_best = true);
Compound job_iteration_row_type(hid_t str);

}  // namespace orrery::h5
