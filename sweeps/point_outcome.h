// What running one sweep point produced: a result or an error. Travels as bytes from a child
// process, between MPI ranks, and into the journal.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace orrery {

struct PointOutcome {
  int64_t index = 0;
  uint64_t hash = 0;
  bool ok = false;
  std::string error;         // why the point failed or is infeasible ("" when ok)
  std::string result_bytes;  // serialize_run_result() of the point's RunResult (when ok)
  // Not ok because the point asks for what the hardware cannot do (common/errors.h
  // InfeasibleError, or a plan that does not fit memory): recorded, not counted as failed.
  bool infeasible = false;
  // Figures the workload reports beside the run (a language model's tokens/s, MFU and time
  // breakdown, scenario/llm_figures.h; a shared cluster's throughput, slowdown and
  // utilization, scenario/job_report.h; the likely range of the step time from the validated
  // runs most like it, scenario/error_band.h; the sensitivity variants, scenario/sensitivity.h;
  // a training campaign's figures, scenario/campaign_run.h), stored with the point's parameters;
  // their names start with "llm.", "jobs.", "likely.", "sensitivity." or "campaign."
  // (is_metric_name), which is how a resumed sweep finds them again.
  std::vector<std::pair<std::string, double>> metrics;
};

inline bool is_metric_name(const std::string& key) {
  return key.rfind("llm.", 0) == 0 || key.rfind("jobs.", 0) == 0 || key.rfind("likely.", 0) == 0 ||
         key.rfind("sensitivity.", 0) == 0;
}

// The likely step time of a point, low and high (scenario/error_band.h): false when no
// validated run is like it.
inline bool likely_range(const PointOutcome& o, double* low, double* high) {
  double l = 0, h = 0;
  for (const auto& [name, value] : o.metrics) {
    if (name == "likely.low_s") l = value;
    if (name == "likely.high_s") h = value;
  }
  if (l <= 0 || h < l) return false;
  *low = l;
  *high = h;
  return true;
}

std::string serialize_outcome(const PointOutcome& o);
// Throws std::runtime_error on truncated or malformed bytes.
PointOutcome deserialize_outcome(const std::string& bytes);

}  // namespace orrery
