#include "sweeps/point_detail.h"

#include <cstdio>
#include <utility>
#include <vector>

#include "common/errors.h"
#include "common/units.h"
#include "results/chrome_trace.h"
#include "results/h5_store.h"
#include "scenario/scenario_run.h"
#include "sweeps/expression.h"
#include "sweeps/yaml_path.h"

namespace orrery {

int run_point_detail(const SweepInput& in, const PointDetailArgs& args) {
  const int64_t n = static_cast<int64_t>(in.points.size());
  if (args.index < 0 || args.index >= n)
    throw InputError("--point " + std::to_string(args.index) + ": the sweep has points 0 to " +
                     std::to_string(n - 1));
  if (args.output.empty())
    throw InputError("--point " + std::to_string(args.index) +
                     ": give -o FILE.h5 for the point's results (output.file is the sweep's)");
  const SweepPoint& p = in.points[args.index];
  Scenario sc = build_point_scenario(in, p, fresh_base_tree(in));
  RunOptions options;
  options.isolated = true;
  options.replay.record_timeline = true;
  options.replay.record_flows = !args.trace.empty();
  options.replay.max_recorded_flows = sc.trace_flows;
  options.replay.link_usage_bins = sc.link_usage_bins;
  options.created_by = args.created_by;
  ScenarioRun run = run_scenario(sc, options);
  // The result moves into the record: each copy was every link's usage bins again.
  std::vector<RunRecord> records(1);
  RunRecord& record = records[0];
  record.name = in.name + "/" + std::to_string(p.index);
  record.params = p.params;
  record.result = std::move(run.result);
  const RunResult& r = record.result;
  record.params["sweep.index"] = std::to_string(p.index);
  record.params["sweep.hash"] = hash_hex(p.hash);
  // The figures the sweep stored for this point, stored the same way.
  for (const auto& [name, value] : run.metrics) record.params[name] = format_number(value);
  // The point's own scenario, so the file explains itself without the sweep.
  run.meta.scenario_text = p.canonical;
  write_results_h5(args.output, run.meta, records, {&sc.graph});
  if (!args.trace.empty()) write_chrome_trace(args.trace, sc.graph, r);
  if (!args.quiet) {
    std::printf("Point      %lld of %s\n", static_cast<long long>(p.index), in.name.c_str());
    for (const auto& [k, v] : p.params) std::printf("  %s = %s\n", k.c_str(), v.c_str());
    std::printf("Platform   %s\nIteration  %s\nResults    %s\n", sc.platform_summary.c_str(),
                format_time(run.iteration_s).c_str(), args.output.c_str());
    for (const auto& [name, value] : run.metrics)
      std::printf("  %s = %s\n", name.c_str(), format_number(value).c_str());
    if (!args.trace.empty()) std::printf("Trace      %s\n", args.trace.c_str());
  }
  return 0;
}

}  // namespace orrery
