// `orrery plan` on a file with plan.search: the parallel plans of a language model, simulated
// like sweep points, ranked, and the best printed with where their time goes
// (sweeps/llm_search.h, sweeps/llm_plan.h).
#pragma once

#include "sweeps/sweep_session.h"

namespace orrery {

SweepHooks plan_search_hooks();

}  // namespace orrery
