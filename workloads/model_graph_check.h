// Structural validation of a ModelGraph (from the zoo, an importer or a file), run before
// anything trusts its indices: O(ops + deps), iterative.
#pragma once

#include <string>

#include "workloads/model_graph.h"

namespace orrery {

// Throws InputError on the first problem, starting with `origin` and naming the op:
//  - batch >= 1; op names non-empty and unique; op types known to workloads/op_counts.h;
//  - batch and every number within its accepted range (common/input_limits.h): batch 1 to
//    1e7, flops up to 1e21, bytes up to 1 PB, params and grads up to 1e15 elements; shape
//    dimensions >= 0 and element counts that fit 64 bits;
//  - every dep index in range, no self-dependency, no cycle ("a -> b -> a": b depends on a).
void check_model_graph(const ModelGraph& g, const std::string& origin);

}  // namespace orrery
