#include "scenario/job_report.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <map>
#include <stdexcept>

#include "engine/run_result_io.h"

namespace orrery {
namespace {

std::vector<double> iteration_times(const RunResult& run, const JobSpan& span) {
  const std::vector<double> ends = iteration_ends(run, span);
  std::vector<double> times;
  double previous = span.start;
  for (double e : ends) {
    times.push_back(e - previous);
    previous = e;
  }
  return times;
}

double mean_of(const std::vector<double>& v) {
  double sum = 0.0;
  for (double x : v) sum += x;
  return v.empty() ? 0.0 : sum / static_cast<double>(v.size());
}

}  // namespace

JobsAlone replay_jobs_alone(const Scenario& sc, ReplayOptions options) {
  ChildRun run = start_jobs_alone(sc, options);
  return finish_jobs_alone(run, sc);
}

ChildRun start_jobs_alone(const Scenario& sc, ReplayOptions options) {
  if (!sc.jobs) throw std::logic_error("start_jobs_alone: not a jobs scenario");
  options.record_timeline = true;
  options.record_flows = false;
  options.progress = false;
  return start_in_child(
      [&sc, options] {
        // Each result behind its length: 8 bytes, little-endian as this machine writes them.
        // One platform for all of them: building it took most of a small job's run when
        // every job had a process and a platform of its own (1,000 one-GPU jobs: 55 s).
        std::string out;
        const size_t own = sc.jobs->spans.size();
        replay_each(
            sc.platform, own + sc.jobs->best_placement.size(),
            [&](size_t i) {
              return i < own ? extract_job(sc.graph, sc.jobs->spans[i])
                             : sc.jobs->best_placement[i - own].graph;
            },
            options,
            [&](size_t, RunResult r) {
              const std::string one = serialize_run_result(r);
              const uint64_t n = one.size();
              out.append(reinterpret_cast<const char*>(&n), sizeof n).append(one);
            });
        return out;
      },
      "the runs of each job alone");
}

JobsAlone finish_jobs_alone(ChildRun& run, const Scenario& sc) {
  const std::string data = run.finish();
  std::vector<RunResult> all;
  for (size_t pos = 0; pos < data.size();) {
    uint64_t n = 0;
    if (data.size() - pos < sizeof n) throw std::runtime_error("runs alone: truncated answer");
    std::memcpy(&n, data.data() + pos, sizeof n);
    pos += sizeof n;
    if (data.size() - pos < n) throw std::runtime_error("runs alone: truncated answer");
    all.push_back(deserialize_run_result(data.substr(pos, n)));
    pos += n;
  }
  // The jobs on their own GPUs, then those with other best GPUs, as start_jobs_alone ran them.
  const size_t jobs = sc.jobs->spans.size();
  if (all.size() != jobs + sc.jobs->best_placement.size())
    throw std::runtime_error("runs alone: not one run per job and best placement");
  JobsAlone out;
  out.own.assign(std::make_move_iterator(all.begin()),
                 std::make_move_iterator(all.begin() + static_cast<std::ptrdiff_t>(jobs)));
  out.best.assign(std::make_move_iterator(all.begin() + static_cast<std::ptrdiff_t>(jobs)),
                  std::make_move_iterator(all.end()));
  return out;
}

JobsOutcome job_outcomes(const Scenario& sc, const RunResult& shared, const JobsAlone& runs) {
  if (!sc.jobs || runs.own.size() != sc.jobs->spans.size())
    throw std::logic_error("job_outcomes: one run alone per job expected");
  const std::vector<RunResult>& alone = runs.own;
  JobsOutcome out;
  std::map<std::string, std::vector<std::string>> users;  // link -> jobs
  for (size_t j = 0; j < sc.jobs->spans.size(); ++j) {
    const JobSpan& span = sc.jobs->spans[j];
    JobRecord o;
    o.name = span.name;
    o.placement = sc.jobs->jobs[j].placement;
    o.gpus = static_cast<int>(sc.jobs->jobs[j].gpus.size());
    o.iteration_times = iteration_times(shared, span);
    o.mean = mean_of(o.iteration_times);
    o.min = *std::min_element(o.iteration_times.begin(), o.iteration_times.end());
    o.max = *std::max_element(o.iteration_times.begin(), o.iteration_times.end());
    double var = 0.0;
    for (double t : o.iteration_times) var += (t - o.mean) * (t - o.mean);
    o.stdev = std::sqrt(var / static_cast<double>(o.iteration_times.size()));
    o.end = iteration_ends(shared, span).back();
    o.alone_mean = mean_of(iteration_times(alone[j], alone_span(span)));
    o.slowdown = o.alone_mean > 0 ? o.mean / o.alone_mean : 1.0;
    o.best_mean = o.alone_mean;
    const int b = j < sc.jobs->best_of.size() ? sc.jobs->best_of[j] : -1;
    if (b >= 0 && static_cast<size_t>(b) < runs.best.size())
      o.best_mean = mean_of(iteration_times(runs.best[b], sc.jobs->best_placement[b].span));
    o.placement_cost = o.best_mean > 0 ? o.alone_mean / o.best_mean : 1.0;
    out.jobs.push_back(std::move(o));
    for (const LinkStats& l : alone[j].links)
      if (l.bytes > 0) users[l.name].push_back(span.name);
  }
  for (const LinkStats& l : shared.links) {
    auto it = users.find(l.name);
    if (it == users.end() || it->second.size() < 2) continue;
    SharedLink s;
    s.name = l.name;
    s.jobs = it->second;
    s.bytes = l.bytes;
    s.busy =
        l.bandwidth > 0 && shared.makespan > 0 ? l.bytes / (l.bandwidth * shared.makespan) : 0.0;
    out.shared.push_back(std::move(s));
  }
  std::stable_sort(out.shared.begin(), out.shared.end(),
                   [](const SharedLink& a, const SharedLink& b) { return a.busy > b.busy; });
  return out;
}

ClusterFigures cluster_figures(const Scenario& sc, const RunResult& shared, const JobsOutcome& o) {
  if (!sc.jobs) throw std::logic_error("cluster_figures: not a jobs scenario");
  ClusterFigures f;
  f.placed = static_cast<int>(o.jobs.size());
  f.unplaced = static_cast<int>(sc.jobs->unplaced.size());
  f.gpus = sc.jobs->gpus;
  f.gpus_used = sc.jobs->gpus - sc.jobs->free_gpus;
  f.fragmented_gpus = sc.jobs->fragmented_gpus;
  double slowdowns = 0.0, costs = 0.0;
  f.max_slowdown = 0.0;
  f.max_placement_cost = 0.0;
  for (const JobRecord& j : o.jobs) {
    if (j.mean > 0) {
      f.gpu_batches_per_s += j.gpus / j.mean;
      f.iterations_per_s += 1.0 / j.mean;
    }
    slowdowns += j.slowdown;
    f.max_slowdown = std::max(f.max_slowdown, j.slowdown);
    costs += j.placement_cost;
    f.max_placement_cost = std::max(f.max_placement_cost, j.placement_cost);
  }
  f.mean_slowdown = o.jobs.empty() ? 1.0 : slowdowns / static_cast<double>(o.jobs.size());
  f.mean_placement_cost = o.jobs.empty() ? 1.0 : costs / static_cast<double>(o.jobs.size());
  if (o.jobs.empty()) f.max_slowdown = f.max_placement_cost = 1.0;
  // A GPU may run several devices of a job (a CPU-side device does not count): its busy time
  // is theirs together, never more than the run.
  std::map<std::string, double> busy;
  for (const ScenarioJob& j : sc.jobs->jobs)
    for (const std::string& h : j.gpus) busy[h] = 0.0;
  for (size_t d = 0; d < shared.devices.size() && d < sc.graph.devices.size(); ++d) {
    auto it = busy.find(sc.graph.devices[d].host);
    if (it != busy.end())
      it->second += shared.devices[d].busy[static_cast<int>(StreamClass::kCompute)];
  }
  double total = 0.0;
  for (const auto& [host, t] : busy) total += std::min(t, shared.makespan);
  if (f.gpus > 0 && shared.makespan > 0) f.gpu_utilization = total / (f.gpus * shared.makespan);
  return f;
}

std::vector<std::pair<std::string, double>> cluster_metrics(const ClusterFigures& f) {
  return {{"jobs.placed", f.placed},
          {"jobs.unplaced", f.unplaced},
          {"jobs.gpus", f.gpus},
          {"jobs.gpus_used", f.gpus_used},
          {"jobs.fragmented_gpus", f.fragmented_gpus},
          {"jobs.gpu_batches_per_s", f.gpu_batches_per_s},
          {"jobs.iterations_per_s", f.iterations_per_s},
          {"jobs.mean_slowdown", f.mean_slowdown},
          {"jobs.max_slowdown", f.max_slowdown},
          {"jobs.mean_placement_cost", f.mean_placement_cost},
          {"jobs.max_placement_cost", f.max_placement_cost},
          {"jobs.gpu_utilization", f.gpu_utilization}};
}

}  // namespace orrery
