// The extension module `orrery._orrery`: runs a scenario the way `orrery run` does and returns
// what it prints as Python data. The public API, and the conversion of Python dicts to scenario
// text, is the pure-Python package around it (python/orrery/__init__.py).
//
// The replay forks (replay_isolated in engine/replay.h), so SimGrid's one engine per process
// does not limit how often Python may call run. The GIL is released while a scenario loads and
// replays: nothing below touches Python objects.
//
// check_results_file guards orrery.load_runs / load_devices (python/orrery/results.py): the
// file is read whole by the reader `orrery report` uses before h5py opens it.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/child_process.h"
#include "common/data_dir.h"
#include "common/errors.h"
#include "common/h5_util.h"
#include "common/yaml_reader.h"
#include "python/kernel_fit.h"
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

// Reads the whole of the 1-D dataset `name` in its own (native) type, strings included, and frees
// what HDF5 allocated: what h5py's dataset[:] does.
void read_whole_dataset(hid_t loc, const std::string& name) {
  h5::Handle d =
      h5::check(H5Dopen2(loc, name.c_str(), H5P_DEFAULT), H5Dclose, "open dataset " + name);
  h5::Handle file_type = h5::check(H5Dget_type(d.get()), H5Tclose, "get the type of " + name);
  h5::Handle type = h5::check(H5Tget_native_type(file_type.get(), H5T_DIR_ASCEND), H5Tclose,
                              "get the memory type of " + name);
  const size_t rows = h5::row_count(d.get());
  const size_t size = H5Tget_size(type.get());
  if (rows == 0 || size == 0) return;
  // Orrery's rows are a few hundred bytes; a damaged type must not ask for terabytes.
  if (size > (size_t{1} << 16))
    throw std::runtime_error(name + ": rows of " + std::to_string(size) + " bytes");
  std::vector<char> buf(rows * size);
  h5::check(H5Dread(d.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data()),
            "read dataset " + name);
  h5::reclaim(type.get(), rows, buf.data());
}

// What orrery.load_runs and load_devices read (python/orrery/results.py) that read_results_h5
// does not: /run_params, /run_values/<parameter> with its unit, and every table whole, in the
// file's own types (h5py reads all members of a compound, not only those Orrery knows).
void read_python_tables(const std::string& path) {
  h5::Handle file =
      h5::check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose, "open file");
  read_whole_dataset(file.get(), "runs");
  if (H5Lexists(file.get(), "run_params", H5P_DEFAULT) > 0)
    read_whole_dataset(file.get(), "run_params");
  if (H5Lexists(file.get(), "run_values", H5P_DEFAULT) > 0) {
    h5::Handle values = h5::check(H5Gopen2(file.get(), "run_values", H5P_DEFAULT), H5Gclose,
                                  "open group run_values");
    H5G_info_t info;
    h5::check(H5Gget_info(values.get(), &info), "list run_values");
    if (info.nlinks > (hsize_t{1} << 20))
      throw std::runtime_error("run_values claims " + std::to_string(info.nlinks) + " parameters");
    std::vector<std::string> names;
    for (hsize_t i = 0; i < info.nlinks; ++i) {
      const ssize_t n = H5Lget_name_by_idx(values.get(), ".", H5_INDEX_NAME, H5_ITER_INC, i,
                                           nullptr, 0, H5P_DEFAULT);
      h5::check(n < 0 ? -1 : 0, "name parameter " + std::to_string(i) + " of run_values");
      std::string name(static_cast<size_t>(n) + 1, '\0');
      h5::check(H5Lget_name_by_idx(values.get(), ".", H5_INDEX_NAME, H5_ITER_INC, i, name.data(),
                                   name.size(), H5P_DEFAULT) < 0
                    ? -1
                    : 0,
                "name parameter " + std::to_string(i) + " of run_values");
      name.resize(static_cast<size_t>(n));
      names.push_back(std::move(name));
    }
    for (const std::string& name : names) {
      const std::string dataset = "run_values/" + name;
      read_whole_dataset(file.get(), dataset);
      h5::Handle d = h5::check(H5Dopen2(file.get(), dataset.c_str(), H5P_DEFAULT), H5Dclose,
                               "open dataset " + dataset);
      h5::read_string_attr(d.get(), "unit");
    }
  }
  h5::Handle runs = h5::check(H5Dopen2(file.get(), "runs", H5P_DEFAULT), H5Dclose, "open /runs");
  const size_t count = h5::row_count(runs.get());
  for (size_t i = 0; i < count; ++i)
    read_whole_dataset(file.get(), "runs_detail/" + std::to_string(i) + "/devices");
}

// Reads `path` as `orrery report` does (read_results_h5), then what the Python loaders read
// beyond that, in a child process, and throws InputError naming the file when that fails: a
// missing file or one that is not HDF5, not an Orrery results file, of a newer format, or
// damaged. read_results_h5 reads the file once in a child of its own (probe_h5_input,
// common/h5_guard.h: a crash or a hang there is reported as a corrupt file) and then again where
// it was called: here that is the child, never the Python interpreter, which libhdf5 must not
// touch (a crash would take the interpreter down, and h5py uses the same library, which is not
// thread-safe).
void check_results_file(const std::string& path) {
  py::gil_scoped_release release;
  // As probe_h5_input: a whole file reads at well over 20 MB/s; a few seconds more cover the start
  // (twice: read_results_h5's child, then this one).
  struct stat st;
  const unsigned limit_s =
      10 + (::stat(path.c_str(), &st) == 0 ? static_cast<unsigned>(st.st_size / 10000000) : 0);
  try {
    run_in_child(
        [&] {
          struct rlimit none = {0, 0};  // no core file when the HDF5 library crashes
          setrlimit(RLIMIT_CORE, &none);
          signal(SIGALRM, SIG_DFL);
          alarm(limit_s);
          read_results_h5(path);  // InputError naming the file, as `orrery report` says it
          h5::QuietErrors quiet;
          try {
            read_python_tables(path);
          } catch (const std::exception& e) {
            throw InputError(path + ": not a valid Orrery results file: " + e.what());
          }
          return std::string();
        },
        "the HDF5 library");
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    const std::string why = e.what();
    if (why.find("(signal " + std::to_string(SIGALRM) + ",") != std::string::npos)
      throw InputError(path + ": Orrery results file is corrupt: reading it took longer than " +
                       std::to_string(limit_s) + " s");
    throw InputError(path + ": Orrery results file is corrupt: " + why + " while reading it");
  }
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
  m.def("check_results_file", &orrery::check_results_file, py::arg("path"),
        "Raises InputError naming `path` unless `orrery report` would read it: an Orrery results "
        "file, read whole in a child process (so a damaged file cannot crash this one).");
  orrery::bind_kernel_fit(m);
}
