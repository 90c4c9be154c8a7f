// The extension module `orrery._orrery`: runs a scenario the way `orrery run` does and returns
// what it prints as Python data. The public API, and the conversion of Python dicts to scenario
// text, is the pure-Python package around it (python/orrery/__init__.py).
//
// The replay forks (replay_isolated in engine/replay.h), so SimGrid's one engine per process
// does not limit how often Python may call run. The GIL is released while a scenario loads and
// replays: nothing below touches Python objects.
//
// check_results_file guards orrery.load_runs / load_devices (python/orrery/results.py): the
// file is read whole by the reader `orrery report` uses before h5py opens it
// (results/h5_check.h).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "common/data_dir.h"
#include "common/errors.h"
#include "common/yaml_reader.h"
#include "python/kernel_fit.h"
#include "results/h5_check.h"
#include "results/h5_store.h"
#include "results/run_report.h"
#include "scenario/scenario.h"
#include "scenario/scenario_run.h"

namespace py = pybind11;

namespace orrery {
namespace {

struct Outcome {
  Scenario scenario;
  ScenarioRun run;
};

Outcome simulate(Scenario sc) {
  RunOptions opt;
  opt.isolated = true;  // Python may call run again: SimGrid allows one engine per process
  opt.replay.record_timeline = false;  // nothing returned needs it
  ScenarioRun run = run_scenario(sc, opt);
  return {std::move(sc), std::move(run)};
}

py::dict llm_dict(const LlmRunInfo& info, const LlmFigures& f) {
  py::dict d;
  d["gpus"] = info.gpus;
  d["tokens_per_iteration"] = info.tokens;
  d["model_flops_per_iteration"] = info.model_flops;
  d["tokens_per_s"] = f.tokens_per_s;
  d["tokens_per_s_per_gpu"] = f.tokens_per_s_per_gpu;
  d["tflops_per_gpu"] = f.tflops_per_gpu;
  d["mfu"] = f.mfu;
  d["mfu_basis"] = info.peak_precision;
  d["peak_flops_per_gpu"] = info.peak_flops_per_gpu;
  const LlmBreakdown& b = f.breakdown;
  py::dict split;
  split["compute_s"] = b.compute;
  split["recompute_s"] = b.recompute;
  split["tp_exposed_s"] = b.tp;
  split["ep_exposed_s"] = b.ep;
  split["cp_exposed_s"] = b.cp;
  split["pp_exposed_s"] = b.pp;
  split["dp_exposed_s"] = b.dp;
  split["bubble_s"] = b.bubble;
  d["time_per_gpu"] = split;
  d["fits"] = info.fits;
  d["memory"] = info.memory;
  d["peak_memory_bytes"] = info.peak_memory;
  d["memory_capacity_bytes"] = info.memory_capacity;
  d["memory_per_stage_bytes"] = info.stage_memory;
  d["train_tokens"] = info.train_tokens;
  d["train_days"] = f.train_days;
  d["gpu_hours"] = f.gpu_hours;
  return d;
}

py::list jobs_list(const Scenario& sc, const JobsOutcome& o) {
  py::list out;
  for (size_t j = 0; j < o.jobs.size(); ++j) {
    const JobRecord& rec = o.jobs[j];
    py::dict d;
    d["name"] = rec.name;
    d["placement"] = rec.placement;
    d["gpus"] = rec.gpus;
    d["hosts"] = sc.jobs->jobs.at(j).gpus;
    d["workload"] = sc.jobs->jobs.at(j).workload_summary;
    d["iteration_times_s"] = rec.iteration_times;
    d["mean_s"] = rec.mean;
    d["min_s"] = rec.min;
    d["max_s"] = rec.max;
    d["stdev_s"] = rec.stdev;
    d["alone_mean_s"] = rec.alone_mean;
    d["slowdown"] = rec.slowdown;
    d["best_mean_s"] = rec.best_mean;
    d["placement_cost"] = rec.placement_cost;
    d["end_s"] = rec.end;
    out.append(d);
  }
  return out;
}

py::dict cluster_dict(const ClusterFigures& f, const JobsSetup& setup) {
  py::dict d;
  d["placed"] = f.placed;
  d["unplaced"] = setup.unplaced;
  d["gpus"] = f.gpus;
  d["gpus_used"] = f.gpus_used;
  d["fragmented_gpus"] = f.fragmented_gpus;
  d["gpu_batches_per_s"] = f.gpu_batches_per_s;
  d["iterations_per_s"] = f.iterations_per_s;
  d["mean_slowdown"] = f.mean_slowdown;
  d["max_slowdown"] = f.max_slowdown;
  d["mean_placement_cost"] = f.mean_placement_cost;
  d["max_placement_cost"] = f.max_placement_cost;
  d["gpu_utilization"] = f.gpu_utilization;
  return d;
}

// The summary `orrery run` prints (cli/run_command.cc), as a dict; python/orrery/__init__.py
// documents each key.
py::dict to_python(const Outcome& o) {
  const Scenario& sc = o.scenario;
  const RunResult& r = o.run.result;
  const RunReport report = make_run_report(r);
  py::dict d;
  d["name"] = sc.name;
  d["description"] = sc.description;
  d["platform"] = sc.platform_summary;
  d["device"] = scenario_device_line(sc);
  d["num_devices"] = sc.graph.devices.size();
  d["num_ops"] = sc.graph.ops.size();
  d["workload"] = sc.workload_summary;
  d["iteration_time_s"] = report.summary.iteration_time_s;
  d["iterations"] = r.iterations;
  d["makespan_s"] = r.makespan;
  d["analytical_s"] = r.analytical_seconds > 0 ? py::cast(r.analytical_seconds) : py::none();
  d["llm"] = o.run.llm ? py::object(llm_dict(*sc.llm, *o.run.llm)) : py::none();
  py::list workloads;
  if (sc.jobs)
    for (const ScenarioJob& j : sc.jobs->jobs) workloads.append(j.workload_summary);
  d["job_workloads"] = workloads;
  d["jobs"] = o.run.jobs ? py::object(jobs_list(sc, *o.run.jobs)) : py::none();
  d["cluster"] =
      o.run.cluster ? py::object(cluster_dict(*o.run.cluster, *sc.jobs)) : py::none();
  py::dict metrics;
  for (const auto& [name, value] : o.run.metrics) metrics[py::str(name)] = value;
  d["metrics"] = metrics;

  py::dict times;
  py::list shares;
  for (const TimeShare& t : report.time_shares) {
    times[py::str(t.column)] = t.seconds;
    py::dict row;
    row["column"] = t.column;
    row["label"] = t.label;
    row["stream"] = t.compute_stream ? "compute" : "other";
    row["part_of_previous"] = t.part_of_previous;
    row["seconds"] = t.seconds;
    row["percent"] = t.percent;
    shares.append(row);
  }
  d["times"] = times;
  d["time_shares"] = shares;

  py::list devices;
  for (size_t i = 0; i < report.devices.size(); ++i) {
    const DeviceRow& dev = report.devices[i];
    const DeviceStats& stats = r.devices[i];
    py::dict row;
    row["name"] = dev.name;
    row["compute_s"] = dev.compute_s;
    row["comm_s"] = dev.comm_s;
    row["exposed_comm_s"] = dev.exposed_comm_s;
    row["copies_s"] = dev.copies_s;
    row["idle_s"] = dev.idle_s;
    row["host_s"] = stats.busy[static_cast<int>(StreamClass::kHost)];
    row["memory_bound_s"] = stats.memory_bound;
    row["ops"] = stats.ops;
    devices.append(row);
  }
  d["devices"] = devices;

  py::dict traffic;
  for (const auto& [cls, bytes] : report.traffic_by_link_class) traffic[py::str(cls)] = bytes;
  d["traffic_by_link_class"] = traffic;

  py::list links;
  for (const LinkLoad& l : report.links) {
    py::dict row;
    row["name"] = l.link->name;
    row["link_class"] = l.link->link_class;
    row["bytes"] = l.link->bytes;
    row["bandwidth"] = l.link->bandwidth;
    row["latency"] = l.link->latency;
    row["busy_s"] = l.busy_s;
    row["busy_percent"] = l.busy_percent;
    links.append(row);
  }
  d["links"] = links;
  d["activities"] = r.activities;
  d["wall_s"] = r.wall_seconds;
  return d;
}

py::dict run_file(const std::string& path, const std::vector<std::string>& overrides,
                  bool analytical) {
  Outcome o;
  {
    py::gil_scoped_release release;
    ScenarioBuildOptions build;
    build.analytical = analytical;
    o = simulate(load_scenario(find_scenario_file(path), overrides, build));
  }
  return to_python(o);
}

// As load_scenario does for a file; `origin` names the text in messages and its folder is where
// relative paths resolve.
py::dict run_text(const std::string& text, const std::string& origin,
                  const std::vector<std::string>& overrides, bool analytical) {
  Outcome o;
  {
    py::gil_scoped_release release;
    std::string stored = text;
    YAML::Node root = load_yaml_text(text, origin);
    if (!root || root.IsNull()) throw InputError(origin + ": the scenario is empty");
    for (const auto& assignment : overrides) {
      apply_override(root, assignment);
      stored += "\n# --set " + assignment;
    }
    ScenarioBuildOptions build;
    build.analytical = analytical;
    o = simulate(build_scenario(root, origin, stored, build));
  }
  return to_python(o);
}

void check_results_file_unlocked(const std::string& path) {
  py::gil_scoped_release release;
  check_results_file(path);
}

}  // namespace
}  // namespace orrery

PYBIND11_MODULE(_orrery, m) {
  m.doc() = "Orrery's C++ core; use the orrery package, not this module.";
  // ValueError: bad input is a bad value given to run(); the message is the one `orrery run`
  // prints after "orrery: error: ".
  py::register_exception<orrery::InputError>(m, "InputError", PyExc_ValueError);
  m.def("run_file", &orrery::run_file, py::arg("path"), py::arg("overrides"),
        py::arg("analytical") = false,
        "Simulates the scenario file `path` with `overrides` (\"key.path=value\" strings).");
  m.def(
      "run_text", &orrery::run_text, py::arg("text"), py::arg("origin"), py::arg("overrides"),
      py::arg("analytical") = false,
      "Simulates scenario YAML `text`; `origin` names it and its folder resolves relative paths.");
  m.def("check_results_file", &orrery::check_results_file_unlocked, py::arg("path"),
        "Raises InputError naming `path` unless `orrery report` would read it: an Orrery results "
        "file, read whole in a child process (so a damaged file cannot crash this one).");
  orrery::bind_kernel_fit(m);
}
