// A language model trained under a parallel plan, as per-GPU op graphs (Megatron-LM's layout):
// every GPU runs its tensor-parallel share of its pipeline stage's layers (its model chunks,
// interleaved) for each micro-batch, in the order its pipeline schedule gives (GPipe, 1F1B,
// interleaved 1F1B); tensor-parallel all-reduces (reduce-scatter / all-gather with sequence
// parallelism) around the attention and MLP blocks, forward and backward; MoE all-to-alls over
// the expert-parallel group; with context parallelism each GPU holding 1/cp of every sequence
// and exchanging keys and values around the CP group for attention (ring attention, overlapped
// with the local chunk's attention); activations and their gradients sent between stages; each
// layer's gradients reduced over the data-parallel replicas as backward makes them (all-reduce, or
// ZeRO's reduce-scatter and weight all-gathers), then the optimizer. The bubble, the exposed
// communication and the recomputation come out of the replay (docs/strategies.md).
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

// How much of the step is simulated in detail. The data-parallel replicas of a stage run the
// same ops at the same times, so `all_replicas: false` simulates replica 0 in full and the
// others only as members of the data- and expert-parallel collectives (their links still carry
// those collectives' flows; their own pipeline and tensor-parallel traffic is left out): DP
// times fewer ops. TP collectives stay inside a server's NVLink domain, where nothing else
// shares the links; `tp_analytical` prices them with the alpha-beta model even when the other
// collectives run as flows.
// With `tp_analytical`, `fuse_passes` builds each pass that has no data-parallel traffic inside
// it (every forward but ZeRO-3's, every backward but the last micro-batch's under ZeRO-0/1) as
// one compute op per phase and one repeated analytical op per kind of TP collective: the same
// pass time, some 10x fewer ops. Off, or with expert parallelism, every layer has its ops.
//
// `one_tp_rank` simulates TP rank 0 of each simulated replica only, the others as its mirrors
// (Device::mirrors, engine/execution_graph.h): with analytical TP collectives the TP ranks run
// identical ops in lockstep, and their pipeline, data-parallel and context-parallel traffic
// are copies of rank 0's between the same ranks of other groups. The TP collectives still span
// the whole group, the other collectives the TP rank 0 of each group; the replay loads every
// link as all the copies would. TP times fewer ops and flows; the same step time where the
// copies' routes are alike (a NIC per GPU; tests/mirror_test.cc). one_tp_rank_applies() says
// when it may be set.
struct LlmBuildOptions {
  bool all_replicas = true;
  bool tp_analytical = false;
  bool fuse_passes = true;
  bool one_tp_rank = false;
};

// Whether `one_tp_rank` applies to `plan`: its TP collectives analytical, and every other
// collective analytical or among ranks of one TP index (no experts folded over TP, no DeepEP
// legs inside servers), and nothing offloaded to CPUs the TP ranks share.
bool one_tp_rank_applies(const ParallelPlan& plan, bool tp_analytical, bool all_analytical);

// The comm queues of the llm strategy's GPUs, from the most blocking: RunResult's
// DeviceStats::exposed_by_queue charges exposed time in this order.
inline constexpr int kLlmTpQueue = 0;
inline constexpr int kLlmEpQueue = 1;
inline constexpr int kLlmCpQueue = 2;
inline constexpr int kLlmSendFwdQueue = 3;
inline constexpr int kLlmSendBwdQueue = 4;
inline constexpr int kLlmDpQueue = 5;

// `gpus` in rank order, plan.gpus() of them (check_parallel_plan first).
LlmStep build_llm_step(const LlmConfig& model, const ParallelPlan& plan,
                       const std::vector<ClusterGpu>& gpus, const LlmCosts& costs,
                       const CollectiveOptions& collectives, const LlmBuildOptions& build = {});

}  // namespace orrery
