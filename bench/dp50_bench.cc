// "dp50", the peer-comparison workload of issue 6: 50 layers, each 100 us forward, 100 us
// input-gradient and 100 us weight-gradient compute; each layer's 25 MiB weight gradient is
// all-reduced as soon as it is produced, overlapping the next layers' backward. GPUs are in
// servers of 8 (400 GB/s and 936.25 ns GPU to GPU inside a server) on one switch (50 GB/s and
// 2 us per server link). Flow mode: every flow of the hierarchical all-reduces is simulated,
// so link sharing (congestion) is modelled.
//
// Usage: dp50_bench [gpus...] [--analytical] [--flows] [--link-usage] [--write DIR]
//        (default sizes: 8 64 256 1024)
// --flows records every collective flow (ReplayOptions::record_flows), --link-usage samples
// link utilization into 256 bins (ReplayOptions::link_usage_bins): their cost is the difference
// in wall time against a run without them. --write DIR simulates nothing: for each size it
// writes DIR/dp50-<gpus>/ with the platform as SimGrid XML, the workload as Chakra traces and a
// scenario that runs them with `orrery run` (bench/dp50_chakra_bench.sh times that path).
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "engine/replay.h"
#include "platforms/simgrid_platform.h"
#include "workloads/chakra/chakra_export.h"

using namespace orrery;

namespace {

Topology dp50_platform(int gpus) {
  Topology t;
  t.name = "dp50";
  t.routers.push_back("switch");
  const int servers = (gpus + 7) / 8;
  for (int s = 0; s < servers; ++s) {
    std::string sw = "s" + std::to_string(s) + "_nvswitch";
    t.routers.push_back(sw);
    t.links.push_back({sw + "_uplink", 50e9, 2e-6, true, "ethernet"});
    t.edges.push_back({sw, "switch", sw + "_uplink"});
    for (int g = 0; g < 8 && s * 8 + g < gpus; ++g) {
      std::string h = "n" + std::to_string(s) + "_gpu" + std::to_string(g);
      t.hosts.push_back({h, 1e14, 1, "gpu", {}});
      // Two hops GPU -> NVSwitch -> GPU: 936.25 ns in total.
      t.links.push_back({h + "_nvlink", 400e9, 936.25e-9 / 2, true, "nvlink"});
      t.edges.push_back({h, sw, h + "_nvlink"});
    }
  }
  return t;
}

ExecutionGraph dp50_graph(const Topology& t, bool analytical) {
  ExecutionGraph g;
  for (const auto& h : t.hosts)
    g.devices.push_back({h.name, h.name, h.name, h.name.substr(0, h.name.find('_')), {}});
  const int n = static_cast<int>(g.devices.size());
  const int layers = 50;
  std::vector<int> last(n, -1);
  auto op = [&](const std::string& name, int dev, std::vector<int> deps) {
    Op o;
    o.name = name;
    o.device = dev;
    o.duration = 100e-6;
    o.deps = std::move(deps);
    g.ops.push_back(std::move(o));
    return static_cast<int>(g.ops.size()) - 1;
  };
  auto after = [](int x) { return x < 0 ? std::vector<int>{} : std::vector<int>{x}; };
  for (int l = 0; l < layers; ++l)
    for (int d = 0; d < n; ++d)
      last[d] = op("f" + std::to_string(l) + "/" + std::to_string(d), d, after(last[d]));
  for (int l = layers - 1; l >= 0; --l) {
    std::vector<int> wgrads;
    for (int d = 0; d < n; ++d) {
      int ig = op("ig" + std::to_string(l) + "/" + std::to_string(d), d, after(last[d]));
      int wg = op("wg" + std::to_string(l) + "/" + std::to_string(d), d, {ig});
      last[d] = wg;
      wgrads.push_back(wg);
    }
    Collective c;
    c.type = CollectiveType::kAllReduce;
    c.bytes = 25.0 * 1024 * 1024;
    c.analytical = analytical;
    for (int d = 0; d < n; ++d) c.ranks.push_back(d);
    append_collective(g, "allreduce" + std::to_string(l), std::move(c), "", wgrads);
  }
  return g;
}

struct Measure {
  double wall = 0, makespan = 0;
  long rss_kib = 0;
  long long activities = 0;
};

Measure run(int gpus, bool analytical, const ReplayOptions& options) {
  std::fflush(stdout);
  int fds[2];
  if (pipe(fds) != 0) std::abort();
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    auto t0 = std::chrono::steady_clock::now();
    PlatformSource p;
    p.topology = dp50_platform(gpus);
    ExecutionGraph g = dp50_graph(p.topology, analytical);
    RunResult r = replay(p, g, options);
    double out[3] = {std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
                     r.makespan, static_cast<double>(r.activities)};
    if (write(fds[1], out, sizeof out) != sizeof out) _exit(1);
    _exit(0);
  }
  close(fds[1]);
  double in[3] = {0, 0, 0};
  if (read(fds[0], in, sizeof in) != sizeof in) std::fprintf(stderr, "child failed\n");
  close(fds[0]);
  int status;
  struct rusage ru;
  wait4(pid, &status, 0, &ru);
  return {in[0], in[1], ru.ru_maxrss, static_cast<long long>(in[2])};
}

// The same platform and workload as files `orrery run` takes.
void write_scenario(const std::string& dir, int gpus, bool analytical) {
  const std::string d = dir + "/dp50-" + std::to_string(gpus);
  std::filesystem::create_directories(d + "/traces");
  PlatformSource p;
  p.topology = dp50_platform(gpus);
  std::ofstream(d + "/platform.xml") << topology_to_simgrid_xml(p.topology);
  export_chakra_traces(dp50_graph(p.topology, false), d + "/traces/dp50", "");
  std::ofstream y(d + "/scenario.yaml");
  y << "# dp50 (bench/dp50_bench.cc) on " << gpus << " GPUs, as Chakra traces\n"
    << "name: dp50-" << gpus << "\nplatform:\n  xml: platform.xml\n  gpus: [";
  for (size_t i = 0; i < p.topology.hosts.size(); ++i)
    y << (i ? ", " : "") << p.topology.hosts[i].name;
  y << "]\nworkload:\n  type: chakra\n  files: [traces/dp50]\n"
    << "  collectives: {mode: " << (analytical ? "analytical" : "flow") << ", protocol: ideal}\n";
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes;
  bool analytical = false;
  ReplayOptions options;
  options.record_timeline = false;
  std::string write_dir;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--analytical") == 0)
      analytical = true;
    else if (std::strcmp(argv[i], "--flows") == 0)
      options.record_flows = true;
    else if (std::strcmp(argv[i], "--link-usage") == 0)
      options.link_usage_bins = 256;
    else if (std::strcmp(argv[i], "--write") == 0 && i + 1 < argc)
      write_dir = argv[++i];
    else if (const int n = std::atoi(argv[i]); n >= 1)
      sizes.push_back(n);
    else {
      std::fprintf(stderr,
                   "usage: dp50_bench [--analytical] [--flows] [--link-usage] [--write DIR] "
                   "[GPUS...]\n  GPUS: GPU counts (servers of 8); default 8 64 256 "
                   "1024\n  \"%s\" is not one\n",
                   argv[i]);
      return 2;
    }
  }
  if (sizes.empty()) sizes = {8, 64, 256, 1024};
  if (!write_dir.empty()) {
    for (int n : sizes) write_scenario(write_dir, n, analytical);
    return 0;
  }
  std::printf("dp50: 50 layers x (3 x 100 us), 25 MiB all-reduce per layer, %s collectives\n",
              analytical ? "analytical" : "flow-level (congestion-aware)");
  if (options.record_flows || options.link_usage_bins > 0)
    std::printf("recording:%s%s\n", options.record_flows ? " flows" : "",
                options.link_usage_bins > 0 ? " link usage (256 bins)" : "");
  std::printf("%6s %12s %14s %12s %10s\n", "GPUs", "wall (s)", "activities", "iteration",
              "RSS (MiB)");
  for (int n : sizes) {
    Measure m = run(n, analytical, options);
    std::printf("%6d %12.3f %14lld %10.3f ms %10.1f\n", n, m.wall, m.activities, m.makespan * 1e3,
                m.rss_kib / 1024.0);
  }
  return 0;
}
