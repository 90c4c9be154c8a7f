// The platform a command names: a preset (`dgx-a100`) or a YAML file holding a platform mapping
// (or a scenario, whose `platform:` section is used), with --set overrides.
#pragma once

#include <string>
#include <vector>

#include "platforms/platform_spec.h"

namespace orrery {

// True when `arg` is an existing SimGrid XML file (only benches accept one).
bool is_xml_platform(const std::string& arg);

// Overrides are keys relative to the platform mapping (a leading "platform." is accepted too).
// Throws InputError for unknown presets (listing them), XML files, and bad keys or values.
PlatformSpec load_platform_arg(const std::string& platform,
                               const std::vector<std::string>& overrides);

}  // namespace orrery
