// How far a prediction may be from the measurement: the signed errors of the published runs
// Orrery was checked against that are most like it (`orrery accuracy`, scenario/accuracy.h),
// shipped as scenarios/validation/accuracy.csv (what `orrery accuracy --csv` prints). A run is
// like a validated one by its workload kind, software-stack profile, GPU generation and scale
// band; the band is taken from the narrowest group that holds enough runs, and none is given
// when no group does.
#pragma once

#include <string>
#include <vector>

namespace orrery {

// One validated run: its groups and its signed error (+ too fast: the measured time was the
// predicted one times 1 + error).
struct ValidationRecord {
  std::string kind;
  std::string framework;
  std::string generation;
  std::string scale;
  double error = 0;
};

// The rows of `orrery accuracy --csv` output. InputError naming the file and line of a row that
// does not read.
std::vector<ValidationRecord> read_validation_records(const std::string& path);

// The shipped file's records (shipped_data_dir()/scenarios/validation/accuracy.csv); none when
// it is not there. Read once per process for each file it names.
const std::vector<ValidationRecord>& shipped_validation_records();

// What a run is, as the records are grouped.
struct RunTraits {
  std::string kind;        // llm, cnn... (WorkloadBuild::kind)
  std::string framework;   // profile name
  std::string generation;  // gpu_generation of the device
  std::string scale;       // scale_band of the GPU count
};

// The error band of the group most like `t`: the first of kind + framework + generation +
// scale, kind + framework + generation, kind + generation, kind + framework, kind that holds
// at least kMinRuns runs. Unknown (known false) when none does.
inline constexpr int kMinRuns = 5;
struct ErrorBand {
  bool known = false;
  std::string group;  // e.g. "llm runs under megatron-te on Hopper GPUs"
  int runs = 0;
  double median_abs = 0;  // median |error|
  double low = 0;         // 10th percentile of the signed errors
  double high = 0;        // 90th percentile
};
ErrorBand error_band(const std::vector<ValidationRecord>& records, const RunTraits& t);

// The likely range of a predicted step time: [time x (1 + low), time x (1 + high)].
inline double likely_low(const ErrorBand& b, double seconds) { return seconds * (1 + b.low); }
inline double likely_high(const ErrorBand& b, double seconds) { return seconds * (1 + b.high); }

}  // namespace orrery
