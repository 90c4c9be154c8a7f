// `orrery bench collective -o FILE`: the bench's rows as CSV (.csv) or HDF5 (.h5), written
// atomically (layout in docs/hdf5-layout.md, "Collective bench files").
#pragma once

#include <string>
#include <vector>

#include "engine/collective_bench.h"

namespace orrery {

// `description` is stored as the file's "description" attribute (the command line, the
// platform). Throws InputError naming the path when it cannot be written or its extension is
// neither .csv nor .h5.
void write_collective_bench(const std::string& path, const std::vector<CollectiveBenchRow>& rows,
                            const CollectiveBenchOptions& opt, const std::string& description);

}  // namespace orrery
