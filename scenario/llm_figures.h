// What a language-model run reports beside its iteration time: throughput as users compare it
// (tokens/s, TFLOP/s per GPU, MFU), a training run's length, and where an average GPU's
// iteration goes. Shared by `orrery run`, sweeps (per-point metrics) and `orrery plan`.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "engine/run_result.h"
#include "scenario/llm_workload.h"

namespace orrery {

// Seconds of one iteration on an average GPU that computes (the replay's DeviceStats, over
// the GPUs with compute ops), summing to the iteration time: compute busy split into
// recomputation and the rest; communication not hidden behind compute, charged to the most
// blocking kind running (tensor-parallel, then expert-parallel all-to-all, then the context-
// parallel exchange of keys and values, then pipeline sends, then data-parallel); and idle time
// with nothing running (the pipeline bubble and waits on other stages).
struct LlmBreakdown {
  double compute = 0;
  double recompute = 0;
  double tp = 0;
  double ep = 0;
  double cp = 0;
  double pp = 0;
  double dp = 0;
  double bubble = 0;
};

struct LlmFigures {
  double gpus = 0;
  double iteration_s = 0;
  double tokens_per_s = 0;          // all GPUs together
  double tokens_per_s_per_gpu = 0;  // as published benchmarks quote it
  double tflops_per_gpu = 0;  // model FLOPs (no recomputation) per second per GPU, / 1e12
  double mfu = 0;  // fraction of the GPU's dense peak in the plan's precision (LlmRunInfo)
  double train_days = 0;      // of workload.train_tokens (0 when not given)
  double gpu_hours = 0;       // likewise
  LlmBreakdown breakdown;
  ParallelPlan plan;  // the plan that ran (LlmRunInfo::plan)
};

LlmFigures llm_figures(const LlmRunInfo& info, const RunResult& r);

// The figures as named numbers, "llm.tokens_per_s", "llm.mfu", "llm.bubble_s"...: a sweep
// stores them with each point, and with them the plan that ran as numbers ("llm.tp", "llm.pp",
// "llm.dp", "llm.cp", "llm.ep", "llm.micro_batch", "llm.zero", "llm.virtual_stages", and
// "llm.recompute" and "llm.schedule" as their place in the name tables of
// strategies/parallel_plan.h: recompute 0 none, 1 selective, 2 full; schedule 0 gpipe, 1 1f1b,
// 2 interleaved). llm_figures_of reads them back (iteration_s is not among them: it is the
// run's makespan); names it does not know are passed over.
std::vector<std::pair<std::string, double>> llm_metrics(const LlmFigures& f);
LlmFigures llm_figures_of(const std::vector<std::pair<std::string, double>>& metrics);

}  // namespace orrery
