#include "engine/job_compose.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

#include "common/errors.h"

namespace orrery {
namespace {

// The devices an op occupies: its queue's device, a transfer's ends, a collective's ranks.
std::vector<int> devices_of(const ExecutionGraph& g, const Op& op) {
  std::vector<int> d{op.device};
  if (op.kind == OpKind::kTransfer) d.insert(d.end(), {op.src, op.dst});
  if (op.kind == OpKind::kCollective) {
    const auto& ranks = g.collectives[op.collective].ranks;
    d.insert(d.end(), ranks.begin(), ranks.end());
  }
  std::sort(d.begin(), d.end());
  d.erase(std::unique(d.begin(), d.end()), d.end());
  return d;
}

// Per device of `g`: the ops nothing depends on that occupy it, the end of an iteration there.
std::vector<std::vector<int>> sinks_by_device(const ExecutionGraph& g) {
  std::vector<char> has_successor(g.ops.size(), 0);
  for (const Op& op : g.ops)
    for (int d : op.deps) has_successor[d] = 1;
  std::vector<std::vector<int>> sinks(g.devices.size());
  for (size_t i = 0; i < g.ops.size(); ++i)
    if (!has_successor[i])
      for (int d : devices_of(g, g.ops[i])) sinks[d].push_back(static_cast<int>(i));
  return sinks;
}

}  // namespace

ExecutionGraph compose_jobs(const std::vector<JobGraph>& jobs, std::vector<JobSpan>* spans) {
  ExecutionGraph out;
  std::set<std::string> names;
  spans->clear();
  // Once for all jobs: growing it job by job would move every op already placed each time.
  size_t ops = 0;
  for (const JobGraph& job : jobs)
    ops += 1 + job.graph.ops.size() * static_cast<size_t>(std::max(0, job.iterations));
  out.ops.reserve(ops);
  for (const JobGraph& job : jobs) {
    const ExecutionGraph& g = job.graph;
    const std::string where = "job \"" + job.name + "\"";
    if (job.name.empty()) throw InputError("a job needs a name");
    if (!names.insert(job.name).second) throw InputError(where + ": a second job of that name");
    if (g.devices.empty() || g.ops.empty()) throw InputError(where + ": its workload has no ops");
    if (job.iterations < 1)
      throw InputError(where + ": iterations must be at least 1, got " +
                       std::to_string(job.iterations));
    if (!(job.start >= 0) || !std::isfinite(job.start))
      throw InputError(where + ": the start offset must be a time >= 0");
    JobSpan s;
    s.name = job.name;
    s.first_device = static_cast<int>(out.devices.size());
    s.devices = static_cast<int>(g.devices.size());
    s.first_op = static_cast<int>(out.ops.size());
    s.ops_per_iteration = static_cast<int>(g.ops.size());
    s.iterations = job.iterations;
    s.first_collective = static_cast<int>(out.collectives.size());
    s.collectives_per_iteration = static_cast<int>(g.collectives.size());
    s.start = job.start;
    for (Device d : g.devices) {
      d.name = job.name + "/" + d.name;
      for (int& m : d.mirrors) m += s.first_device;
      out.devices.push_back(std::move(d));
    }
    int delay = -1;
    if (job.start > 0) {
      // A pure delay on the job's first device: the job's first ops wait for it.
      delay = append_compute(out, job.name + "/start", s.first_device, {StreamClass::kHost, 0},
                             job.start, "job start", {});
      s.has_delay = true;
    }
    const std::vector<std::vector<int>> sinks = sinks_by_device(g);
    for (int k = 0; k < job.iterations; ++k) {
      const int base = static_cast<int>(out.ops.size());
      const int previous = base - s.ops_per_iteration;  // iteration k-1's first op
      const int cbase = static_cast<int>(out.collectives.size());
      for (Collective c : g.collectives) {
        for (int& r : c.ranks) r += s.first_device;
        out.collectives.push_back(std::move(c));
      }
      const std::string prefix =
          job.name + "/" + (job.iterations > 1 ? "it" + std::to_string(k) + "/" : "");
      for (const Op& op : g.ops) {
        Op o = op;
        o.name = prefix + op.name;
        o.device += s.first_device;
        if (o.kind == OpKind::kTransfer) {
          o.src += s.first_device;
          o.dst += s.first_device;
        }
        if (o.kind == OpKind::kCollective) o.collective += cbase;
        for (int& d : o.deps) d += base;
        if (op.deps.empty()) {
          if (k == 0 && delay >= 0) o.deps.push_back(delay);
          if (k > 0) {
            // Iteration k starts on a device once iteration k-1 has ended there.
            for (int dev : devices_of(g, op))
              for (int sink : sinks[dev]) o.deps.push_back(previous + sink);
            std::sort(o.deps.begin(), o.deps.end());
            o.deps.erase(std::unique(o.deps.begin(), o.deps.end()), o.deps.end());
          }
        }
        out.ops.push_back(std::move(o));
      }
    }
    spans->push_back(s);
  }
  return out;
}

ExecutionGraph extract_job(const ExecutionGraph& composed, const JobSpan& span) {
  ExecutionGraph g;
  g.devices.assign(composed.devices.begin() + span.first_device,
                   composed.devices.begin() + span.first_device + span.devices);
  for (Device& d : g.devices)
    for (int& m : d.mirrors) m -= span.first_device;
  const int collectives = span.collectives_per_iteration * span.iterations;
  for (int c = 0; c < collectives; ++c) {
    Collective col = composed.collectives[span.first_collective + c];
    for (int& r : col.ranks) r -= span.first_device;
    g.collectives.push_back(std::move(col));
  }
  g.ops.reserve(span.end_op() - span.first_op);
  for (int i = span.first_op; i < span.end_op(); ++i) {
    Op o = composed.ops[i];
    o.device -= span.first_device;
    if (o.kind == OpKind::kTransfer) {
      o.src -= span.first_device;
      o.dst -= span.first_device;
    }
    if (o.kind == OpKind::kCollective) o.collective -= span.first_collective;
    for (int& d : o.deps) d -= span.first_op;
    g.ops.push_back(std::move(o));
  }
  return g;
}

JobSpan alone_span(const JobSpan& span) {
  JobSpan s = span;
  s.first_device = 0;
  s.first_op = 0;
  s.first_collective = 0;
  return s;
}

std::vector<double> iteration_ends(const RunResult& run, const JobSpan& span) {
  if (run.timeline.size() < static_cast<size_t>(span.end_op()))
    throw std::logic_error("iteration_ends: the run has no timeline for job " + span.name);
  std::vector<double> ends;
  for (int k = 0; k < span.iterations; ++k) {
    double end = 0.0;
    for (int i = span.iteration_op(k); i < span.iteration_op(k + 1); ++i)
      end = std::max(end, run.timeline[i].end);
    ends.push_back(end);
  }
  return ends;
}

}  // namespace orrery
