// Reader half of h5_store.h (the writer is h5_store.cc).
#include <map>
#include <stdexcept>

#include "common/errors.h"
#include "common/h5_guard.h"
#include "common/h5_util.h"
#include "results/h5_link_usage.h"
#include "results/h5_rows.h"
#include "results/h5_store.h"

namespace orrery {
namespace {

std::string text(const char* p) { return p != nullptr ? p : ""; }

herr_t collect_attr_name(hid_t, const char* name, const H5A_info_t*, void* out) {
  static_cast<std::vector<std::string>*>(out)->push_back(name);
  return 0;
}

// Attribute names are collected first and read afterwards: an exception must not cross the
// HDF5 C frames of H5Aiterate2.
std::map<std::string, std::string> read_params(hid_t group) {
  std::vector<std::string> names;
  h5::check(H5Aiterate2(group, H5_INDEX_NAME, H5_ITER_INC, nullptr, collect_attr_name, &names),
            "list parameters");
  std::map<std::string, std::string> params;
  for (const std::string& name : names) params[name] = h5::read_string_attr(group, name.c_str());
  return params;
}

void read_detail(hid_t detail, hid_t str, size_t index, RunRecord* run,
                 std::vector<TimelineRow>* timeline) {
  const std::string name = std::to_string(index);
  h5::Handle group = h5::check(H5Gopen2(detail, name.c_str(), H5P_DEFAULT), H5Gclose,
                               "open group runs_detail/" + name);
  run->name = h5::read_string_attr(group.get(), "name");
  {
    h5::Handle params = h5::check(H5Gopen2(group.get(), "params", H5P_DEFAULT), H5Gclose,
                                  "open group runs_detail/" + name + "/params");
    run->params = read_params(params.get());
  }
  RunResult& result = run->result;
  h5::Compound device_type = h5::device_row_type(str);
  h5::read_rows<h5::DeviceRow>(
      group.get(), "devices", device_type.memory_type(), [&](const h5::DeviceRow& r) {
        DeviceStats d;
        d.name = text(r.name);
        d.busy = {r.busy_compute, r.busy_comm, r.busy_copy_h2d, r.busy_copy_d2h, r.busy_host};
        d.idle = r.idle;
        d.exposed_comm = r.exposed_comm;
        d.memory_bound = r.memory_bound;
        d.ops = r.ops;
        result.devices.push_back(std::move(d));
      });
  h5::Compound link_type = h5::link_row_type(str);
  h5::read_rows<h5::LinkRow>(
      group.get(), "links", link_type.memory_type(), [&](const h5::LinkRow& r) {
        result.links.push_back({text(r.name), r.bandwidth, r.latency, r.bytes, text(r.link_class)});
      });
  h5::read_link_utilization(group.get(), &result);
  htri_t has_timeline = H5Lexists(group.get(), "timeline", H5P_DEFAULT);
  h5::check(has_timeline < 0 ? -1 : 0, "look up runs_detail/" + name + "/timeline");
  if (has_timeline == 0) return;
  h5::Compound timeline_type = h5::timeline_row_type(str);
  h5::read_rows<h5::TimelineRowH5>(
      group.get(), "timeline", timeline_type.memory_type(), [&](const h5::TimelineRowH5& r) {
        timeline->push_back(
            {text(r.op), text(r.device), text(r.stream), text(r.phase), r.start, r.end});
        result.timeline.push_back({r.start, r.end});
      });
}

LoadedResults read_file(const std::string& path) {
  h5::Handle file =
      h5::check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose, "open file");
  LoadedResults out;
  if (!h5::has_attr(file.get(), "format_version")) {
    throw InputError(path + ": not an Orrery results file (no format_version attribute)");
  }
  out.format_version = h5::read_int_attr(file.get(), "format_version");
  if (out.format_version < 1 || out.format_version > kResultsFormatVersion) {
    throw InputError(path + ": results format_version " + std::to_string(out.format_version) +
                     " is not supported (this Orrery reads 1 to " +
                     std::to_string(kResultsFormatVersion) + ")");
  }
  out.meta.orrery_version = h5::read_string_attr(file.get(), "orrery_version");
  out.meta.scenario_text = h5::read_string_attr(file.get(), "scenario");
  out.meta.platform_description = h5::read_string_attr(file.get(), "platform");
  out.meta.created_by = h5::read_string_attr(file.get(), "created_by");
  if (h5::has_attr(file.get(), "device"))
    out.meta.device = h5::read_string_attr(file.get(), "device");
  if (h5::has_attr(file.get(), "tokens_per_iteration")) {
    out.meta.tokens_per_iteration = h5::read_double_attr(file.get(), "tokens_per_iteration");
    out.meta.model_flops_per_iteration =
        h5::read_double_attr(file.get(), "model_flops_per_iteration");
  }
  if (h5::has_attr(file.get(), "memory"))
    out.meta.memory = h5::read_string_attr(file.get(), "memory");

  h5::Handle str = h5::string_type();
  h5::Compound run_type = h5::run_row_type(str.get(), out.format_version >= 2);
  h5::read_rows<h5::RunRow>(file.get(), "runs", run_type.memory_type(), [&](const h5::RunRow& r) {
    RunRecord run;
    run.result.makespan = r.iteration_time_s;
    run.result.activities = r.activities;
    run.result.wall_seconds = r.wall_s;
    if (out.format_version >= 2) run.result.analytical_seconds = r.analytical_s;
    out.runs.push_back(std::move(run));
    out.summaries.push_back({r.iteration_time_s, r.compute_s, r.comm_s, r.io_s, r.host_s, r.idle_s,
                             r.exposed_comm_s, r.memory_bound_s});
  });
  if (H5Lexists(file.get(), "jobs", H5P_DEFAULT) > 0) {
    std::map<std::string, size_t> index;
    const bool with_best = out.format_version >= 4;
    h5::Compound job_type = h5::job_row_type(str.get(), with_best);
    h5::read_rows<h5::JobRow>(file.get(), "jobs", job_type.memory_type(), [&](const h5::JobRow& r) {
      JobRecord j;
      j.name = r.name ? r.name : "";
      j.placement = r.placement ? r.placement : "";
      j.gpus = static_cast<int>(r.gpus);
      j.mean = r.mean_s;
      j.min = r.min_s;
      j.max = r.max_s;
      j.stdev = r.stdev_s;
      j.alone_mean = r.alone_mean_s;
      j.slowdown = r.slowdown;
      j.end = r.end_s;
      if (with_best) {
        j.best_mean = r.best_mean_s;
        j.placement_cost = r.placement_cost;
      }
      index[j.name] = out.meta.jobs.size();
      out.meta.jobs.push_back(std::move(j));
    });
    h5::Compound it_type = h5::job_iteration_row_type(str.get());
    h5::read_rows<h5::JobIterationRow>(
        file.get(), "job_iterations", it_type.memory_type(), [&](const h5::JobIterationRow& r) {
          auto it = index.find(r.job ? r.job : "");
          if (it == index.end())
            throw std::runtime_error(std::string("job_iterations names job \"") +
                                     (r.job ? r.job : "") + "\", which /jobs does not list");
          out.meta.jobs[it->second].iteration_times.push_back(r.time_s);
        });
  }
  out.timelines.resize(out.runs.size());
  h5::Handle detail = h5::check(H5Gopen2(file.get(), "runs_detail", H5P_DEFAULT), H5Gclose,
                                "open group runs_detail");
  for (size_t i = 0; i < out.runs.size(); ++i) {
    try {
      read_detail(detail.get(), str.get(), i, &out.runs[i], &out.timelines[i]);
    } catch (const std::runtime_error& e) {
      if (dynamic_cast<const InputError*>(&e) != nullptr) throw;
      throw std::runtime_error("runs_detail/" + std::to_string(i) + ": " + e.what());
    }
  }
  return out;
}

}  // namespace

LoadedResults read_results_h5(const std::string& path) {
  // Anything missing or mistyped means the file is not what `orrery` wrote: the user's input.
  return read_h5_input(path, "Orrery results file", [&] { return read_file(path); });
}

}  // namespace orrery
