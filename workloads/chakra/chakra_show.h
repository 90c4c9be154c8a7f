// `orrery workload show RANK.et`: one rank's Chakra trace as it is in the file, node by node.
// Converting a single rank of a larger set would drop its collectives (the other ranks are not
// there), so this shows the nodes themselves: type, name, cost and communication attributes,
// and dependencies.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "workloads/chakra/chakra_process_groups.h"
#include "workloads/chakra/chakra_trace.h"

namespace orrery {

// Prints the trace's header (origin, schema version, metadata), node counts by type, and one
// line per node, at most `max_nodes` of them (then how many more there are).
void print_chakra_trace(const chakra::Trace& trace, std::ostream& out, size_t max_nodes = 200);

// `orrery workload show PREFIX`: the process groups the collectives were placed in, one line
// each (pg_name, description, size, the first ranks), at most `max_groups`; `source` says where
// they came from. Nothing when `groups` is empty.
void print_chakra_process_groups(const std::vector<ProcessGroupEntry>& groups,
                                 const std::string& source, std::ostream& out,
                                 size_t max_groups = 64);

}  // namespace orrery
