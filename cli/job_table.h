// The table of a run of several jobs (docs/shared-clusters.md), one line per job: what
// `orrery run` prints after the run and `orrery report` prints from the results file.
#pragma once

#include <vector>

#include "results/h5_store.h"

namespace orrery {

void print_job_table(const std::vector<JobRecord>& jobs);

}  // namespace orrery
