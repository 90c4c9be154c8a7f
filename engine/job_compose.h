// Several training jobs as one execution graph, so that one replay shares the platform between
// them: their flows meet on the links, NICs and switches they both cross, exactly as one job's
// own flows do. Each job keeps its own devices (its GPUs; two jobs never share one), starts
// after its start offset and repeats its one-iteration graph `iterations` times: on each device
// an iteration's first ops wait for the device's last ops of the iteration before (a training
// loop: the next step's forward after this step's update).
//
// Layout of the composed graph, per job in order: its devices, then (start > 0) one delay op,
// then iteration 0's ops, iteration 1's ops, ...; its collectives likewise. JobSpan records where
// each part lies, so results can be cut back into jobs and a job replayed alone.
#pragma once

#include <string>
#include <vector>

#include "engine/execution_graph.h"
#include "engine/run_result.h"

namespace orrery {

struct JobGraph {
  std::string name;      // prefixes its devices and ops ("<name>/...")
  ExecutionGraph graph;  // one iteration
  int iterations = 1;    // >= 1
  double start = 0.0;    // seconds after the run starts
};

struct JobSpan {
  std::string name;
  int first_device = 0, devices = 0;
  int first_op = 0;           // the delay op when start > 0, else iteration 0's first op
  int ops_per_iteration = 0;  // iteration k's ops: [iteration_op(k), iteration_op(k + 1))
  int iterations = 1;
  int first_collective = 0, collectives_per_iteration = 0;
  double start = 0.0;
  bool has_delay = false;

  int iteration_op(int k) const { return first_op + (has_delay ? 1 : 0) + k * ops_per_iteration; }
  int end_op() const { return iteration_op(iterations); }
};

// Throws InputError when a job is empty, has no devices, repeats a name, or has iterations < 1
// or a start offset that is negative or not finite.
ExecutionGraph compose_jobs(const std::vector<JobGraph>& jobs, std::vector<JobSpan>* spans);

// The job's part of a composed graph as a graph of its own (devices, ops and collectives
// renumbered from 0; names kept), to replay it alone on the same GPUs.
ExecutionGraph extract_job(const ExecutionGraph& composed, const JobSpan& span);

// The job's part of a composed graph's run, its span rebased to `extract_job`'s numbering.
JobSpan alone_span(const JobSpan& span);

// When each iteration of the job ended in `run` (RunResult::timeline must be recorded): the
// latest end of its ops. Iteration k took ends[k] - ends[k-1], iteration 0 ends[0] - start.
std::vector<double> iteration_ends(const RunResult& run, const JobSpan& span);

}  // namespace orrery
