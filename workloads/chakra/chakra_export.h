// Writing an ExecutionGraph to disk as Chakra execution traces (`orrery workload export
// --chakra`): the encoding is workloads/chakra/chakra_writer.h; this adds file names, atomic
// writes and the checks that keep a trace set readable as one set.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "engine/execution_graph.h"

namespace orrery {

struct ChakraExport {
  std::string prefix;              // what load_chakra_traces takes back: PREFIX.<rank>.et
  std::vector<std::string> files;  // PREFIX.0.et ... PREFIX.<n-1>.et
  // PREFIX.comm_groups.json when some collective spans a subset of the devices (give it as the
  // scenario's comm_groups); "" otherwise.
  std::string comm_groups_file;
  size_t nodes = 0;
  std::vector<std::string> notes;  // what the traces carry differently (rounded durations...)
};

// Writes `graph` as PREFIX.<rank>.et, one file per device. `prefix_or_dir` is PREFIX
// (DIR/NAME), or an existing directory (or a path ending in '/'), which means DIR/`name`.
// Each file is written atomically (common/atomic_file.h). Throws InputError, before writing
// anything, when the graph has no devices, the directory is missing, or files of another set
// are in the way (PREFIX.<r>.et for r past the last rank, or any PREFIX.<r>.et.gz), since the
// reader would take them for ranks of this one; and, naming the file, when a write fails.
ChakraExport export_chakra_traces(const ExecutionGraph& graph, const std::string& prefix_or_dir,
                                  const std::string& name);

}  // namespace orrery
