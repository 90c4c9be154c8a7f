// fuzz-sources: models/profile_csv.cc models/profile_db.cc
// fuzz-seeds: models/profiles/*.csv
//
// libFuzzer target for the profile CSV reader. Only InputError may come out.
// Build and run with scripts/fuzz_readers.
#include <cstdint>
#include <string>

#include "common/errors.h"
#include "models/profile_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    orrery::parse_profile_csv(std::string(reinterpret_cast<const char*>(data), size), "p.csv");
  } catch (const orrery::InputError&) {
  }
  return 0;
}
