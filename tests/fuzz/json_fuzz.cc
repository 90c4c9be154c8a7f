// fuzz-sources: workloads/graph_json.cc workloads/model_graph_json.cc models/learned/model_file.cc common/json_fields.cc
// fuzz-seeds: scenarios/validation/graphs/mlp.model.json models/learned/models/*.json tests/fuzz/seeds/*.json
//
// libFuzzer target for the JSON readers: the same bytes as an orrery-graph file, an
// orrery-model file and a learned-estimator model. Only InputError may come out.
// Build and run with scripts/fuzz_readers.
#include <cstdint>
#include <string>

#include "common/errors.h"
#include "models/learned/model_file.h"
#include "workloads/graph_json.h"
#include "workloads/model_graph_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    orrery::parse_graph_json(text, "g.json");
  } catch (const orrery::InputError&) {
  }
  try {
    orrery::parse_model_graph_json(text, "m.json");
  } catch (const orrery::InputError&) {
  }
  try {
    orrery::learned_model_from_json(text, "l.json");
  } catch (const orrery::InputError&) {
  }
  return 0;
}
