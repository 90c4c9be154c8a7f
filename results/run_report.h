// What `orrery run` reports about one run, as data: the rows of "Where the time goes", the
// per-device table, traffic by link class and the busiest links. cli/run_command.cc prints a
// RunReport; the Python module (python/orrery_module.cc) returns the same numbers, so the two
// cannot drift apart.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "engine/run_result.h"
#include "platforms/device_spec.h"
#include "results/h5_store.h"

namespace orrery {

// One row of "Where the time goes": a mean over the devices that ran ops (RunSummary).
struct TimeShare {
  std::string column;  // the RunSummary field and /runs column: "compute_s", "idle_s", ...
  std::string label;   // as printed: "compute", "of which memory-bound", ...
  // True for the compute stream's rows, whose top-level rows add up to the iteration time;
  // false for the other streams, which run beside compute and overlap it.
  bool compute_stream = true;
  bool part_of_previous = false;  // an "of which" row: a part of the row above it
  double seconds = 0.0;
  double percent = 0.0;  // of the iteration time; 0 when the iteration time is 0
};

// One row of the per-device table (seconds per training step; a device's streams overlap, so
// they need not add up).
struct DeviceRow {
  std::string name;
  double compute_s = 0.0;       // compute-stream busy time
  double comm_s = 0.0;          // communication-stream busy time
  double exposed_comm_s = 0.0;  // communication while the compute stream was idle
  double copies_s = 0.0;        // host-to-device plus device-to-host copy busy time
  double idle_s = 0.0;          // makespan minus compute-stream busy time
};

// A link that carried bytes, and how long those bytes keep it busy at full bandwidth.
struct LinkLoad {
  const LinkStats* link = nullptr;  // points into the RunResult the report was made from
  double busy_s = 0.0;              // bytes / bandwidth
  double busy_percent = 0.0;        // of the makespan; 0 when the makespan is 0
};

struct RunReport {
  RunSummary summary;
  std::vector<TimeShare> time_shares;  // compute-stream rows first, in the printed order
  // Bytes by link class ("(unclassified)" for links without one), summed over the links each
  // transfer crosses; empty when no link carried bytes.
  std::map<std::string, double> traffic_by_link_class;
  std::vector<DeviceRow> devices;  // parallel to RunResult::devices
  std::vector<LinkLoad> links;     // every link of RunResult::links, busiest first
};

// The report of `result`. The returned LinkLoad pointers point into `result`, which must
// outlive the report.
RunReport make_run_report(const RunResult& result);

// The summary's "Device" line: the run's one GPU (platforms/device_spec.h device_label) and
// whether it priced every op (`ops_priced`, model workloads) or the workload gave the op times.
std::string device_line(const DeviceSpec& device, bool ops_priced);

}  // namespace orrery
