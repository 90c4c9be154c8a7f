#include "sweeps/point_runner.h"

#include <poll.h>

#include <cstdlib>
#include <exception>

#include "common/errors.h"
#include "engine/replay.h"
#include "engine/run_result_io.h"
#include "scenario/job_report.h"
#include "scenario/llm_figures.h"

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
    ReplayOptions options;
    options.record_timeline = false;
    if (sc.jobs) {
      // Each job alone first (in children of its own), then all together: the point's figures
      // are the cluster's (scenario/job_report.h), its stored run the shared one.
      const std::vector<RunResult> alone = replay_jobs_alone(sc, options);
      options.record_timeline = true;
      RunResult r = replay(sc.platform, sc.graph, options);
      o.metrics = cluster_metrics(cluster_figures(sc, r, job_outcomes(sc, r, alone)));
      r.timeline.clear();
      o.result_bytes = serialize_run_result(r);
      o.ok = true;
      return serialize_outcome(o);
    }
    RunResult r = replay(sc.platform, sc.graph, options);
    r.analytical_seconds = sc.analytical_seconds;
    if (sc.llm) o.metrics = llm_metrics(llm_figures(*sc.llm, r));
    o.result_bytes = serialize_run_result(r);
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
