#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cli/campaign_report.h"
#include "cli/commands.h"
#include "cli/job_table.h"
#include "cli/limit_options.h"
#include "cli/output_paths.h"
#include "cli/run_args.h"
#include "common/child_process.h"
#include "common/data_dir.h"
#include "common/errors.h"
#include "common/units.h"
#include "engine/xml_routes.h"
#include "platforms/simgrid_platform.h"
#include "results/chrome_trace.h"
#include "results/h5_store.h"
#include "results/run_report.h"
#include "scenario/scenario.h"
#include "scenario/scenario_run.h"
#include "scenario/sensitivity.h"
#include "strategies/llm_memory.h"
#include "sweeps/expression.h"

namespace fs = std::filesystem;

namespace orrery {
namespace {

void check_writable_dir(const std::string& file, const char* what) {
  if (file.empty()) return;
  fs::path dir = fs::path(file).parent_path();
  if (dir.empty()) return;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (!fs::is_directory(dir))
    throw InputError(std::string(what) + " \"" + file + "\": cannot create directory " +
                     dir.string());
}

void print_summary(const Scenario& sc, const ScenarioRun& run) {
  const RunResult& r = run.result;
  const RunReport report = make_run_report(r);
  const RunSummary& s = report.summary;
  std::printf("Scenario   %s\n", sc.name.c_str());
  std::printf("Platform   %s\n", sc.platform_summary.c_str());
  std::printf("Device     %s\n", scenario_device_line(sc).c_str());
  size_t mirrored = 0;
  for (const Device& d : sc.graph.devices) mirrored += d.mirrors.size();
  std::printf("Workload   %zu devices, %zu ops", sc.graph.devices.size(), sc.graph.ops.size());
  // Devices that run another's ops in lockstep are simulated once (Device::mirrors).
  if (mirrored > 0) std::printf(" (%zu devices mirror another's ops)", mirrored);
  std::printf("\n");
  if (!sc.workload_summary.empty()) std::printf("           %s\n", sc.workload_summary.c_str());
  if (sc.jobs) {
    constexpr size_t kShown = 12;
    const auto& jobs = sc.jobs->jobs;
    for (size_t j = 0; j < jobs.size() && j < kShown; ++j)
      std::printf("           %s on %zu GPUs: %s\n", jobs[j].name.c_str(), jobs[j].gpus.size(),
                  jobs[j].workload_summary.c_str());
    if (jobs.size() > kShown) std::printf("           ... %zu more jobs\n", jobs.size() - kShown);
  }
  std::printf("\n");
  if (sc.jobs) {
    // Several jobs: the run's length is when the last job's last iteration ended; each job's
    // iteration times follow the breakdown.
    std::printf("All jobs done  %s (each job's iteration times below)\n",
                format_time(s.iteration_time_s).c_str());
  } else if (r.iterations > 1) {
    std::printf("Iteration time  %s (the mean of %d iterations, %s in all)\n",
                format_time(run.iteration_s).c_str(), r.iterations,
                format_time(r.makespan).c_str());
  } else {
    std::printf("Iteration time  %s\n", format_time(run.iteration_s).c_str());
  }
  if (!sc.jobs) {
    const ErrorBand& b = sc.error_band;
    if (b.known) {
      std::printf(
          "Likely range    %s to %s (%d published %s were %+.0f%% to %+.0f%% from this model at "
          "the 10th and 90th percentile, %.0f%% in the median: orrery accuracy)\n",
          format_time(likely_low(b, run.iteration_s)).c_str(),
          format_time(likely_high(b, run.iteration_s)).c_str(), b.runs, b.group.c_str(),
          100 * b.low, 100 * b.high, 100 * b.median_abs);
      // The same range as throughput: the step's tokens over its likely times.
      if (run.llm)
        std::printf("                %.0f to %.0f tokens/s per GPU\n",
                    run.llm->tokens_per_s_per_gpu / (1 + b.high),
                    run.llm->tokens_per_s_per_gpu / (1 + b.low));
    } else if (sc.traits.framework.empty()) {
      std::printf(
          "Likely range    not known: no run like this one (a graph, trace or synthetic "
          "workload) was checked against a published measurement (orrery accuracy)\n");
    } else {
      std::printf(
          "Likely range    not known: fewer than %d %s runs under %s (on %s GPUs or any) were "
          "checked against a published measurement (orrery accuracy)\n",
          kMinRuns, sc.traits.kind.c_str(), sc.traits.framework.c_str(),
          sc.traits.generation.c_str());
    }
  }
  if (sc.llm && run.llm && s.iteration_time_s > 0) {
    const LlmRunInfo& l = *sc.llm;
    const LlmFigures& f = *run.llm;
    std::printf(
        "Throughput      %.0f tokens/s per GPU (%.0f in all), %.1f TFLOP/s per GPU, MFU %.1f%% "
        "(model FLOPs of Narayanan et al., Efficient Large-Scale Language Model Training on GPU "
        "Clusters Using Megatron-LM, over the GPU's dense %s peak)\n",
        f.tokens_per_s_per_gpu, f.tokens_per_s, f.tflops_per_gpu, 100 * f.mfu,
        l.peak_precision.c_str());
    const LlmBreakdown& b = f.breakdown;
    std::printf(
        "Time per GPU    compute %s, recompute %s, exposed TP %s, EP %s, CP %s, PP %s, DP %s, "
        "idle (bubble) %s\n",
        format_time(b.compute).c_str(), format_time(b.recompute).c_str(), format_time(b.tp).c_str(),
        format_time(b.ep).c_str(), format_time(b.cp).c_str(), format_time(b.pp).c_str(),
        format_time(b.dp).c_str(), format_time(b.bubble).c_str());
    std::printf("Memory          %s%s\n", l.fits ? "" : "OUT OF MEMORY: the plan does not run; ",
                l.memory.c_str());
    if (l.stage_memory.size() > 1) {
      std::string stages;
      for (double b : l.stage_memory) stages += (stages.empty() ? "" : ", ") + format_gib(b);
      std::printf("                per GPU of each pipeline stage, the first first: %s GiB\n",
                  stages.c_str());
    }
    if (l.train_tokens > 0)
      std::printf("Training run    %.4g tokens in %.1f days on %d GPUs (%.3g GPU-hours)\n",
                  l.train_tokens, f.train_days, l.gpus, f.gpu_hours);
  }
  if (sc.analytical) {
    if (r.analytical_seconds > 0)
      std::printf(
          "PAI analytical  %s  (T_d + T_c + T_w at 70%% of peak, no overlap; \"Characterizing "
          "Deep Learning Training Workloads on Alibaba-PAI\", Wang et al., section II-B)\n",
          format_time(r.analytical_seconds).c_str());
    else
      std::printf("PAI analytical  (applies to model workloads on generated platforms only)\n");
  }
  std::printf("\n");
  // The compute stream's rows add up to the iteration time; the other streams run beside it,
  // so their shares are of the same whole but overlap the compute rows instead of adding to them.
  std::printf("Where the time goes (mean per device, %% of the iteration time):\n");
  for (size_t i = 0; i < report.time_shares.size(); ++i) {
    const TimeShare& t = report.time_shares[i];
    if (i == 0 || t.compute_stream != report.time_shares[i - 1].compute_stream)
      std::printf(t.compute_stream ? "  compute stream (these rows add up to 100%%)\n"
                                   : "  other streams (run beside compute, overlapping it)\n");
    const std::string label = (t.part_of_previous ? "      " : "    ") + t.label;
    std::printf("%-46s %12s  %5.1f%%\n", label.c_str(), format_time(t.seconds).c_str(), t.percent);
  }

  if (!report.traffic_by_link_class.empty()) {
    std::printf("\nTraffic by link class (bytes summed over the links each transfer crosses):\n");
    for (const auto& [cls, bytes] : report.traffic_by_link_class)
      std::printf("  %-28s %12s\n", cls.c_str(), format_size(bytes).c_str());
  }

  std::printf("\n%-24s %12s %12s %12s %12s %12s\n", "device", "compute", "comm", "exposed",
              "copies", "idle");
  size_t shown = 0;
  for (const auto& d : report.devices) {
    if (++shown > 16) {
      std::printf("  ... %zu more devices in the results file\n", report.devices.size() - 16);
      break;
    }
    std::printf("%-24s %12s %12s %12s %12s %12s\n", d.name.c_str(),
                format_time(d.compute_s).c_str(), format_time(d.comm_s).c_str(),
                format_time(d.exposed_comm_s).c_str(), format_time(d.copies_s).c_str(),
                format_time(d.idle_s).c_str());
  }
  if (!report.links.empty()) {
    std::printf("\n%-28s %12s %14s %10s\n", "busiest links", "bytes", "per link", "busy");
    for (size_t i = 0; i < report.links.size() && i < 8; ++i) {
      const LinkLoad& l = report.links[i];
      std::printf("%-28s %12s %14s %9.1f%%\n", l.link->name.c_str(),
                  format_size(l.link->bytes).c_str(), format_bandwidth(l.link->bandwidth).c_str(),
                  l.busy_percent);
    }
  }
  std::printf("\nSimulated %lld activities in %.3f s\n", static_cast<long long>(r.activities),
              r.wall_seconds);
  if (r.asymmetric_mirror_flows > 0)
    std::printf(
        "Note: %lld flows of mirrored TP ranks took routes unlike TP rank 0's; their copies were "
        "held to one rate (exact only where every GPU has alike links, docs/strategies.md)\n",
        static_cast<long long>(r.asymmetric_mirror_flows));
}

// The jobs of a `jobs` scenario: placement, iteration times shared and alone, shared links.
void print_jobs(const Scenario& sc, const ScenarioRun& run) {
  const JobsSetup& setup = *sc.jobs;
  const JobsOutcome& o = *run.jobs;
  std::printf("\nJobs (%zu placed on %d GPUs; %d free", setup.jobs.size(), setup.gpus,
              setup.free_gpus);
  if (setup.fragmented_gpus > 0)
    std::printf(", %d of them idle while a job waits", setup.fragmented_gpus);
  std::printf(")\n");
  for (const std::string& u : setup.unplaced) std::printf("  not placed: %s\n", u.c_str());
  print_job_table(o.jobs);
  if (!o.shared.empty()) {
    std::printf("\n%-28s %12s %8s  %s\n", "links shared by jobs", "bytes", "busy", "jobs");
    for (size_t i = 0; i < o.shared.size() && i < 8; ++i) {
      const SharedLink& l = o.shared[i];
      std::string jobs;
      for (const auto& j : l.jobs) jobs += (jobs.empty() ? "" : ", ") + j;
      std::printf("%-28s %12s %7.1f%%  %s\n", l.name.c_str(), format_size(l.bytes).c_str(),
                  100.0 * l.busy, jobs.c_str());
    }
    if (o.shared.size() > 8) std::printf("  ... %zu more\n", o.shared.size() - 8);
  } else {
    std::printf("\nNo link carries more than one job's traffic.\n");
  }
  const ClusterFigures& f = *run.cluster;
  std::printf(
      "\nCluster: %.4g GPU-batches/s (%.4g iterations/s) from %d jobs on %d of %d GPUs; mean "
      "slowdown %.3fx (max %.3fx); placements cost %.3fx (max %.3fx) of the best; GPU "
      "utilization %.1f%%\n",
      f.gpu_batches_per_s, f.iterations_per_s, f.placed, f.gpus_used, f.gpus, f.mean_slowdown,
      f.max_slowdown, f.mean_placement_cost, f.max_placement_cost, 100.0 * f.gpu_utilization);
}

}  // namespace

std::string current_command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (char& c : raw)
    if (c == '\0') c = ' ';
  while (!raw.empty() && raw.back() == ' ') raw.pop_back();
  return raw;
}

// Output paths of a run: the flags win; a --set variation of the scenario's own paths is
// named after its overrides (cli/output_paths.h).
void resolve_outputs(const RunArgs& args, Scenario* sc) {
  // A path set by --set itself is the one asked for, not a variation to name after it.
  auto set_by_override = [&](const std::string& key) {
    for (const std::string& o : args.overrides)
      if (o.rfind(key + "=", 0) == 0) return true;
    return false;
  };
  if (!args.output.empty())
    sc->output_file = args.output;
  else if (!set_by_override("output.file"))
    sc->output_file = name_for_overrides(sc->output_file, args.overrides);
  if (!args.trace.empty())
    sc->trace_file = args.trace;
  else if (!set_by_override("output.trace"))
    sc->trace_file = name_for_overrides(sc->trace_file, args.overrides);
  // One file cannot be both: the second writer would replace the first's.
  if (!sc->output_file.empty() && !sc->trace_file.empty()) {
    auto where = [](const std::string& p) {
      std::error_code ec;
      const fs::path whole = fs::absolute(p);
      const fs::path real = fs::weakly_canonical(whole, ec);  // through symbolic links
      return ec ? whole.lexically_normal() : real.lexically_normal();
    };
    if (where(sc->output_file) == where(sc->trace_file))
      throw InputError("the results file and the trace are both \"" + sc->output_file +
                       "\": give them different paths");
  }
}

// A SimGrid XML platform is only read by SimGrid, which allows one engine per process: load it
// in a child, as a run would, and check that every host the workload names is in it.
void check_xml_platform(const Scenario& sc) {
  run_in_child(
      [&] {
        std::vector<GraphStep> steps;
        bool complete = false;
        auto engine = start_engine(sc.platform, &steps, &complete);
        for (const auto& d : sc.graph.devices)
          for (const std::string* h : {&d.host, &d.launch_host})
            if (!h->empty() && !engine->host_by_name_or_null(*h))
              throw InputError(sc.platform.xml_file + ": no host \"" + *h +
                               "\", which workload device \"" + d.name + "\" runs on");
        // The routes the workload needs, asked as the replay will ask them.
        XmlRoutes routes(steps, complete);
        auto host_of = [&](int d) {
          const Device& dev = sc.graph.devices[d];
          return engine->host_by_name_or_null(dev.host.empty() ? dev.name : dev.host);
        };
        for (const auto& [a, b] : device_pairs_to_route(sc.graph)) {
          auto* from = host_of(a);
          auto* to = host_of(b);
          if (from && to && !routes.has_route(from, to))
            throw InputError(no_route_message(sc.platform.xml_file, from->get_name(),
                                              to->get_name(), sc.graph.devices[a].name,
                                              sc.graph.devices[b].name));
        }
        (void)engine.release();  // the child ends here; SimGrid's teardown is not needed
        return std::string();
      },
      "SimGrid platform check");
}

// How far each uncertain input moves the step (scenario/sensitivity.h), one line each.
void print_sensitivity(const ScenarioRun& run) {
  std::printf("\nSensitivity     each input moved alone by its uncertainty (the rest as given):\n");
  for (const SensitivityRow& r : run.sensitivity) {
    if (!r.applies) {
      std::printf("  %-8s %-6s  (%s)\n", r.input.c_str(), r.moved_by.c_str(),
                  r.note.empty() ? "none in this scenario" : r.note.c_str());
      continue;
    }
    std::printf("  %-8s %-6s  %s to %s (%+.1f%% to %+.1f%%)   %s\n", r.input.c_str(),
                r.moved_by.c_str(), format_time(r.fast_s).c_str(), format_time(r.slow_s).c_str(),
                100 * (r.fast_s / run.iteration_s - 1), 100 * (r.slow_s / run.iteration_s - 1),
                r.basis.c_str());
  }
}

int validate_command(const RunArgs& args) {
  Scenario sc = load_scenario(args.scenario, args.overrides);
  resolve_outputs(args, &sc);
  if (!sc.platform.xml_file.empty()) check_xml_platform(sc);
  std::printf(
      "%s: ok\n  platform  %s\n  device    %s\n  workload  %zu devices, %zu ops\n"
      "  output    %s\n",
      args.scenario.c_str(), sc.platform_summary.c_str(), scenario_device_line(sc).c_str(),
      sc.graph.devices.size(), sc.graph.ops.size(),
      sc.output_file.empty() ? "(none)" : sc.output_file.c_str());
  return 0;
}

int run_command(const RunArgs& args) {
  ScenarioBuildOptions build;
  build.analytical = args.analytical;
  build.sensitivity = args.sensitivity;
  // Kept until the process ends, as the replay's state is (free_on_return below): orrery exits
  // right after this command (cli/main.cc), and the exit frees them at once.
  Scenario& sc = *new Scenario(load_scenario(args.scenario, args.overrides, build));
  resolve_outputs(args, &sc);
  if (args.no_timeline) sc.record_timeline = false;
  check_writable_dir(sc.output_file, "output file");
  check_writable_dir(sc.trace_file, "trace file");
  // Checked before simulating, so a refused path costs nothing; notes print at the end.
  std::vector<std::string> notes;
  for (const auto& [file, what] :
       {std::pair{sc.output_file, "output file"}, std::pair{sc.trace_file, "trace file"}})
    if (!file.empty())
      if (auto note = check_replaceable(file, what, sc.text, args.force); !note.empty())
        notes.push_back(note);

  RunOptions opt;
  opt.replay.record_timeline = sc.record_timeline || !sc.trace_file.empty();
  opt.replay.progress = !args.quiet && isatty(STDERR_FILENO);
  opt.replay.record_flows = !sc.trace_file.empty();
  opt.replay.max_recorded_flows = sc.trace_flows;
  opt.replay.link_usage_bins = sc.output_file.empty() ? 0 : sc.link_usage_bins;
  opt.created_by = current_command_line();
  // Nothing big is built after the replay unless a results file or trace is written: then its
  // state is freed for them to reuse (at 65,536 GPUs 0.8 GiB less at the peak), else the
  // process's end frees it (0.9 s less).
  opt.replay.free_on_return = !sc.output_file.empty() || !sc.trace_file.empty();
  // The one simulation of this process, so no forked child: a child would copy every heap page
  // the import left behind as it allocates (a fifth of `orrery run` on 1,024 Chakra traces).
  // SimGrid only holds the platform (XML files are first loaded in a throw-away child). With
  // sensitivity this process simulates more than once: run_scenario runs each in a child.
  ScenarioRun& run = *new ScenarioRun(run_scenario(sc, opt));
  RunResult& r = run.result;
  if (!args.quiet) print_summary(sc, run);
  if (run.jobs && !args.quiet) print_jobs(sc, run);
  if (run.campaign && !args.quiet) print_campaign(*sc.campaign, *run.campaign);
  if (!run.sensitivity.empty() && !args.quiet) print_sensitivity(run);

  if (!sc.trace_file.empty()) {
    write_chrome_trace(sc.trace_file, sc.graph, r);
    if (!args.quiet) std::printf("Trace      %s\n", sc.trace_file.c_str());
  }
  if (!sc.output_file.empty()) {
    if (!sc.record_timeline) r.timeline.clear();
    // The figures a sweep stores with a point ("llm.*", "jobs.*"), stored the same way. The
    // result moves into the record: each copy was every link's usage bins again.
    std::vector<RunRecord> records(1);
    records[0].name = sc.name;
    records[0].result = std::move(r);
    for (const auto& [name, value] : run.metrics) records[0].params[name] = format_number(value);
    write_results_h5(sc.output_file, run.meta, records, {&sc.graph});
    if (!args.quiet) std::printf("Results    %s\n", sc.output_file.c_str());
  }
  for (const auto& n : notes) std::fprintf(stderr, "orrery: %s\n", n.c_str());
  return 0;
}

void register_run_commands(CLI::App& app, CommandList& out) {
  // Shared by both subcommands; only one of them runs per process.
  static RunArgs args;
  auto scenario_options = [](CLI::App* cmd) {
    cmd->add_option("scenario", args.scenario,
                    "Scenario YAML file, or the name of a shipped scenario (quickstart)")
        ->required()
        ->transform([](std::string s) { return find_scenario_file(s); });
    cmd->add_option("--set", args.overrides,
                    "Override a scenario key, e.g. --set platform.server.gpus=8 (repeatable)");
    add_limit_options(cmd);
  };
  auto* run = app.add_subcommand(
      "run", "Simulate one iteration of a scenario and print where the time goes");
  scenario_options(run);
  run->add_option("-o,--output", args.output, "HDF5 results file (replaces output.file)");
  run->add_option("--trace", args.trace,
                  "Chrome trace JSON of the timeline (chrome://tracing, Perfetto)");
  run->add_flag("--no-timeline", args.no_timeline,
                "Do not store the per-op timeline in the results");
  run->add_flag("-q,--quiet", args.quiet, "Print nothing but errors");
  run->add_flag("--force", args.force,
                "Replace output files even when they are not Orrery results");
  run->add_flag("--sensitivity", args.sensitivity,
                "Simulate again with each uncertain input (kernel times, link rates, host "
                "launch work, overlap) moved alone by its uncertainty, and print and store how "
                "the iteration moves (the scenario key output.sensitivity: true does the same)");
  run->add_flag("--analytical", args.analytical,
                "Also compute, print and store the PAI analytical estimate of the step (model "
                "workloads; the scenario key output.analytical: true does the same)");
  run->footer(
      "Output paths (output.file, output.trace, -o, --trace) are relative to the current "
      "directory. With --set and no -o, the scenario's output files are named after the "
      "overrides (out/q.h5 -> out/q--platform.server.gpus=8.h5), so the base result stays.");
  auto* validate =
      app.add_subcommand("validate", "Check a scenario and the files it names without simulating");
  scenario_options(validate);
  out.push_back({run, [] { return run_command(args); }});
  out.push_back({validate, [] { return validate_command(args); }});
}

}  // namespace orrery
