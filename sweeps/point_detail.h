// One point of a sweep looked at closely: simulated alone, with its per-op timeline, into a
// results file (and a Chrome trace) like `orrery run` writes. For `orrery sweep --point N`.
#pragma once

#include <string>

#include "sweeps/sweep_input.h"

namespace orrery {

struct PointDetailArgs {
  int64_t index = -1;
  std::string output;  // HDF5 file (required)
  std::string trace;   // Chrome trace JSON ("" for none)
  std::string created_by;
  bool quiet = false;
};

// Throws InputError for an index outside the sweep, a missing output, or a bad point.
int run_point_detail(const SweepInput& in, const PointDetailArgs& args);

}  // namespace orrery
