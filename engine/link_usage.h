// Per-link utilization over time, from the rates the fluid model (engine/fluid_model.h) gives.
//
// Between two changes of its users a link's total rate is constant, so the bytes it carried in
// that interval are exactly rate x length: collective flows and point-to-point transfers alike,
// latency phases (where a flow has no rate yet) excluded, rate changes inside a flow's life
// included. The model reports each such interval when the link's rate changes, so the cost is
// per change, never per link per event. (Spreading each flow's bytes over its life instead is
// wrong wherever a flow slows down when another joins its link: tests/link_usage_test.cc.)
//
// Bins are 2^k ns wide, the narrowest width that fits the run in `max_bins` bins. The makespan
// is not known while the replay runs, so the width starts at 1 ns and doubles (adjacent bins
// merge) whenever an interval ends past the last bin. Merging never splits a bin, so the bins
// are what recording at the final width from the start would have given.
#pragma once

#include <string>
#include <vector>

#include "engine/run_result.h"

namespace orrery {

class LinkUsageSampler {
 public:
  // `links`: the names of the replay's links, the ones routes crossed so far. The vector may
  // grow between calls (routes are resolved on demand) and must outlive the sampler.
  // max_bins <= 0: off, carried() and finish() do nothing.
  LinkUsageSampler(const std::vector<std::string>& links, int max_bins);
  bool on() const { return max_bins_ > 0; }

  // links_[link] carried `bytes` at a constant rate over [from, to).
  void carried(int link, double from, double to, double bytes);

  // links_[link] carries what links_[of] does, interval for interval (a mirrored device's
  // copies of a flow on links alike its own, alike rings run as one, engine/replay.cc):
  // finish() gives it of's bins, or those of the link `of` carries as, and so on.
  void same_as(int link, int of);

  // Sets result->links[i].utilization (bytes carried / (bandwidth x bin width), one value per
  // bin from simulated time 0 up to `end`, the run's last completion) for every link of
  // result->links, matched by name, and result->link_usage_bin_width. Once: the sampler hands
  // its bins over to the result.
  void finish(double end, RunResult* result);

 private:
  void widen_to(double t);
  void flush(size_t link);

  const std::vector<std::string>& links_;
  size_t max_bins_;
  double width_ = 1e-9;
  std::vector<std::vector<double>> bytes_;  // per link: bytes per bin; empty until it carries any
  // Per link, the bytes of its latest bin not yet added to bytes_. A link reports its
  // intervals in time order and most fall in the bin of the one before, so the sums stay in
  // this small array instead of missing the cache on a 2 KiB row of bins each time.
  struct Open {
    size_t bin = 0;
    double bytes = 0.0;
  };
  std::vector<Open> open_;
  std::vector<int> same_as_;  // per link: the link whose bins it takes, -1 its own
};

}  // namespace orrery
