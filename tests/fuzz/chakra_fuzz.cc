// fuzz-sources: workloads/chakra/chakra_trace.cc workloads/chakra/chakra_import.cc workloads/chakra/chakra_collectives.cc workloads/chakra/chakra_show.cc
// fuzz-seeds: scenarios/traces/*/*.0.et ../shared/fixtures/chakra/microbenchmarks/*/4npus_1MB/*.0.et
//
// libFuzzer target for the Chakra reader: decodes the input as two rank traces (split at the
// first 0xff 0xfe, or the same bytes twice), converts them with the importer's own collectives
// and with engine collectives, and lists the first. Only InputError may come out. The protobuf
// decoding itself is libprotobuf's (the generated et_def.pb.cc comes from build/).
// Build and run with scripts/fuzz_readers.
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "common/errors.h"
#include "workloads/chakra/chakra_import.h"
#include "workloads/chakra/chakra_show.h"
#include "workloads/chakra/chakra_trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  const size_t cut = bytes.find("\xff\xfe");
  const std::string a = cut == std::string::npos ? bytes : bytes.substr(0, cut);
  const std::string b = cut == std::string::npos ? bytes : bytes.substr(cut + 2);
  try {
    std::vector<orrery::chakra::Trace> traces;
    traces.push_back(orrery::chakra::parse_trace(a, "r.0.et"));
    std::ostringstream listing;
    orrery::print_chakra_trace(traces[0], listing);
    traces.push_back(orrery::chakra::parse_trace(b, "r.1.et"));
    orrery::ChakraImportOptions options;
    orrery::chakra_to_execution_graph(traces, options);
    options.engine_collectives = true;
    orrery::chakra_to_execution_graph(traces, options);
  } catch (const orrery::InputError&) {
  }
  return 0;
}
