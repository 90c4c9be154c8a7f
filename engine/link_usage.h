// Per-link utilization over time, sampled from SimGrid at each advance of simulated time.
//
// Between two advances SimGrid's max-min solution is fixed, so every flow runs at a constant
// rate. Engine::on_time_advance fires after the models moved their activities forward and
// before finished activities are handled (EngineImpl::solve in SimGrid 3.32): each link's
// constraint still holds the rates of the interval that just ended, and Link::get_usage() is
// their sum. Usage times the interval's length is then exactly what the link carried in that
// interval: collective flows and point-to-point transfers alike, latency phases (where a flow
// has no rate yet) excluded, rate changes inside a flow's life included.
//
// Only links in use are read: a link joins when a comm crossing it starts (touch()) and leaves
// at the first sample that finds SimGrid holding no comm on it (Link::is_used(), which still
// counts comms in their latency phase). On bench/dp50_bench.cc at 256 GPUs (callgrind), sampling
// adds 4.1% to the replay's instructions this way and 5.7% reading all 576 links at every
// advance; the gap grows with the links a platform leaves idle.
//
// Bins are 2^k ns wide, the narrowest width that fits the run in `max_bins` bins. The makespan
// is not known while the replay runs, so the width starts at 1 ns and doubles (adjacent bins
// merge) whenever a sample falls past the last bin. Merging never splits a bin, so the bins are
// what sampling at the final width from the start would have given.
#pragma once

#include <vector>

#include "engine/run_result.h"

namespace simgrid::s4u {
class Link;
}

namespace orrery {

class LinkUsageSampler {
 public:
  // `links`: the replay's links, the ones routes crossed so far. The vector may grow between
  // samples (routes are resolved on demand) and must outlive the sampler; entries never move.
  // max_bins <= 0: off, sample() and finish() do nothing.
  LinkUsageSampler(const std::vector<simgrid::s4u::Link*>& links, int max_bins);
  bool on() const { return max_bins_ > 0; }

  // A comm crossing links_[link] starts now.
  void touch(int link);

  // Adds the interval (now - dt, now] at the current link usage. Call from an
  // Engine::on_time_advance callback registered before any callback that starts or ends
  // activities at the new date.
  void sample(double dt);

  // Sets result->links[i].utilization (bytes carried / (bandwidth x bin width), one value per
  // bin from simulated time 0 up to `end`, the run's last completion) for every link of
  // result->links, matched by name, and result->link_usage_bin_width.
  void finish(double end, RunResult* result);

 private:
  void add(size_t link, double from, double to, double bytes);
  void widen_to(double t);

  const std::vector<simgrid::s4u::Link*>& links_;
  size_t max_bins_;
  double width_ = 1e-9;
  std::vector<std::vector<double>> bytes_;  // per link: bytes per bin; empty until it carries any
  std::vector<int> active_;                 // links that may carry bytes now
  std::vector<char> is_active_;             // per link: in active_
};

}  // namespace orrery
