// fuzz-sources: common/yaml_reader.cc common/units.cc scenario/scenario.cc
// fuzz-seeds: scenarios/*.yaml scenarios/strategies/*.yaml tests/fuzz/seeds/*.yaml
//
// libFuzzer target for scenario YAML: the bytes as a scenario file, read strictly and built into
// a platform and a workload. Only InputError may come out (a size guard refusing a huge
// platform is one). Build and run with scripts/fuzz_readers.
#include <cstdint>
#include <string>

#include "common/errors.h"
#include "common/yaml_reader.h"
#include "scenario/scenario.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    YAML::Node root = orrery::load_yaml_text(text, "s.yaml");
    if (root && root.IsMap()) orrery::build_scenario(root, "fuzz/s.yaml", text);
  } catch (const orrery::InputError&) {
  }
  return 0;
}
