// Where the files Orrery ships beside its binary live: scenarios, the profile databases and
// learned models they name, presets and device specs as readable YAML, the Python scripts.
// Installed (`cmake --install`, the .deb), that is PREFIX/share/orrery, found from the running
// binary's own path, so an installed Orrery never reads the source tree; run from the build
// tree, it is the source tree the binary was built from.
#pragma once

#include <string>

namespace orrery {

// The shipped-data directory, in this order: $ORRERY_DATA_DIR when set (it must be a
// directory, else InputError naming it); BINDIR/../share/orrery when the binary was installed;
// the source tree when the binary runs from the build tree it was built in; "" otherwise.
std::string shipped_data_dir();

// A scenario argument as a file: `arg` itself when it names an existing file, else, when `arg`
// has no '/', the shipped scenario of that name (DATA/scenarios/ARG, ARG.yaml, or ARG.yaml in a
// subfolder of scenarios/, first match in that order). Returns `arg` unchanged when nothing
// matches, so the reader's error names what the user typed.
std::string find_scenario_file(const std::string& arg);

}  // namespace orrery
