// The extension module `orrery._orrery`: runs a scenario the way `orrery run` does and returns
// what it prints as Python data. The public API, and the conversion of Python dicts to scenario
// text, is the pure-Python package around it (python/orrery/__init__.py).
//
// The replay forks (replay_isolated in engine/replay.h), so SimGrid's one engine per process
// does not limit how often Python may call run. The GIL is released while a scenario loads and
// replays: nothing below touches Python objects.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "common/data_dir.h"
#include "common/errors.h"
#include "common/yaml_reader.h"
#include "engine/replay.h"
#include "python/kernel_fit.h"
#include "results/run_report.h"
#include "scenario/scenario.h"

namespace py = pybind11;

namespace orrery {
namespace {

struct Outcome {
  Scenario scenario;
  RunResult result;
};

Outcome simulate(Scenario sc) {
  ReplayOptions opt;
  opt.record_timeline = false;  // nothing returned needs it
  RunResult r = replay_isolated(sc.platform, sc.graph, opt);
  r.analytical_seconds = sc.analytical_seconds;
  return {std::move(sc), std::move(r)};
}

// The summary `orrery run` prints (cli/run_command.cc), as a dict; python/orrery/__init__.py
// documents each key.
py::dict to_python(const Outcome& o) {
  const Scenario& sc = o.scenario;
  const RunResult& r = o.result;
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
  d["analytical_s"] = r.analytical_seconds > 0 ? py::cast(r.analytical_seconds) : py::none();

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

py::dict run_file(const std::string& path, const std::vector<std::string>& overrides) {
  Outcome o;
  {
    py::gil_scoped_release release;
    o = simulate(load_scenario(find_scenario_file(path), overrides));
  }
  return to_python(o);
}

// As load_scenario does for a file; `origin` names the text in messages and its folder is where
// relative paths resolve.
py::dict run_text(const std::string& text, const std::string& origin,
                  const std::vector<std::string>& overrides) {
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
    o = simulate(build_scenario(root, origin, stored));
  }
  return to_python(o);
}

}  // namespace
}  // namespace orrery

PYBIND11_MODULE(_orrery, m) {
  m.doc() = "Orrery's C++ core; use the orrery package, not this module.";
  // ValueError: bad input is a bad value given to run(); the message is the one `orrery run`
  // prints after "orrery: error: ".
  py::register_exception<orrery::InputError>(m, "InputError", PyExc_ValueError);
  m.def("run_file", &orrery::run_file, py::arg("path"), py::arg("overrides"),
        "Simulates the scenario file `path` with `overrides` (\"key.path=value\" strings).");
  m.def(
      "run_text", &orrery::run_text, py::arg("text"), py::arg("origin"), py::arg("overrides"),
      "Simulates scenario YAML `text`; `origin` names it and its folder resolves relative paths.");
  orrery::bind_kernel_fit(m);
}
