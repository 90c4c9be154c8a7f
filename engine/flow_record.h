// Recording of the point-to-point flows collectives issue, for traces that show each rank's
// steps (results/chrome_trace.h). The replayer reports a flow when it starts and when it ends,
// by the slot it keeps the flow's SimGrid comm in; the recorder keeps its own slot -> record map,
// so the replay's state needs no field for it.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/run_result.h"

namespace orrery {

class FlowRecorder {
 public:
  // Off: start() and end() do nothing. On: the first `max_flows` flows are kept (40 bytes
  // each), every flow is counted.
  FlowRecorder(bool on, int64_t max_flows);

  // A flow of collective op `op` started at simulated time `now` in replay slot `slot`. The
  // caller reuses a slot only after end() for it.
  void start(uint64_t slot, int op, int src, int dst, double bytes, double now);
  void end(uint64_t slot, double now);

  // Moves the records into result->flows, times measured from `t0` (the run's first op start),
  // numbers each source's flows within its collective (FlowRecord::seq) and sets
  // result->flows_issued. Call once, after the replay.
  void finish(double t0, RunResult* result);

 private:
  static constexpr int64_t kNotKept = -1;
  bool on_;
  int64_t max_flows_;
  int64_t issued_ = 0;
  std::vector<FlowRecord> flows_;
  std::vector<int64_t> open_;  // per slot: the record its flow fills, or kNotKept
};

}  // namespace orrery
