// A job mix: job types with shares, sizes and durations, drawn into one set of concurrent jobs
// that fills the cluster, as a first-come first-served scheduler would start them
// (docs/shared-clusters.md, "Job mixes and capacity studies"):
//
//   job_mix:
//     seed: 1                 # the draw; a sweep over seeds gives several job sets
//     load: 1.0               # draw until this share of the platform's GPUs is asked for
//     placement: packed       # every job's placement policy (jobs.h)
//     types:
//       - name: 1w1g          # jobs are named <type>-<k>
//         share: 50           # relative weight of the type among jobs drawn
//         gpus: 1             # a count, or a list of counts drawn uniformly: [2, 4, 8]
//         iterations: [2, 6]  # a count, or [min, max] drawn uniformly
//         start: [0, 50ms]    # optional: a time, or [min, max] drawn uniformly
//         placement: topology # optional: the type's own policy (a one-server 1wng job)
//         workload: {type: model, model: resnet50, batch: 64}
//         strategy: {type: 1w1g}   # and precision, cost_model: as for a job
//
// The draw takes a type by share, then its size, iterations and start, one job at a time, until
// the GPUs asked for reach load x the platform's GPUs, or a job drawn does not fit in the GPUs
// still free: that job is kept as well, waiting (reported unplaced, and the GPUs left as
// fragmentation), as the head of a first-come first-served queue would wait.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "common/yaml_reader.h"

namespace orrery {

// One entry of a job list, as `jobs:` holds it: its mapping and the path errors name.
struct JobEntryNode {
  YAML::Node node;
  std::string path;
};

// Draws `mix` (the job_mix mapping) into job entries for a platform of `platform_gpus` GPUs.
// The entries share the types' workload, strategy, precision and cost_model nodes, so errors
// in them point at the type's lines. Throws InputError naming the key.
std::vector<JobEntryNode> draw_job_mix(const YamlMap& mix, int platform_gpus);

}  // namespace orrery
