// How an answer moves when each uncertain input moves within its own uncertainty (`orrery run
// --sensitivity`, `output.sensitivity: true` in a scenario or a sweep): the GPUs' kernel times,
// the links' rates and the host's per-kernel launch work, each moved down and up by what
// validation says it is off by, one at a time, the rest as the scenario has them; and the
// overlap of communication with compute, off and on.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "scenario/scenario.h"

namespace orrery {

struct UncertainInput {
  std::string name;    // "kernels", "links", "host"
  double uncertainty;  // relative: the input moves to (1 - u) and (1 + u) of itself
  std::string basis;   // where the uncertainty comes from
};

// The inputs and their uncertainties:
//  - kernels: every op on a GPU's compute streams, +-13%: the median error of the Tensor Core
//    GEMM models with one GPU left out (bf16, docs/validation.md);
//  - links: every link's rate, +-17%: the median error of the collectives against
//    AIConfigurator's nccl-tests tables over every size (docs/collectives.md);
//  - host: every op on a host stream (kernel launches), +-25%: Lin et al.'s launch costs are one
//    value per platform (8 us "close to each other", 10 us "to approximate all the CUDA runtime
//    functions"), taken as good to a quarter.
const std::vector<UncertainInput>& uncertain_inputs();

// A copy of `sc` whose `input` is `factor` times as fast: kernels and host work take 1/factor of
// their time, links carry factor times their rate. False (and `out` untouched) when the
// scenario has nothing of that input (no generated topology for links, no host work).
bool scaled_input(const Scenario& sc, const std::string& input, double factor, Scenario* out);

// How far one input moves the step.
struct SensitivityRow {
  std::string input;     // kernels, links, host, overlap
  std::string moved_by;  // "+-13%", "on/off"
  std::string basis;     // why it moves that far
  bool applies = false;  // false: the scenario has nothing of it
  std::string note;      // why it does not apply, when that is an error worth saying
  double fast_s = 0;     // the step with the input at its fast end (overlap: the shorter step)
  double slow_s = 0;     // at its slow end (overlap: the longer step)
};

// Simulates `sc` again for each end of each input, each run in a forked child, and returns
// the rows in uncertain_inputs() order, then overlap. Overlap is a choice of the software
// stack, not a speed: its two steps are the scenario built again (from sc.resolved_yaml) with
// tensor-parallel communication overlapped (with sequence parallelism) and pipeline sends
// asynchronous, or neither, for a language model; with gradient buckets all-reduced during
// backward or after it (strategy.overlap) for a data-parallel model workload.
std::vector<SensitivityRow> sensitivity_runs(const Scenario& sc);

// The rows as the named figures a run or a sweep point stores: "sensitivity.INPUT.fast_s" and
// "sensitivity.INPUT.slow_s" for each input that applies.
std::vector<std::pair<std::string, double>> sensitivity_metrics(
    const std::vector<SensitivityRow>& rows);

}  // namespace orrery
