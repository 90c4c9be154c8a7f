#include "scenario/llm_figures.h"

#include <algorithm>

#include "strategies/llm_strategy.h"

namespace orrery {
namespace {

double queue(const DeviceStats& d, int q) {
  return q < static_cast<int>(d.exposed_by_queue.size()) ? d.exposed_by_queue[q] : 0.0;
}

LlmBreakdown breakdown_of(const RunResult& r) {
  LlmBreakdown b;
  int n = 0;
  for (const DeviceStats& d : r.devices) {
    const double busy = d.busy[static_cast<int>(StreamClass::kCompute)];
    if (busy <= 0) continue;  // a replica simulated only in its collectives
    ++n;
    double recompute = 0;
    for (const auto& [phase, seconds] : d.compute_by_phase)
      if (phase == "recompute") recompute += seconds;
    b.recompute += recompute;
    b.compute += busy - recompute;
    b.tp += queue(d, kLlmTpQueue);
    b.ep += queue(d, kLlmEpQueue);
    b.cp += queue(d, kLlmCpQueue);
    b.pp += queue(d, kLlmSendFwdQueue) + queue(d, kLlmSendBwdQueue);
    b.dp += queue(d, kLlmDpQueue);
    b.bubble += std::max(0.0, r.makespan - busy - d.exposed_comm);
  }
  if (n == 0) return b;
  for (double* v : {&b.compute, &b.recompute, &b.tp, &b.ep, &b.cp, &b.pp, &b.dp, &b.bubble})
    *v /= n;
  return b;
}

}  // namespace

LlmFigures llm_figures(const LlmRunInfo& info, const RunResult& r) {
  LlmFigures f;
  f.iteration_s = r.makespan;
  f.gpus = info.gpus;
  f.breakdown = breakdown_of(r);
  if (r.makespan <= 0) return f;
  f.tokens_per_s = info.tokens / r.makespan;
  const double per_gpu = info.gpus > 0 ? info.model_flops / r.makespan / info.gpus : 0.0;
  f.tflops_per_gpu = per_gpu / 1e12;
  f.mfu = info.peak_flops_per_gpu > 0 ? per_gpu / info.peak_flops_per_gpu : 0.0;
  if (info.train_tokens > 0 && f.tokens_per_s > 0) {
    const double seconds = info.train_tokens / f.tokens_per_s;
    f.train_days = seconds / 86400;
    f.gpu_hours = seconds * info.gpus / 3600;
  }
  return f;
}

std::vector<std::pair<std::string, double>> llm_metrics(const LlmFigures& f) {
  const LlmBreakdown& b = f.breakdown;
  std::vector<std::pair<std::string, double>> m = {{"llm.gpus", f.gpus},
                                                   {"llm.tokens_per_s", f.tokens_per_s},
                                                   {"llm.tflops_per_gpu", f.tflops_per_gpu},
                                                   {"llm.mfu", f.mfu},
                                                   {"llm.compute_s", b.compute},
                                                   {"llm.recompute_s", b.recompute},
                                                   {"llm.tp_exposed_s", b.tp},
                                                   {"llm.ep_exposed_s", b.ep},
                                                   {"llm.cp_exposed_s", b.cp},
                                                   {"llm.pp_exposed_s", b.pp},
                                                   {"llm.dp_exposed_s", b.dp},
                                                   {"llm.bubble_s", b.bubble}};
  if (f.train_days > 0) {
    m.emplace_back("llm.train_days", f.train_days);
    m.emplace_back("llm.gpu_hours", f.gpu_hours);
  }
  return m;
}

}  // namespace orrery
