// Scenario parameters as numbers: "25GB/s" -> 25e9 with unit "B/s", "4MiB" -> 4194304 "B",
// "1ms" -> 0.001 "s", "8" -> 8 "1". The HDF5 store keeps the text form and writes these beside
// it (/run_values, docs/hdf5-layout.md) so programs can filter numerically.
#pragma once

#include <string>

namespace orrery {

// The value of `text` in SI base units and its unit: "s", "B", "B/s", "FLOP/s", or "1" for a
// plain number. False for anything else (names, booleans, lists, non-finite numbers).
bool parse_param_value(const std::string& text, double* value, std::string* unit);

}  // namespace orrery
