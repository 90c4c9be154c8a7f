// The one reader of a language model's parallel plan from a scenario: the `strategy` keys (tp,
// pp, cp, ep, sequence_parallel, tp_comm_overlap, pp_sync, schedule, virtual_stages, zero,
// recompute, precision, flash_attention, attention_impl, capacity_factor, bucket, reserved,
// account_for_embedding_and_loss) and the batch keys of the `workload` (micro_batch, global_batch,
// seq_len). Scenarios (scenario/llm_workload.h) and plan searches (sweeps/llm_search.h) both read
// through it, so a key means the same in both; names of schedules, recomputation and precisions
// come from the tables of strategies/parallel_plan.h.
#pragma once

#include "common/yaml_reader.h"
#include "strategies/llm_memory.h"
#include "strategies/parallel_plan.h"

namespace orrery {

// Every key above, checked (degrees at least 1, names from the tables); dp is left at 1 (see
// set_data_parallel). `memory` gets bucket and reserved. Throws InputError naming the key.
ParallelPlan read_llm_plan(const YamlMap& workload, const YamlMap& strategy, MemoryOptions* memory);

// dp = gpus / (tp x pp x cp). Throws InfeasibleError naming strategy.tp when tp x pp x cp does
// not divide the GPUs: a plan for another cluster, which sweeps record and pass over.
void set_data_parallel(const YamlMap& strategy, int gpus, ParallelPlan* plan);

// Where check_parallel_plan's keys were given: the batch keys in `workload`, the rest in
// `strategy` ("s.yaml:9: strategy.tp"). Both maps must outlive the result.
PlanKeyWhere plan_key_where(const YamlMap& workload, const YamlMap& strategy);

}  // namespace orrery
