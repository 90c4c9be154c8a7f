// Scenario: a YAML file naming a platform, a workload and where results go. Loading resolves
// everything a run needs (platform topology, execution graph) so errors surface before any
// simulation. The scenario YAML reference is docs/user-guide.md.
#pragma once

#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>
#include <vector>

#include "engine/execution_graph.h"
#include "platforms/device_spec.h"
#include "platforms/platform_spec.h"
#include "platforms/simgrid_platform.h"
#include "scenario/campaign_run.h"
#include "scenario/error_band.h"
#include "scenario/jobs.h"
#include "scenario/llm_workload.h"

namespace orrery {

struct Scenario {
  std::string origin;  // the scenario file
  std::string text;    // its verbatim text (plus the --set overrides), stored with results
  std::string name;
  std::string description;
  PlatformSource platform;
  std::string platform_summary;  // one line, for tables and the results file
  // The GPU of this run: the platform's `server.gpu`, or the scenario's `device`, which
  // replaces it in every server before the platform is built (XML platforms: `device`, else
  // V100-SXM2). SimGrid host speeds (generated platforms), op prices, the run header and the
  // result file all take it from here.
  DeviceSpec device;
  bool ops_priced = false;  // model workloads: every op was priced on `device`
  ExecutionGraph graph;
  // Several jobs sharing the platform (the `jobs` list, scenario/jobs.h): graph holds all of
  // them; unset for a one-workload scenario.
  std::optional<JobsSetup> jobs;
  std::string workload_summary;  // one line (model workloads)
  // What kind of run this is, and how far runs like it were from their published measurements
  // (scenario/error_band.h); unknown for several jobs and for runs like no validated one.
  RunTraits traits;
  ErrorBand error_band;
  std::optional<LlmRunInfo> llm;              // language-model workloads: throughput, memory
  std::optional<ServerSpec> platform_server;  // generated platforms: their server
  std::optional<FabricSpec> platform_fabric;  // and their fabric
  // Mixed clusters (platform.server_groups): the kinds of server, and the kind of each of the
  // platform's GPUs in its GPU order (an index into server_kinds). Empty when all are one kind;
  // `device` and `platform_server` are then the first kind's.
  std::vector<ServerSpec> server_kinds;
  std::vector<int> gpu_kind;
  // The PAI analytical estimate (scenario/pai_estimate.h), computed only when asked
  // (output.analytical, or ScenarioBuildOptions::analytical: `orrery run --analytical`).
  bool analytical = false;
  double analytical_seconds = 0.0;  // model workloads on generated platforms; else 0
  int iterations = 1;               // training steps the graph holds (strategy.iterations)
  // output.sensitivity (or ScenarioBuildOptions::sensitivity): run_scenario simulates the
  // uncertain inputs' variants too (scenario/sensitivity.h). The overlap variants are built
  // again from the tree as this scenario was built from it, kept here for them.
  bool sensitivity = false;
  std::string resolved_yaml;
  // The `campaign` section: what the step makes of a training campaign (scenario/campaign_run.h).
  std::optional<CampaignSetup> campaign;
  std::string output_file;  // HDF5 results; empty: none
  bool record_timeline = true;
  std::string trace_file;  // Chrome trace JSON; empty: none
  // output.link_usage_bins: per-link utilization over time in the HDF5 file, in at most this
  // many time bins (engine/link_usage.h); 0: none.
  int link_usage_bins = 256;
  // output.trace_flows: collective flows the Chrome trace shows at most (the first, in start
  // order); the rest are counted and the trace says so.
  int trace_flows = 1000000;
};

// The run header's device line (results/run_report.h device_line), naming every GPU model of
// a mixed cluster.
std::string scenario_device_line(const Scenario& sc);

// "a.b.c=value" overrides applied to the YAML tree before it is read (value parsed as YAML).
void apply_override(YAML::Node& root, const std::string& assignment);

struct ScenarioBuildOptions {
  // A language-model plan that does not fit the GPUs' memory throws InfeasibleError (with the
  // verdict) before its graph is built: sweeps and plans record it without simulating it.
  // Otherwise it is built and simulated, and the run reports the verdict.
  bool skip_out_of_memory = false;
  // Compute the PAI analytical estimate even when the scenario's output.analytical is off.
  bool analytical = false;
  // Run the sensitivity variants even when output.sensitivity is off (`orrery run
  // --sensitivity`).
  bool sensitivity = false;
};
Scenario build_scenario(const YAML::Node& root, const std::string& origin, const std::string& text,
                        const ScenarioBuildOptions& options = {});

// Reads, overrides and resolves a scenario. Throws InputError naming the file, line and key.
Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides = {},
                       const ScenarioBuildOptions& options = {});

}  // namespace orrery
