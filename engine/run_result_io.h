// Binary (de)serialization of RunResult, used to pass results from a child process.
#pragma once

#include <string>

#include "engine/run_result.h"

namespace orrery {

std::string serialize_run_result(const RunResult& r);
// Throws std::runtime_error on truncated or malformed input.
RunResult deserialize_run_result(const std::string& bytes);

}  // namespace orrery
