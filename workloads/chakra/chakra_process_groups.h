// Process groups as PyTorch records them in an execution trace, for traces converted by Chakra's
// PyTorch converter (execution trace + Kineto, linked and converted by Chakra's tools).
//
// PyTorch writes torch.distributed's process-group table into the execution trace as a record
// function named "## process_group:init ##" whose one input is the JSON text of
// `_world.pg_config_info`: a list of {"pg_name", "pg_desc", "backend_config", "ranks",
// "group_size", "group_count"}, where "ranks" lists the group's global ranks and is empty when the
// group spans every rank. Chakra's converter keeps that record as a METADATA_NODE whose
// inputs.values is Python's repr of the input list (['[{"pg_name": "0", ...}]']), and gives each
// collective, send and receive the pg_name of its process group (from Kineto's "Process Group
// Name"). Each rank's table lists the groups that rank belongs to; the tables of all ranks
// together name every group.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "workloads/chakra/chakra_trace.h"

namespace orrery {

// The node name PyTorch gives the table.
inline constexpr const char* kProcessGroupInitNode = "## process_group:init ##";

struct ProcessGroupEntry {
  std::string name;  // pg_name: what collectives' pg_name attributes refer to
  std::string desc;  // pg_desc ("default_pg", "TENSOR_MODEL_PARALLEL_GROUP", ...); may be empty
  std::vector<int> ranks;  // global ranks in group order; every rank 0..world-1 for "ranks": []
};

// Parses one table: `values` as Chakra's converter writes it (a Python list literal of strings
// whose first string is the JSON table) or as the execution trace's JSON holds it (a JSON list
// of one string, or the table itself). `world` is the number of ranks (traces). Throws
// InputError prefixed with `where` for text that is neither, entries without pg_name, ranks
// outside 0..world-1 or repeated, and a group_size that disagrees with the ranks.
std::vector<ProcessGroupEntry> parse_process_group_table(const std::string& values, int world,
                                                         const std::string& where);

// The process groups of a set of rank traces (rank i = traces[i]): every rank's
// "## process_group:init ##" table merged, pg_name -> ranks. Empty when no trace has one. Throws
// InputError naming both files when two ranks give one pg_name different ranks.
std::map<std::string, std::vector<int>> trace_process_groups(
    const std::vector<chakra::Trace>& traces);
// The same groups with their descriptions, ordered by pg_name (for listing them).
std::vector<ProcessGroupEntry> trace_process_group_entries(
    const std::vector<chakra::Trace>& traces);

}  // namespace orrery
