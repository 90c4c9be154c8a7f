// Replay throughput benchmark (issue 2): a 64-GPU ring of compute -> transfer -> compute layers.
// Each layer: every GPU computes, then sends to its right neighbour; the next layer's compute on
// a GPU waits for its own compute and the transfer from its left neighbour. 128 activities per
// layer, so 1,000 layers give 128,000 activities.
//
// Prints activities/s for 128,000 and 256,000 activities (linearity ratio), the peak RSS of each
// run's process, and the same graph at 12,800 activities replayed through SimGrid's own
// add_successor DAG API (all activities created up front) as the baseline.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <simgrid/s4u.hpp>
#include <string>

#include "engine/replay.h"

namespace sg4 = simgrid::s4u;
using namespace orrery;

namespace {

constexpr int kGpus = 64;

Topology ring_platform() {
  Topology t;
  t.name = "bench-switch";
  t.routers.push_back("switch");
  for (int i = 0; i < kGpus; ++i) {
    std::string h = "gpu" + std::to_string(i);
    t.hosts.push_back({h, 1e13, 1, "gpu", {}});
    t.links.push_back({h + "_link", 2.5e10, 1e-6, true, "nvlink"});
    t.edges.push_back({h, "switch", h + "_link"});
  }
  return t;
}

ExecutionGraph ring_graph(int layers) {
  ExecutionGraph g;
  for (int i = 0; i < kGpus; ++i) {
    std::string h = "gpu" + std::to_string(i);
    g.devices.push_back({h, h, h, "", {}});
  }
  g.ops.reserve(static_cast<size_t>(layers) * 2 * kGpus);
  std::vector<int> prev_compute(kGpus, -1), prev_recv(kGpus, -1);
  for (int l = 0; l < layers; ++l) {
    std::vector<int> comp(kGpus);
    for (int i = 0; i < kGpus; ++i) {
      std::vector<int> deps;
      if (prev_compute[i] >= 0) deps.push_back(prev_compute[i]);
      if (prev_recv[i] >= 0) deps.push_back(prev_recv[i]);
      comp[i] = append_compute(g, "c" + std::to_string(l) + "_" + std::to_string(i), i, {}, 1e-4,
                               "", std::move(deps));
    }
    for (int i = 0; i < kGpus; ++i) {
      prev_recv[(i + 1) % kGpus] =
          append_transfer(g, "t" + std::to_string(l) + "_" + std::to_string(i), i,
                          {StreamClass::kComm, 0}, i, (i + 1) % kGpus, 1 << 20, "", {comp[i]});
    }
    prev_compute = comp;
  }
  return g;
}

// The same graph through SimGrid's DAG API: every activity created and linked up front.
double run_add_successor(const ExecutionGraph& g) {
  int argc = 2;
  char a0[] = "bench", a1[] = "--log=root.thresh:critical";
  char* argv[] = {a0, a1, nullptr};
  sg4::Engine e(&argc, argv);
  apply_network_config();
  PlatformSource p;
  p.topology = ring_platform();
  load_platform(p);
  // add_successor is public only on the typed activity classes.
  std::vector<sg4::ActivityPtr> acts;
  std::vector<sg4::ExecPtr> execs(g.ops.size());
  std::vector<sg4::CommPtr> comms(g.ops.size());
  acts.reserve(g.ops.size());
  for (const auto& op : g.ops) {
    if (op.kind == OpKind::kTransfer) {
      auto c = sg4::Comm::sendto_init(sg4::Host::by_name(g.devices[op.src].name),
                                      sg4::Host::by_name(g.devices[op.dst].name));
      c->set_payload_size(static_cast<uint64_t>(op.transfer_bytes));
      comms[acts.size()] = c;
      acts.push_back(c);
    } else {
      auto* h = sg4::Host::by_name(g.devices[op.device].name);
      auto x = sg4::Exec::init()->set_flops_amount(op.duration * h->get_speed())->set_host(h);
      execs[acts.size()] = x;
      acts.push_back(x);
    }
  }
  for (size_t i = 0; i < g.ops.size(); ++i)
    for (int d : g.ops[i].deps) {
      if (execs[d])
        execs[d]->add_successor(acts[i]);
      else
        comms[d]->add_successor(acts[i]);
    }
  for (auto& a : acts) a->vetoable_start();
  e.run();
  return sg4::Engine::get_clock();
}

struct Measure {
  double seconds = 0;
  long max_rss_kib = 0;
  double makespan = 0;
};

// Runs `body` in a child (one SimGrid Engine per process) and reports its wall time and RSS.
template <typename F>
Measure in_child(F body) {
  std::fflush(stdout);  // the child must not inherit unflushed output
  int fds[2];
  if (pipe(fds) != 0) std::abort();
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    auto t0 = std::chrono::steady_clock::now();
    double makespan = body();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    double out[2] = {s, makespan};
    if (write(fds[1], out, sizeof out) != sizeof out) _exit(1);
    _exit(0);
  }
  close(fds[1]);
  double in[2] = {0, 0};
  if (read(fds[0], in, sizeof in) != sizeof in) std::fprintf(stderr, "child failed\n");
  close(fds[0]);
  int status;
  struct rusage ru;
  wait4(pid, &status, 0, &ru);
  return {in[0], ru.ru_maxrss, in[1]};
}

Measure lazy(int layers) {
  auto g = ring_graph(layers);
  PlatformSource p;
  p.topology = ring_platform();
  return in_child([&] { return replay(p, g, ReplayOptions{false}).makespan; });
}

}  // namespace

int main(int argc, char** argv) {
  int layers = argc > 1 ? std::atoi(argv[1]) : 1000;
  const double n1 = layers * 2.0 * kGpus;
  std::printf(
      "replay_bench: 64-GPU ring, compute -> transfer -> compute, lazy actor-less replay\n");
  Measure a = lazy(layers);
  Measure b = lazy(2 * layers);
  std::printf(
      "%10.0f activities: %7.3f s  %9.0f activities/s  peak RSS %6.1f MiB  makespan %.6f s\n", n1,
      a.seconds, n1 / a.seconds, a.max_rss_kib / 1024.0, a.makespan);
  std::printf(
      "%10.0f activities: %7.3f s  %9.0f activities/s  peak RSS %6.1f MiB  makespan %.6f s\n",
      2 * n1, b.seconds, 2 * n1 / b.seconds, b.max_rss_kib / 1024.0, b.makespan);
  std::printf("time ratio for 2x activities: %.2f (target <= 2.3)\n", b.seconds / a.seconds);

  int small = layers / 10;
  auto gs = ring_graph(small);
  Measure c = lazy(small);
  Measure d = in_child([&] { return run_add_successor(gs); });
  double ns = small * 2.0 * kGpus;
  std::printf(
      "baseline at %.0f activities: lazy %.3f s, SimGrid add_successor DAG %.3f s "
      "(%.1fx slower); makespans %.6f vs %.6f s\n",
      ns, c.seconds, d.seconds, d.seconds / c.seconds, c.makespan, d.makespan);
  return 0;
}
