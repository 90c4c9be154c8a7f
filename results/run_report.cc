#include "results/run_report.h"

#include <algorithm>

namespace orrery {
namespace {

double pct(double part, double whole) { return whole > 0 ? 100.0 * part / whole : 0.0; }

}  // namespace

RunReport make_run_report(const RunResult& result) {
  RunReport report;
  const RunSummary& s = report.summary = summarize_run(result);
  const struct {
    const char* column;
    const char* label;
    bool compute_stream;
    bool part_of_previous;
    double seconds;
  } rows[] = {
      {"compute_s", "compute", true, false, s.compute_s},
      {"memory_bound_s", "of which memory-bound", true, true, s.memory_bound_s},
      {"idle_s", "idle (waiting for data, launches, peers)", true, false, s.idle_s},
      {"comm_s", "communication", false, false, s.comm_s},
      {"exposed_comm_s", "of which exposed (compute waits for it)", false, true, s.exposed_comm_s},
      {"io_s", "input/output copies", false, false, s.io_s},
      {"host_s", "host launch thread", false, false, s.host_s}};
  for (const auto& r : rows)
    report.time_shares.push_back({r.column, r.label, r.compute_stream, r.part_of_previous,
                                  r.seconds, pct(r.seconds, s.iteration_time_s)});

  for (const auto& l : result.links)
    report.traffic_by_link_class[l.link_class.empty() ? "(unclassified)" : l.link_class] += l.bytes;

  // Per step, as the summary is.
  const double steps = std::max(1, result.iterations);
  for (const auto& d : result.devices)
    report.devices.push_back({d.name, d.busy[static_cast<int>(StreamClass::kCompute)] / steps,
                              d.busy[static_cast<int>(StreamClass::kComm)] / steps,
                              d.exposed_comm / steps,
                              (d.busy[static_cast<int>(StreamClass::kCopyH2D)] +
                               d.busy[static_cast<int>(StreamClass::kCopyD2H)]) /
                                  steps,
                              d.idle / steps});

  for (const auto& l : result.links)
    report.links.push_back(
        {&l, l.bytes / l.bandwidth, pct(l.bytes / l.bandwidth, result.makespan)});
  // std::sort, not stable_sort: equally busy links keep the order `orrery run` always printed.
  std::sort(report.links.begin(), report.links.end(), [](const LinkLoad& a, const LinkLoad& b) {
    return a.link->bytes / a.link->bandwidth > b.link->bytes / b.link->bandwidth;
  });
  return report;
}

std::string device_line(const DeviceSpec& device, bool ops_priced) {
  const std::string label = device_label(device);
  if (ops_priced) return label + " (prices every op)";
  return label + "; op times as given by the workload (no device prices them)";
}

}  // namespace orrery
