// Point-to-point microbenchmarks run in the simulator (`orrery platform bench`): for chosen GPU
// pairs, GPU -> GPU bandwidth one way and both ways at once, host -> GPU and GPU -> host, laid
// out like Table 1 of the offline-profiling paper (one column per pair, MB/s).
#pragma once

#include <string>
#include <vector>

#include "platforms/simgrid_platform.h"

namespace orrery {

struct BenchPair {
  std::string label;  // column title, e.g. "PCIe switch"
  std::string a;      // GPU host names
  std::string b;
  std::string host;  // CPU host for the host <-> GPU rows (transfers with a); empty: skipped
};

struct BenchColumn {
  BenchPair pair;
  // Bytes/s. bi counts both directions together; NaN where not measured.
  double uni = 0.0;
  double bi = 0.0;
  double host_to_gpu = 0.0;
  double gpu_to_host = 0.0;
};

// One pair per kind of route (route_relation) between the GPUs of the first server, in the
// order of Table 1 (QPI, Root complex, PCIe switch) then NVLink, NVSwitch, and Network (first GPU
// of server 0 to first GPU of server 1). Each is the first such pair in GPU order; the host is
// the CPU that launches kernels for a.
std::vector<BenchPair> default_bench_pairs(const Topology& topo);

// Runs every measurement of every pair one after another in one simulation (in a child
// process, replay_isolated), `bytes` per transfer: a -> b alone, then a -> b and b -> a
// together, then host -> a, then a -> host. Bandwidth = bytes moved / elapsed time.
std::vector<BenchColumn> run_platform_bench(const PlatformSource& platform,
                                            const std::vector<BenchPair>& pairs, double bytes);

// The table: rows GPU -> GPU uni / bi, host -> GPU, GPU -> host; one column per pair; MB/s.
std::string format_bench_table(const std::vector<BenchColumn>& columns);

}  // namespace orrery
