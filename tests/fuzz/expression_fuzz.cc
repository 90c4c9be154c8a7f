// fuzz-sources: sweeps/expression.cc common/units.cc
// fuzz-seeds: tests/fuzz/seeds/*.expr
//
// libFuzzer target for sweep `derived:` expressions: the bytes as arithmetic and as a template
// whose references all resolve to "25Gbps". Only InputError may come out. Build and run with
// scripts/fuzz_readers.
#include <cstdint>
#include <string>

#include "common/errors.h"
#include "sweeps/expression.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  double v;
  try {
    orrery::evaluate_arithmetic(text, &v);
  } catch (const orrery::InputError&) {
  }
  orrery::Resolver resolve = [](const std::string& name, std::string* out) {
    if (name == "missing") return false;
    *out = "25Gbps";
    return true;
  };
  try {
    orrery::evaluate_template(text, resolve, "fuzz");
  } catch (const orrery::InputError&) {
  }
  return 0;
}
