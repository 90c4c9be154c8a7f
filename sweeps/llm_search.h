// The parallel plans `orrery plan` searches for a language model: the `search` part of a plan
// file's `plan:` section, expanded into sweep points (one per valid plan) before anything runs.
//
//   workload: {type: llm, model: llama2_70b, seq_len: 4096, global_batch: 1024}
//   plan:
//     search:
//       gpus: [128, 256]                # cluster sizes (sets platform.servers); default: the
//       platform's tp: [1, 2, 4, 8]                # default: the divisors of the GPUs per server
//       pp: [1, 2, 4, 8]                # default: the divisors of GPUs / (tp x cp) up to the
//       layers cp: [1, 2]                      # context parallelism; default: strategy.cp
//       micro_batch: [1, 2, 4]          # default: [1, 2, 4, 8]
//       zero: [0, 1, 3]                 # default: [0, 1, 2, 3]
//       recompute: [selective, full]    # default: [none, selective, full]
//       schedule: [1f1b, interleaved]   # default: [1f1b]
//       virtual_stages: [2, 4]          # interleaved only; default: [2]
//       framework: [megatron-te, pytorch-fsdp]  # software stacks; default: the scenario's
//
// Every combination is checked as a parallel plan (strategies/parallel_plan.h) for the model,
// global batch and GPU count; those that are not plans (tp not dividing the heads, a batch
// that does not split into micro-batches...) are counted and left out. Plans that do not fit
// the GPUs' memory stay: the sweep records them as infeasible without simulating them.
// Sequence parallelism follows strategy.sequence_parallel where tp > 1. Unless the scenario
// says otherwise, plans simulate replica 0 in full (strategy.replicas: one) with every
// collective priced analytically (strategy.collectives.mode and strategy.tp_collectives:
// analytical): a ZeRO-3 plan over 256 replicas would otherwise move some 10^8 flows.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>

namespace orrery {

struct LlmSearchSummary {
  bool active = false;       // the plan has a search section
  int64_t combinations = 0;  // of the listed values
  int64_t plans = 0;         // valid plans, one sweep point each (times the scenario's own axes)
  std::string model;         // the model's name
  // The plans as a sweep section of one zip axis, apart from the scenario's own sweep: its
  // thousands of values stay out of the scenario tree's yaml-cpp memory pool.
  YAML::Node sweep{YAML::NodeType::Map};
};

// Reads `plan.search` (absent: nothing happens) and lists its valid plans. `base` is the
// scenario tree. Throws InputError naming the file and key for malformed lists, cluster sizes
// that are not whole servers, a workload that is not a language model or lacks global_batch,
// and a search with no valid plan.
LlmSearchSummary expand_llm_search(const YAML::Node& plan, const YAML::Node& base,
                                   const std::string& origin);

// With a plan.search section, the fast-simulation defaults written into the scenario tree
// where it has no value: strategy.replicas one, strategy.tp_collectives analytical,
// strategy.collectives.mode analytical.
void apply_llm_search_defaults(const YAML::Node& plan, YAML::Node base);

}  // namespace orrery
