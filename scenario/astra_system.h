// ASTRA-sim's system configuration (JSON) as Orrery's collective options, so a Chakra workload
// run with ASTRA-sim's network and system files unchanged picks the same algorithms:
//  - all-reduce-implementation: ring-like entries ("ring", "oneRing", "hierarchicalRing") on
//    one dimension -> ring; on several -> hierarchical (rings inside servers, across them);
//    "doubleBinaryTree" -> tree. all-gather / reduce-scatter: ring-like only. all-to-all:
//    "ring" or "direct" (Orrery's all-to-all is direct either way);
//  - preferred-dataset-splits -> collectives.pipeline (chunks through the dimensions);
//  - scheduling-policy, endpoint-delay, active-chunks-per-dimension, collective-optimization,
//    local-mem-bw, boost-mode, roofline-enabled, peak-perf and ASTRA-sim's other scheduling
//    keys are read and have no counterpart (docs/astra-sim.md).
// Collectives are bytes-only (protocol ideal), as ASTRA-sim's analytical backend models them.
#pragma once

#include <string>

#include "strategies/strategy.h"

namespace orrery {

// Throws InputError naming the file and key: malformed JSON, unknown keys, algorithms Orrery
// does not have ("direct" or "halvingDoubling" all-reduce), splits below 1.
CollectiveOptions read_astra_system(const std::string& path);

}  // namespace orrery
