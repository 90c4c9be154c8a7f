// Structural validation of a ModelGraph (from the zoo, an importer or a file), run before
// anything trusts its indices: O(ops + deps), iterative.
#pragma once

#include <string>

#include "workloads/model_graph.h"

namespace orrery {

// Throws InputError on the first problem, starting with `origin` and naming the op:
//  - batch >= 1; op names non-empty and unique; op types known to models/op_counts.h;
//  - shape dimensions >= 0; flops, bytes, params, grads finite and >= 0;
//  - every dep index in range, no self-dependency, no cycle ("a -> b -> a": b depends on a).
void check_model_graph(const ModelGraph& g, const std::string& origin);

}  // namespace orrery
