// One sweep point, run inside a forked child (child_pool.h): build the point's scenario,
// replay it in this fresh process, and hand back a PointOutcome as bytes.
#pragma once

#include <string>

#include "sweeps/child_pool.h"
#include "sweeps/point_outcome.h"
#include "sweeps/sweep_input.h"

namespace orrery {

// Child side: writes the point's keys into the child's own copy of in.base (so call it only
// in a forked child, once), then replays without a timeline. Never throws: errors become a
// failed outcome carrying the message.
//
// Testing hook: when the environment variable ORRERY_SWEEP_TEST_ABORT holds this point's
// index, the child calls abort() before simulating, as a SimGrid internal error would.
// When ORRERY_SWEEP_TEST_HOLD_FROM holds a number N, the child of every point whose index is
// N or more sleeps (up to 10 minutes) before simulating: a sweep then finishes exactly the
// points below N and keeps the rest running, so a test can interrupt it at a known place.
std::string run_point_in_child(SweepInput& in, const SweepPoint& point);

// Parent side: the outcome a finished child handed back, or a failed outcome saying how the
// child died.
PointOutcome outcome_of(const ChildExit& exit, const SweepPoint& point);

}  // namespace orrery
