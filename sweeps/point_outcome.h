// What running one sweep point produced: a result or an error. Travels as bytes from a child
// process, between MPI ranks, and into the journal.
#pragma once

#include <cstdint>
#include <string>

namespace orrery {

struct PointOutcome {
  int64_t index = 0;
  uint64_t hash = 0;
  bool ok = false;
  std::string error;         // why the point failed ("" when ok)
  std::string result_bytes;  // serialize_run_result() of the point's RunResult (when ok)
};

std::string serialize_outcome(const PointOutcome& o);
// Throws std::runtime_error on truncated or malformed bytes.
PointOutcome deserialize_outcome(const std::string& bytes);

}  // namespace orrery
