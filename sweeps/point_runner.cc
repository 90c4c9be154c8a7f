#include "sweeps/point_runner.h"

#include <poll.h>

#include <cstdlib>
#include <exception>

#include "common/errors.h"
#include "engine/run_result_io.h"
#include "scenario/scenario_run.h"

namespace orrery {

std::string run_point_in_child(SweepInput& in, const SweepPoint& point) {
  PointOutcome o;
  o.index = point.index;
  o.hash = point.hash;
  try {
    if (const char* hook = std::getenv("ORRERY_SWEEP_TEST_ABORT"))
      if (std::to_string(point.index) == hook) std::abort();
    if (const char* hold = std::getenv("ORRERY_SWEEP_TEST_HOLD_FROM"))
      if (point.index >= std::atoll(hold))
        for (int i = 0; i < 6000; ++i) ::poll(nullptr, 0, 100);
    // A plan that does not fit the GPUs' memory would not run: no time to simulate.
    ScenarioBuildOptions build;
    build.skip_out_of_memory = true;
    Scenario sc = build_point_scenario(in, point, in.base, build);
    // The child is this point's own process: replay in place. A jobs scenario replays each job
    // alone beside it; the point's figures are then the cluster's, its stored run the shared one.
    RunOptions options;
    options.replay.record_timeline = false;
    const ScenarioRun run = run_scenario(sc, options);
    o.metrics = run.metrics;
    o.result_bytes = serialize_run_result(run.result);
    o.ok = true;
  } catch (const InfeasibleError& e) {
    o.infeasible = true;
    o.error = e.what();
  } catch (const InputError& e) {
    o.error = e.what();
  } catch (const std::exception& e) {
    o.error = std::string("internal error: ") + e.what();
  } catch (...) {
    o.error = "internal error: unknown exception";
  }
  return serialize_outcome(o);
}

PointOutcome outcome_of(const ChildExit& exit, const SweepPoint& point) {
  PointOutcome o;
  o.index = point.index;
  o.hash = point.hash;
  if (!exit.completed) {
    o.error = "simulation " + exit.failure;
    return o;
  }
  try {
    PointOutcome back = deserialize_outcome(exit.payload);
    if (back.hash != point.hash || back.index != point.index)
      throw std::runtime_error("outcome of another point");
    return back;
  } catch (const std::exception& e) {
    o.error = std::string("internal error: unreadable result from the child: ") + e.what();
    return o;
  }
}

}  // namespace orrery
