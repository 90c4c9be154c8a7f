// "Did you mean" hints for unknown names (keys, models, devices, presets, ops).
#pragma once

#include <string>
#include <vector>

namespace orrery {

// Returns ` (did you mean "x"?)` when one of `known` is close to `given` (same letters in another
// case, or within an edit distance of about a third of the name, at least 1 and at most 3), else
// "". Ties go to the earliest name in `known`, so the hint is deterministic.
std::string did_you_mean(const std::string& given, const std::vector<std::string>& known);

// "a, b, c": `known` joined for "expected one of: ..." messages.
std::string join_names(const std::vector<std::string>& known);

}  // namespace orrery
