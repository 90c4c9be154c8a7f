// Chakra trace import, the part of `orrery run` on traces that the built-in path does not have:
// decoding the rank files (read_chakra_traces, on every core) and converting them into an
// execution graph (chakra_to_execution_graph, with the traces' own process groups and engine
// collectives, as scenarios run them). Prints both wall times, the nodes and ops, and the
// process's peak memory.
//
// Usage: chakra_import_bench DIR|PREFIX|FILES... [--repeat N]
// e.g. build/dp50_bench --write /tmp/dp 1024 && build/chakra_import_bench /tmp/dp/dp50-1024/traces
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/errors.h"
#include "workloads/chakra/chakra_import.h"

using namespace orrery;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> files;
  int repeat = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) {
      repeat = std::max(1, std::atoi(argv[++i]));
    } else {
      files.push_back(argv[i]);
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "usage: chakra_import_bench DIR|PREFIX|FILES... [--repeat N]\n");
    return 2;
  }
  try {
    std::printf("%6s %10s %10s %10s %10s %10s\n", "ranks", "nodes", "ops", "decode s", "convert s",
                "peak MiB");
    for (int k = 0; k < repeat; ++k) {
      auto t0 = std::chrono::steady_clock::now();
      std::vector<chakra::Trace> traces = read_chakra_traces(files);
      const double decode = seconds_since(t0);
      size_t nodes = 0;
      for (const auto& t : traces) nodes += t.nodes.size();
      ChakraImportOptions options;
      options.engine_collectives = true;
      t0 = std::chrono::steady_clock::now();
      ExecutionGraph g = chakra_to_execution_graph(traces, options);
      const double convert = seconds_since(t0);
      struct rusage ru;
      getrusage(RUSAGE_SELF, &ru);
      std::printf("%6zu %10zu %10zu %10.3f %10.3f %10.1f\n", traces.size(), nodes, g.ops.size(),
                  decode, convert, ru.ru_maxrss / 1024.0);
    }
  } catch (const InputError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  return 0;
}
