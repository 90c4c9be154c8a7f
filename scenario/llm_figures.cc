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
  f.plan = info.plan;
  if (r.makespan <= 0) return f;
  f.tokens_per_s = info.tokens / r.makespan;
  f.tokens_per_s_per_gpu = info.gpus > 0 ? f.tokens_per_s / info.gpus : 0.0;
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

namespace {

// Every figure a metric carries, by name: the one list both directions read.
template <typename Figures, typename Visit>
void each_metric(Figures& f, Visit visit) {
  auto& b = f.breakdown;
  visit("llm.gpus", f.gpus);
  visit("llm.tokens_per_s", f.tokens_per_s);
  visit("llm.tokens_per_s_per_gpu", f.tokens_per_s_per_gpu);
  visit("llm.tflops_per_gpu", f.tflops_per_gpu);
  visit("llm.mfu", f.mfu);
  visit("llm.compute_s", b.compute);
  visit("llm.recompute_s", b.recompute);
  visit("llm.tp_exposed_s", b.tp);
  visit("llm.ep_exposed_s", b.ep);
  visit("llm.cp_exposed_s", b.cp);
  visit("llm.pp_exposed_s", b.pp);
  visit("llm.dp_exposed_s", b.dp);
  visit("llm.bubble_s", b.bubble);
  visit("llm.train_days", f.train_days);
  visit("llm.gpu_hours", f.gpu_hours);
}

// The plan's numbers, by name: the one list both directions read.
template <typename Plan, typename Visit>
void each_plan_number(Plan& p, Visit visit) {
  visit("llm.tp", p.tp);
  visit("llm.pp", p.pp);
  visit("llm.dp", p.dp);
  visit("llm.cp", p.cp);
  visit("llm.ep", p.ep);
  visit("llm.micro_batch", p.micro_batch);
  visit("llm.zero", p.zero);
  visit("llm.virtual_stages", p.virtual_stages);
}

}  // namespace

std::vector<std::pair<std::string, double>> llm_metrics(const LlmFigures& f) {
  std::vector<std::pair<std::string, double>> m;
  each_metric(f, [&](const char* name, double v) {
    const std::string key = name;
    // A training run's figures only when workload.train_tokens asked for them.
    if ((key == "llm.train_days" || key == "llm.gpu_hours") && f.train_days <= 0) return;
    m.emplace_back(key, v);
  });
  each_plan_number(f.plan, [&](const char* name, int v) { m.emplace_back(name, v); });
  m.emplace_back("llm.recompute", static_cast<double>(f.plan.recompute));
  m.emplace_back("llm.schedule", static_cast<double>(f.plan.schedule));
  return m;
}

LlmFigures llm_figures_of(const std::vector<std::pair<std::string, double>>& metrics) {
  LlmFigures f;
  auto find = [&](const char* name, double* v) {
    for (const auto& [k, value] : metrics)
      if (k == name) *v = value;
  };
  each_metric(f, [&](const char* name, double& v) { find(name, &v); });
  each_plan_number(f.plan, [&](const char* name, int& v) {
    double d = v;
    find(name, &d);
    v = static_cast<int>(d);
  });
  double recompute = static_cast<double>(f.plan.recompute);
  double schedule = static_cast<double>(f.plan.schedule);
  find("llm.recompute", &recompute);
  find("llm.schedule", &schedule);
  f.plan.recompute = static_cast<Recompute>(static_cast<int>(recompute));
  f.plan.schedule = static_cast<PipelineSchedule>(static_cast<int>(schedule));
  return f;
}

}  // namespace orrery
