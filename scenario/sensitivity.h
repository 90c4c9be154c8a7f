// How an answer moves when each uncertain input moves within its own uncertainty (`orrery run
// --sensitivity`): the GPUs' kernel times, the links' rates and the host's per-kernel launch
// work, each moved down and up by what validation says it is off by, one at a time, the rest
// as the scenario has them.
#pragma once

#include <string>
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

}  // namespace orrery
