// A ModelGraph as a one-device ExecutionGraph with every op priced at a fixed FLOP rate: the
// simplest way to replay a single replica (tests, quick looks) without the cost models in
// models/. Real runs price ops with a CostModel and place them with a Strategy instead.
#pragma once

#include <string>

#include "engine/execution_graph.h"
#include "workloads/model_graph.h"

namespace orrery {

// One device named `host` (also its SimGrid host); every op on its compute stream with
// duration = flops / flops_per_second (0 for ops without FLOPs), phase = the op's phase name,
// the same dependencies. Precondition: check_model_graph passed and flops_per_second > 0.
ExecutionGraph fixed_rate_graph(const ModelGraph& g, const std::string& host,
                                   double flops_per_second);

}  // namespace orrery
