#include "cli/job_table.h"

#include <cstdio>

#include "common/units.h"

namespace orrery {

void print_job_table(const std::vector<JobRecord>& jobs) {
  // "alone" is the job by itself on the same GPUs, so "slowdown" is what sharing costs; "best"
  // is the job by itself on the GPUs packed placement gives it on an empty platform, so
  // "placement" is what these GPUs cost against those.
  std::printf("%-16s %-9s %5s %6s %12s %12s %12s %9s %12s %9s\n", "job", "placement", "GPUs",
              "iters", "mean iter", "spread", "alone", "slowdown", "best alone", "placement");
  for (const JobRecord& j : jobs)
    std::printf("%-16s %-9s %5d %6zu %12s %12s %12s %8.3fx %12s %8.3fx\n", j.name.c_str(),
                j.placement.c_str(), j.gpus, j.iteration_times.size(),
                format_time(j.mean).c_str(), format_time(iteration_spread(j.max, j.min)).c_str(),
                format_time(j.alone_mean).c_str(), j.slowdown, format_time(j.best_mean).c_str(),
                j.placement_cost);
}

}  // namespace orrery
