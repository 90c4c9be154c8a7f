// Writer half of h5_store.h (the reader is h5_read.cc).
#include "results/h5_store.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>
#include <utility>

#include "common/atomic_file.h"
#include "common/h5_util.h"
#include "results/h5_link_usage.h"
#include "results/h5_rows.h"
#include "results/param_values.h"

namespace orrery {

RunSummary summarize_run(const RunResult& result) {
  RunSummary s;
  s.iteration_time_s = result.makespan;
  auto busy = [](const DeviceStats& d, StreamClass c) { return d.busy[static_cast<int>(c)]; };
  // Devices that ran no op (a CPU that only sources input copies) would dilute the means.
  double n = 0;
  for (const DeviceStats& d : result.devices) {
    if (d.ops == 0) continue;
    ++n;
    s.compute_s += busy(d, StreamClass::kCompute);
    s.comm_s += busy(d, StreamClass::kComm);
    s.io_s += busy(d, StreamClass::kCopyH2D) + busy(d, StreamClass::kCopyD2H);
    s.host_s += busy(d, StreamClass::kHost);
    s.idle_s += d.idle;
    s.exposed_comm_s += d.exposed_comm;
    s.memory_bound_s += d.memory_bound;
  }
  // Per training step: a run of several steps (strategy.iterations) reports one step's mean.
  const double steps = std::max(1, result.iterations);
  s.iteration_time_s /= steps;
  if (n == 0) return s;
  n *= steps;
  s.compute_s /= n;
  s.comm_s /= n;
  s.io_s /= n;
  s.host_s /= n;
  s.idle_s /= n;
  s.exposed_comm_s /= n;
  s.memory_bound_s /= n;
  return s;
}

namespace {

// Timelines are written in slabs so memory stays bounded for million-op graphs.
constexpr size_t kTimelineSlab = size_t{1} << 16;

const ExecutionGraph* graph_of(const std::vector<const ExecutionGraph*>& graphs, size_t i) {
  return graphs.empty() ? nullptr : graphs[i];
}

// Programming errors are caught before a file is created, so they never cost a partial write.
void validate(const std::vector<RunRecord>& runs,
              const std::vector<const ExecutionGraph*>& graphs) {
  if (!graphs.empty() && graphs.size() != runs.size()) {
    throw std::invalid_argument("write_results_h5: " + std::to_string(graphs.size()) +
                                " graphs for " + std::to_string(runs.size()) + " runs");
  }
  for (size_t i = 0; i < runs.size(); ++i) {
    const std::string where =
        "write_results_h5: run " + std::to_string(i) + " '" + runs[i].name + "'";
    for (const auto& [key, value] : runs[i].params) {
      if (key.empty()) throw std::invalid_argument(where + " has a parameter with an empty name");
    }
    const std::vector<LinkStats>& links = runs[i].result.links;
    for (const LinkStats& l : links) {
      if (l.utilization.size() != links.front().utilization.size()) {
        throw std::invalid_argument(where + ": link " + l.name + " has " +
                                    std::to_string(l.utilization.size()) +
                                    " utilization bins, link " + links.front().name + " " +
                                    std::to_string(links.front().utilization.size()));
      }
    }
    const std::vector<OpTiming>& timeline = runs[i].result.timeline;
    if (timeline.empty()) continue;
    const ExecutionGraph* graph = graph_of(graphs, i);
    if (graph == nullptr) throw std::invalid_argument(where + " has a timeline but no graph");
    if (graph->ops.size() != timeline.size()) {
      throw std::invalid_argument(where + ": timeline has " + std::to_string(timeline.size()) +
                                  " entries, graph has " + std::to_string(graph->ops.size()) +
                                  " ops");
    }
    for (const Op& op : graph->ops) {
      if (op.device < 0 || op.device >= static_cast<int>(graph->devices.size())) {
        throw std::invalid_argument(where + ": op '" + op.name + "' has no valid device");
      }
    }
  }
}

void write_meta(hid_t file, const ResultFileMeta& meta) {
  h5::write_string_attr(file, "orrery_version", meta.orrery_version);
  h5::write_string_attr(file, "scenario", meta.scenario_text);
  h5::write_string_attr(file, "platform", meta.platform_description);
  h5::write_string_attr(file, "created_by", meta.created_by);
  h5::write_string_attr(file, "device", meta.device);
  if (meta.tokens_per_iteration > 0) {
    h5::write_double_attr(file, "tokens_per_iteration", meta.tokens_per_iteration);
    h5::write_double_attr(file, "model_flops_per_iteration", meta.model_flops_per_iteration);
  }
  if (!meta.memory.empty()) h5::write_string_attr(file, "memory", meta.memory);
  h5::write_int_attr(file, "format_version", kResultsFormatVersion);
}

void write_runs_table(hid_t file, hid_t str, const std::vector<RunRecord>& runs) {
  std::vector<h5::RunRow> rows;
  rows.reserve(runs.size());
  for (const RunRecord& run : runs) {
    RunSummary s = summarize_run(run.result);
    rows.push_back({run.name.c_str(), s.iteration_time_s, s.compute_s, s.comm_s, s.io_s, s.host_s,
                    s.idle_s, s.exposed_comm_s, s.memory_bound_s, run.result.activities,
                    run.result.wall_seconds, run.result.analytical_seconds});
  }
  h5::Compound type = h5::run_row_type(str);
  h5::Handle dset = h5::create_dataset(file, "runs", type.file_type().get(), rows.size());
  h5::write_rows(dset.get(), type.memory_type(), 0, rows.size(), rows.data());
}

// One string column per parameter name used by any run, so a sweep reads as one table next to
// /runs. Absent values are "" here; the per-run params attributes stay authoritative.
void write_params_table(hid_t file, hid_t str, const std::vector<RunRecord>& runs) {
  std::set<std::string> keys;
  for (const RunRecord& run : runs) {
    for (const auto& [key, value] : run.params) keys.insert(key);
  }
  if (keys.empty()) return;  // HDF5 has no compound type without members
  h5::Compound type(keys.size() * sizeof(const char*));
  size_t column = 0;
  for (const std::string& key : keys) type.add(key.c_str(), column++ * sizeof(const char*), str);
  std::vector<const char*> cells;
  cells.reserve(runs.size() * keys.size());
  for (const RunRecord& run : runs) {
    for (const std::string& key : keys) {
      auto it = run.params.find(key);
      cells.push_back(it == run.params.end() ? "" : it->second.c_str());
    }
  }
  h5::Handle dset = h5::create_dataset(file, "run_params", type.file_type().get(), runs.size());
  h5::write_rows(dset.get(), type.memory_type(), 0, runs.size(), cells.data());
}

// Parameters whose text is not a quantity by design: a hash of digits only would pass as one.
bool never_numeric(const std::string& key) {
  return key == "sweep.hash" || key == "sweep.status" || key == "sweep.error";
}

// /run_values: each parameter whose every value is a number of one unit (param_values.h),
// as a float64 column with a `unit` attribute, so h5py and pandas users can filter
// numerically. NaN where a run lacks the parameter. The text form stays in /run_params.
void write_values_table(hid_t file, const std::vector<RunRecord>& runs) {
  std::map<std::string, std::string> unit_of;  // key -> unit; "" once it is not numeric
  for (const RunRecord& run : runs) {
    for (const auto& [key, text] : run.params) {
      double v = 0;
      std::string unit;
      const bool numeric = !never_numeric(key) && key.find('/') == std::string::npos &&
                           key != "." && parse_param_value(text, &v, &unit);
      auto [it, fresh] = unit_of.emplace(key, numeric ? unit : "");
      if (!fresh && it->second != (numeric ? unit : "")) it->second = "";
    }
  }
  h5::Handle group;
  for (const auto& [key, unit] : unit_of) {
    if (unit.empty()) continue;
    if (group.get() < 0) {
      group = h5::check(H5Gcreate2(file, "run_values", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                        H5Gclose, "create group run_values");
    }
    std::vector<double> column(runs.size(), std::nan(""));
    for (size_t i = 0; i < runs.size(); ++i) {
      auto it = runs[i].params.find(key);
      std::string ignored;
      if (it != runs[i].params.end()) parse_param_value(it->second, &column[i], &ignored);
    }
    h5::Handle dset = h5::create_dataset(group.get(), key.c_str(), H5T_IEEE_F64LE, runs.size());
    h5::write_rows(dset.get(), H5T_NATIVE_DOUBLE, 0, runs.size(), column.data());
    h5::write_string_attr(dset.get(), "unit", unit);
  }
}

void write_devices(hid_t group, hid_t str, const RunResult& result) {
  std::vector<h5::DeviceRow> rows;
  rows.reserve(result.devices.size());
  for (const DeviceStats& d : result.devices) {
    rows.push_back({d.name.c_str(), d.busy[0], d.busy[1], d.busy[2], d.busy[3], d.busy[4], d.idle,
                    d.exposed_comm, d.memory_bound, d.ops});
  }
  static_assert(kNumStreamClasses == 5, "update DeviceRow and docs/hdf5-layout.md");
  h5::Compound type = h5::device_row_type(str);
  h5::Handle dset = h5::create_dataset(group, "devices", type.file_type().get(), rows.size());
  h5::write_rows(dset.get(), type.memory_type(), 0, rows.size(), rows.data());
}

void write_links(hid_t group, hid_t str, const RunResult& result) {
  std::vector<h5::LinkRow> rows;
  rows.reserve(result.links.size());
  for (const LinkStats& l : result.links) {
    rows.push_back({l.name.c_str(), l.bandwidth, l.latency, l.bytes, l.link_class.c_str()});
  }
  h5::Compound type = h5::link_row_type(str);
  h5::Handle dset = h5::create_dataset(group, "links", type.file_type().get(), rows.size());
  h5::write_rows(dset.get(), type.memory_type(), 0, rows.size(), rows.data());
}

void write_timeline(hid_t group, hid_t str, const ExecutionGraph& graph, const RunResult& result) {
  // Few distinct streams: name each once and point every row at the shared string.
  std::map<std::pair<int, int>, std::string> stream_names;
  for (const Op& op : graph.ops) {
    auto key = std::make_pair(static_cast<int>(op.stream.cls), op.stream.index);
    if (stream_names.find(key) == stream_names.end()) {
      stream_names.emplace(key, stream_name(op.stream));
    }
  }
  h5::Compound type = h5::timeline_row_type(str);
  const size_t n = graph.ops.size();
  h5::Handle dset = h5::create_dataset(group, "timeline", type.file_type().get(), n, kTimelineSlab);
  std::vector<h5::TimelineRowH5> rows;
  rows.reserve(std::min(n, kTimelineSlab));
  for (size_t first = 0; first < n; first += kTimelineSlab) {
    const size_t count = std::min(kTimelineSlab, n - first);
    rows.clear();
    for (size_t i = first; i < first + count; ++i) {
      const Op& op = graph.ops[i];
      const std::string& stream =
          stream_names.at({static_cast<int>(op.stream.cls), op.stream.index});
      rows.push_back({op.name.c_str(), graph.devices[op.device].name.c_str(), stream.c_str(),
                      op.phase.c_str(), result.timeline[i].start, result.timeline[i].end});
    }
    h5::write_rows(dset.get(), type.memory_type(), first, count, rows.data());
  }
}

void write_detail(hid_t parent, hid_t str, size_t index, const RunRecord& run,
                  const ExecutionGraph* graph) {
  const std::string name = std::to_string(index);
  h5::Handle group =
      h5::check(H5Gcreate2(parent, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose,
                "create group runs_detail/" + name);
  h5::write_string_attr(group.get(), "name", run.name);
  // Parameters get their own group so a parameter called "name" cannot collide.
  h5::Handle params =
      h5::check(H5Gcreate2(group.get(), "params", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose,
                "create group runs_detail/" + name + "/params");
  for (const auto& [key, value] : run.params) {
    h5::write_string_attr(params.get(), key.c_str(), value);
  }
  write_devices(group.get(), str, run.result);
  write_links(group.get(), str, run.result);
  h5::write_link_utilization(group.get(), run.result);
  if (!run.result.timeline.empty()) write_timeline(group.get(), str, *graph, run.result);
}

void write_jobs_tables(hid_t file, hid_t str, const std::vector<JobRecord>& jobs) {
  std::vector<h5::JobRow> rows;
  std::vector<h5::JobIterationRow> iterations;
  for (const JobRecord& j : jobs) {
    rows.push_back({j.name.c_str(), j.placement.c_str(), j.gpus,
                    static_cast<int64_t>(j.iteration_times.size()), j.mean, j.min, j.max, j.stdev,
                    j.alone_mean, j.slowdown, j.end, j.best_mean, j.placement_cost});
    for (size_t k = 0; k < j.iteration_times.size(); ++k)
      iterations.push_back({j.name.c_str(), static_cast<int64_t>(k), j.iteration_times[k]});
  }
  h5::Compound type = h5::job_row_type(str);
  h5::Handle dset = h5::create_dataset(file, "jobs", type.file_type().get(), rows.size());
  h5::write_rows(dset.get(), type.memory_type(), 0, rows.size(), rows.data());
  h5::Compound it_type = h5::job_iteration_row_type(str);
  h5::Handle it_dset =
      h5::create_dataset(file, "job_iterations", it_type.file_type().get(), iterations.size());
  h5::write_rows(it_dset.get(), it_type.memory_type(), 0, iterations.size(), iterations.data());
}

void write_file(const std::string& file_path, const ResultFileMeta& meta,
                const std::vector<RunRecord>& runs,
                const std::vector<const ExecutionGraph*>& graphs) {
  h5::Handle fapl = h5::checksummed_file_access();
  h5::Handle file = h5::check(H5Fcreate(file_path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()),
                              H5Fclose, "create " + file_path);
  {
    h5::Handle str = h5::string_type();
    write_meta(file.get(), meta);
    write_runs_table(file.get(), str.get(), runs);
    write_params_table(file.get(), str.get(), runs);
    write_values_table(file.get(), runs);
    if (!meta.jobs.empty()) write_jobs_tables(file.get(), str.get(), meta.jobs);
    h5::Handle detail =
        h5::check(H5Gcreate2(file.get(), "runs_detail", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                  H5Gclose, "create group runs_detail");
    for (size_t i = 0; i < runs.size(); ++i) {
      write_detail(detail.get(), str.get(), i, runs[i], graph_of(graphs, i));
    }
  }
  file.close(("close " + file_path).c_str());
}

}  // namespace

void write_results_h5_file(const std::string& file_path, const ResultFileMeta& meta,
                           const std::vector<RunRecord>& runs,
                           const std::vector<const ExecutionGraph*>& graphs) {
  validate(runs, graphs);
  h5::QuietErrors quiet;
  write_file(file_path, meta, runs, graphs);
}

void write_results_h5(const std::string& path, const ResultFileMeta& meta,
                      const std::vector<RunRecord>& runs,
                      const std::vector<const ExecutionGraph*>& graphs) {
  validate(runs, graphs);
  h5::QuietErrors quiet;
  write_atomically(path, [&](const std::string& tmp) { write_file(tmp, meta, runs, graphs); });
}

}  // namespace orrery
