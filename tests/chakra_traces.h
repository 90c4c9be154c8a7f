// Chakra traces of one collective, written by Orrery's exporter, for the tests that read
// traces back through scenarios and the importer.
#pragma once

#include <string>

#include "engine/execution_graph.h"
#include "tests/test_util.h"
#include "workloads/chakra/chakra_export.h"

namespace orrery::testing {

// One all-reduce (or all-to-all) of `bytes` over `ranks` ranks, written as Chakra traces by
// Orrery's exporter; returns the prefix.
inline std::string one_collective_traces(CollectiveType type, int ranks, double bytes,
                                         const std::string& tag) {
  ExecutionGraph g;
  for (int r = 0; r < ranks; ++r)
    g.devices.push_back({"rank" + std::to_string(r), "rank" + std::to_string(r), "", "", {}});
  Collective c;
  c.type = type;
  c.bytes = bytes;
  for (int r = 0; r < ranks; ++r) c.ranks.push_back(r);
  append_collective(g, "coll", std::move(c), "", {});
  const std::string prefix = make_temp_dir(tag) + "/t";
  export_chakra_traces(g, prefix, "");
  return prefix;
}

}  // namespace orrery::testing
