// Several training jobs sharing one platform (docs/shared-clusters.md):
//
//   jobs:
//     - name: resnet                  # default job<i>
//       gpus: 8                       # how many, placed by `placement`; or a list of GPU hosts
//                                     # or indices ([n0_gpu0, n1_gpu0] / [0, 8]), in rank order
//       placement: packed             # packed (default), spread, topology, server or random
//       seed: 1                       # random placement's seed (default 1)
//       start: 10ms                   # start offset (default 0)
//       iterations: 10                # training steps, one after the other (default 1)
//       workload: {type: model, model: resnet50, batch: 64}
//       strategy: {type: allreduce}   # and precision, cost_model: as in a one-workload scenario
//
// Or `job_mix:` (scenario/job_mix.h), job types drawn into such a list.
//
// Jobs are placed in the order listed, each on GPUs no earlier job holds (strategies/
// job_placement.h); a job that does not fit is left out and reported. Each job's workload is
// built on its own GPUs exactly as a one-workload scenario's would be, and the jobs become one
// execution graph (engine/job_compose.h) that a single replay runs.
#pragma once

#include <string>
#include <vector>

#include "common/yaml_reader.h"
#include "engine/job_compose.h"
#include "scenario/workload_reader.h"
#include "strategies/job_placement.h"
#include "workloads/synthetic_dp.h"

namespace orrery {

struct ScenarioJob {
  std::string name;
  std::string placement;          // policy name, or "explicit"
  std::vector<std::string> gpus;  // its GPU hosts, in rank order
  std::string workload_summary;   // one line (model workloads), else the workload type
};

// A job laid out alone on GPUs of its own (its iterations composed, no start offset).
struct JobAlone {
  ExecutionGraph graph;  // empty: not built
  JobSpan span;
};

struct JobsSetup {
  std::vector<ScenarioJob> jobs;      // the placed jobs, parallel to spans
  std::vector<JobSpan> spans;         // where each lies in Scenario::graph
  std::vector<std::string> unplaced;  // jobs that did not fit, and why
  int gpus = 0;                       // the platform's
  int free_gpus = 0;                  // no placed job holds them
  int fragmented_gpus = 0;            // free while a job waits for more (Placement)
  // The jobs alone on their best GPUs (packed placement on an empty platform: the fewest
  // servers), composed with their iterations, one per distinct job (jobs of the same workload
  // and size share one); best_of, parallel to jobs, indexes it, or is -1 where a job has those
  // GPUs already. What a placement costs is the job's time alone there against here.
  std::vector<JobAlone> best_placement;
  std::vector<int> best_of;
};

struct JobsBuild {
  ExecutionGraph graph;  // every placed job's, composed (engine/job_compose.h)
  JobsSetup setup;
  bool ops_priced = false;  // every job's ops priced on its GPUs' models
};

// Reads root's `jobs` list (or draws its `job_mix`). `gpus`, `layout` and `platform` (with its
// gpu_kind, on a mixed cluster) are the whole platform's (workload_reader.h).
JobsBuild read_jobs(const YamlMap& root, const std::string& base_dir,
                    const std::vector<GpuPlacement>& gpus, const ClusterLayout& layout,
                    const WorkloadTarget& platform);

}  // namespace orrery
