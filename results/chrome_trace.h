// Chrome trace export of one run's timeline, for chrome://tracing and Perfetto (ui.perfetto.dev).
// One process per device (pid = device index + 1, named after the device), one thread per stream
// (named stream_name(), tid the same for a given stream on every device), one complete event
// ("ph":"X") per op: name = op name, cat = op phase, ts/dur in microseconds from the start of the
// run, args.kind = "compute" or "transfer" (transfers add bytes, src, dst; compute ops add nonzero
// flops and bytes). A collective op shows on the track of every rank of its group, spanning the
// collective's whole run (args.kind = "collective", collective, bytes, ranks): each rank takes
// part in it, whichever rank's queue it was started from. Ops without a finite start and end are
// left out.
//
// When the run recorded its collective flows (RunResult::flows), each flow shows on its sending
// rank's process, on threads "comm steps", "comm steps:1"... after the streams (a flow takes the
// lowest such lane free at its start, so events on one thread never overlap): name
// "<collective> to <peer device>", cat "comm_step", args.kind = "flow", collective, op (the
// collective op's name), peer, bytes, seq (FlowRecord::seq). The top-level "otherData" gives
// comm_steps_recorded and comm_steps_issued; when the replay left flows out (its
// max_recorded_flows cap), "comm_steps_left_out" says how many, and a global instant event
// with the same text marks where they begin.
#pragma once

#include <string>

#include "engine/execution_graph.h"
#include "engine/run_result.h"

namespace orrery {

// Streams the trace to "<path>.tmp.<pid>" and renames it to `path` when complete, so memory
// stays flat for million-op graphs and no half-written trace is ever left under `path`.
// Throws std::invalid_argument when result.timeline is not parallel to graph.ops or a flow names
// no device or collective op of `graph`, InputError
// naming `path` when it cannot be created or written (common/atomic_file.h).
void write_chrome_trace(const std::string& path, const ExecutionGraph& graph,
                        const RunResult& result);

}  // namespace orrery
