// `orrery report`: a results file (a run or a sweep) as a table on the terminal and as CSV.
#pragma once

#include <ostream>
#include <string>

#include "results/h5_store.h"
#include "sweeps/sweep_h5.h"

namespace orrery {

struct ReportOptions {
  bool all_params = false;  // also parameters that are equal in every run
  size_t max_width = 24;    // longer parameter values are shortened in the table (not in CSV)
};

// Header (scenario, version, sweep progress), one row per run with its varying parameters,
// status and headline times, then the errors of failed points.
void write_report_table(std::ostream& out, const LoadedResults& results,
                        const SweepFileStatus& status, const ReportOptions& options);

// Every run, every parameter, numbers in the shortest text that reads back exactly: index, name,
// parameters (sorted by name), status, error, iteration_time_s, iterations_per_s, compute_s,
// comm_s, io_s, host_s, idle_s, activities, wall_s. RFC 4180 quoting.
void write_report_csv(std::ostream& out, const LoadedResults& results);

}  // namespace orrery
