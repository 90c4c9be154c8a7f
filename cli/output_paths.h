// Where `orrery run` writes, and what it may replace.
//
// Output paths (output.file and output.trace in a scenario, like -o and --trace) are relative
// to the current directory, the one orrery runs in. A run never replaces a file that is not one
// of Orrery's results or traces unless --force is given, and says so when it replaces a result of
// another configuration. With --set overrides and no -o, the scenario's output files are named
// after the overrides, so a variation never replaces the base configuration's result.
#pragma once

#include <string>
#include <vector>

namespace orrery {

// "out/q.h5" with {"platform.server.gpus=8"} -> "out/q--platform.server.gpus=8.h5". Characters
// other than letters, digits and ._=+- become '_'; when the overrides' part would pass 120
// characters it is replaced by "set-" and a 16-hex-digit hash of them. No overrides: `file`.
std::string name_for_overrides(const std::string& file, const std::vector<std::string>& overrides);

// Throws InputError naming `path` when it holds something Orrery must not replace (a file it did
// not write, a directory, a device), unless `force`. Returns a note to print when it holds an
// Orrery result whose scenario text differs from `scenario_text`; "" otherwise.
std::string check_replaceable(const std::string& path, const std::string& what,
                              const std::string& scenario_text, bool force);

}  // namespace orrery
