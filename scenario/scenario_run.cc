#include "scenario/scenario_run.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <utility>

#include "common/errors.h"
#include "orrery_version.h"
#include "scenario/sensitivity.h"

namespace orrery {
namespace {

ResultFileMeta meta_of(const Scenario& sc, const RunOptions& options) {
  ResultFileMeta meta;
  meta.scenario_text = sc.text;
  meta.orrery_version = ORRERY_VERSION;
  meta.platform_description = sc.platform_summary;
  meta.created_by = options.created_by;
  meta.device = device_label(sc.device);
  if (sc.llm) {
    meta.tokens_per_iteration = sc.llm->tokens;
    meta.model_flops_per_iteration = sc.llm->model_flops;
    meta.memory = sc.llm->memory;
  }
  return meta;
}

// What the campaign needs of a run: its step, what its GPUs do in it, the job's parts.
CampaignStep campaign_step(const Scenario& sc, const ScenarioRun& run) {
  CampaignStep step;
  step.step_s = run.iteration_s;
  step.tokens_per_step = sc.llm ? sc.llm->tokens : 0;
  // What an average GPU does, over the GPUs that ran kernels: a language model simulated one
  // replica in full leaves the others' compute to that one (strategy.replicas: one).
  double n = 0, compute = 0, memory = 0, comm = 0;
  for (const DeviceStats& d : run.result.devices) {
    const double busy = d.busy[static_cast<int>(StreamClass::kCompute)];
    if (busy <= 0) continue;
    ++n;
    compute += busy;
    memory += d.memory_bound;
    comm += d.exposed_comm;
  }
  const double span = run.result.makespan * n;
  if (span > 0) {
    step.activity.compute_bound = std::max(0.0, compute - memory) / span;
    step.activity.memory_bound = memory / span;
    step.activity.communication = comm / span;
  }
  std::set<std::string> gpu_hosts, used;
  for (const auto& h : sc.platform.topology.hosts)
    if (h.role == "gpu") gpu_hosts.insert(h.name);
  for (const auto& d : sc.graph.devices)
    if (gpu_hosts.count(d.host)) used.insert(d.host);
  step.parts.gpus = sc.llm
                        ? sc.llm->gpus
                        : static_cast<double>(used.empty() ? sc.graph.devices.size() : used.size());
  // A node is a host: one operating system over two CPU sockets, as the fleet studies count
  // servers (an 8-GPU server; a GB200 NVL72 rack is 18 compute trays of 2 Grace CPUs and 4 GPUs).
  if (sc.platform_server) {
    const ServerSpec& server = *sc.platform_server;
    const int hosts = std::max(1, server.cpu.sockets / 2);
    step.gpus_per_node = std::max(1, server.gpus / hosts);
    step.parts.nodes = std::ceil(step.parts.gpus / step.gpus_per_node);
    step.parts.nics = std::ceil(step.parts.gpus * server.nic.count / server.gpus);
  } else {
    step.gpus_per_node = 8;
    step.parts.nodes = std::ceil(step.parts.gpus / 8);
    step.parts.nics = step.parts.nodes;
  }
  step.fabric_tiers = sc.platform_fabric && sc.platform_fabric->topology != "switch" ? 2 : 1;
  step.gpu_tdp_w = sc.device.tdp_w;
  step.checkpoint_bytes = sc.llm ? sc.llm->checkpoint_bytes : 0;
  if (sc.llm) {
    const ParallelPlan& p = sc.llm->plan;
    step.checkpoint_writers =
        p.zero >= 1 ? step.parts.gpus : std::min(step.parts.gpus, 1.0 * p.tp * p.pp * p.cp * p.ep);
  }
  step.host_copy_bw = sc.platform_server ? sc.platform_server->pcie.bandwidth : 0;
  return step;
}

// The campaign of a run; under a power cap, of the step run again at the clock the cap allows.
CampaignFigures run_campaign(const Scenario& sc, const ScenarioRun& run) {
  const CampaignSetup& setup = *sc.campaign;
  CampaignStep step = campaign_step(sc, run);
  if (setup.power.cap_w > 0 && step.gpu_tdp_w > 0) {
    PowerSpec uncapped = setup.power;
    uncapped.cap_w = 0;
    uncapped.gpu_tdp_w = step.gpu_tdp_w;
    const PowerFigures p = power_figures(uncapped, step.activity);
    const double clock = capped_clock(p.gpu_train_w, p.gpu_idle_w, setup.power.cap_w);
    if (clock <= 0) {
      char what[160];
      std::snprintf(what, sizeof what,
                    "campaign.power.cap: %g W is at or below the GPU's idle draw (%g W): nothing "
                    "would run",
                    setup.power.cap_w, p.gpu_idle_w);
      throw InputError(sc.origin + ": " + what);
    }
    if (clock < 1) {
      Scenario slow;
      scaled_input(sc, "kernels", clock, &slow);
      slow.campaign.reset();
      slow.sensitivity = false;
      RunOptions quiet;
      quiet.isolated = true;
      quiet.replay.record_timeline = false;
      const ScenarioRun capped = run_scenario(slow, quiet);
      step = campaign_step(slow, capped);
      step.clock = clock;
    }
  }
  try {
    return evaluate_campaign(setup, step);
  } catch (const InputError& e) {
    throw InputError(sc.origin + ": " + e.what());  // the campaign's keys are the scenario's
  }
}

}  // namespace

ScenarioRun run_scenario(const Scenario& sc, const RunOptions& options) {
  ScenarioRun run;
  ReplayOptions replay_options = options.replay;
  // Each job alone runs in a child beside this replay (the child forks before this process
  // starts its engine: replay() runs once per process); iteration ends come from the timeline.
  std::optional<ChildRun> alone_runs;
  if (sc.jobs) {
    alone_runs.emplace(start_jobs_alone(sc, replay_options));
    replay_options.record_timeline = true;
  }
  // The sensitivity variants replay after this run, each in a child: this process must not hold
  // a SimGrid engine when it forks them.
  // A power cap runs the step again at the capped clock, likewise.
  const bool isolated =
      options.isolated || sc.sensitivity || (sc.campaign && sc.campaign->power.cap_w > 0);
  run.result = isolated ? replay_isolated(sc.platform, sc.graph, replay_options)
                        : replay(sc.platform, sc.graph, replay_options);
  RunResult& r = run.result;
  r.analytical_seconds = sc.analytical ? sc.analytical_seconds : 0.0;
  r.iterations = std::max(1, sc.iterations);
  run.iteration_s = r.makespan / r.iterations;
  run.meta = meta_of(sc, options);
  if (sc.llm) {
    run.llm = llm_figures(*sc.llm, r);
    run.metrics = llm_metrics(*run.llm);
  }
  if (sc.error_band.known && !sc.jobs) {
    run.metrics.emplace_back("likely.low_s", likely_low(sc.error_band, run.iteration_s));
    run.metrics.emplace_back("likely.high_s", likely_high(sc.error_band, run.iteration_s));
    run.metrics.emplace_back("likely.runs", sc.error_band.runs);
    run.metrics.emplace_back("likely.median_error", sc.error_band.median_abs);
  }
  if (sc.campaign && !sc.jobs) {
    run.campaign = run_campaign(sc, run);
    for (auto& m : campaign_metrics(*run.campaign)) run.metrics.push_back(std::move(m));
  }
  if (sc.sensitivity && !sc.jobs) {
    run.sensitivity = sensitivity_runs(sc);
    for (auto& m : sensitivity_metrics(run.sensitivity)) run.metrics.push_back(std::move(m));
  }
  if (alone_runs) {
    const JobsAlone alone = finish_jobs_alone(*alone_runs, sc);
    run.jobs = job_outcomes(sc, r, alone);
    run.cluster = cluster_figures(sc, r, *run.jobs);
    run.metrics = cluster_metrics(*run.cluster);
    run.meta.jobs = run.jobs->jobs;
    if (!options.replay.record_timeline) r.timeline.clear();
  }
  return run;
}

}  // namespace orrery
