// A language model trained under a parallel plan, as per-GPU op graphs (Megatron-LM's layout):
// every GPU runs its tensor-parallel share of its pipeline stage's layers for each
// micro-batch, in the order its pipeline schedule gives (GPipe or 1F1B); tensor-parallel
// all-reduces (reduce-scatter / all-gather with sequence parallelism) after the attention and
// MLP blocks, forward and backward; activations and their gradients sent between stages; after
// the last micro-batch's backward, each layer's gradients all-reduced (ZeRO-1:
// reduce-scattered, the updated weights all-gathered) over the data-parallel replicas while
// backward goes on, then the optimizer. The bubble, the exposed communication and the
// recomputation come out of the replay.
#pragma once

#include <vector>

#include "engine/execution_graph.h"
#include "strategies/cluster_layout.h"
#include "strategies/llm_pricing.h"
#include "strategies/parallel_plan.h"
#include "strategies/strategy.h"
#include "workloads/llm_config.h"

namespace orrery {

// GPU of rank (tp, cp, dp, pp) in Megatron's default order, tensor parallel innermost so a TP
// group shares a server's NVLink: index = tp + TP x (cp + CP x (dp + DP x pp)).
int llm_rank(const ParallelPlan& plan, int tp, int cp, int dp, int pp);

struct LlmStep {
  ExecutionGraph graph;
  double tokens = 0;       // trained per iteration (global batch x sequence)
  double model_flops = 0;  // per iteration, llm_training_flops_per_token x tokens
};

// `gpus` in rank order, plan.gpus() of them (check_parallel_plan first). The interleaved
// schedule, context parallelism above 1, expert parallelism above 1 and ZeRO-2/3 are refused
// (InputError) until they are modelled.
LlmStep build_llm_step(const LlmConfig& model, const ParallelPlan& plan,
                       const std::vector<ClusterGpu>& gpus, const LlmCosts& costs,
                       const CollectiveOptions& collectives);

}  // namespace orrery
