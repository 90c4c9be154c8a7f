#include "engine/link_usage.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>

namespace orrery {

LinkUsageSampler::LinkUsageSampler(const std::vector<std::string>& links, int max_bins)
    : links_(links), max_bins_(static_cast<size_t>(std::max(0, max_bins))) {}

void LinkUsageSampler::flush(size_t link) {
  Open& o = open_[link];
  if (o.bytes == 0.0) return;
  auto& bins = bytes_[link];
  if (bins.empty()) bins.assign(max_bins_, 0.0);
  bins[o.bin] += o.bytes;
  o.bytes = 0.0;
}

void LinkUsageSampler::widen_to(double t) {
  while (t > static_cast<double>(max_bins_) * width_) {
    for (size_t l = 0; l < open_.size(); ++l) flush(l);
    for (auto& bins : bytes_) {
      if (bins.empty()) continue;
      for (size_t j = 0; j < max_bins_; ++j) {
        const double b = bins[j];
        bins[j] = 0.0;
        bins[j / 2] += b;
      }
    }
    width_ *= 2;
  }
}

void LinkUsageSampler::carried(int link_index, double from, double to, double bytes) {
  if (!on() || !(to > from)) return;
  const size_t link = static_cast<size_t>(link_index);
  widen_to(to);
  if (bytes_.size() <= link) {
    bytes_.resize(link + 1);
    open_.resize(link + 1);
  }
  const size_t last = max_bins_ - 1;
  const size_t first_bin = std::min(last, static_cast<size_t>(std::max(0.0, from / width_)));
  const size_t last_bin = std::min(last, static_cast<size_t>(std::max(0.0, to / width_)));
  if (first_bin == last_bin) {
    Open& o = open_[link];
    if (o.bin != first_bin) {
      flush(link);
      o.bin = first_bin;
    }
    o.bytes += bytes;
    return;
  }
  flush(link);
  auto& bins = bytes_[link];
  if (bins.empty()) bins.assign(max_bins_, 0.0);
  // The rate was constant over the interval: each bin gets its share of the interval's length.
  const double rate = bytes / (to - from);
  for (size_t j = first_bin; j <= last_bin; ++j) {
    const double lo = std::max(from, static_cast<double>(j) * width_);
    const double hi = j == last_bin ? to : std::min(to, static_cast<double>(j + 1) * width_);
    if (hi > lo) bins[j] += rate * (hi - lo);
  }
}

void LinkUsageSampler::same_as(int link, int of) {
  if (!on()) return;
  if (same_as_.size() <= static_cast<size_t>(link)) same_as_.resize(link + 1, -1);
  same_as_[link] = of;
}

void LinkUsageSampler::finish(double end, RunResult* result) {
  if (!on()) return;
  widen_to(end);
  for (size_t l = 0; l < open_.size(); ++l) flush(l);
  const size_t bins =
      std::max<size_t>(1, std::min(max_bins_, static_cast<size_t>(std::ceil(end / width_ - 1e-9))));
  // Per result link, the row of bins it takes (its own, or the one it carries as), if any.
  constexpr size_t kNone = static_cast<size_t>(-1);
  std::unordered_map<std::string_view, size_t> index;
  index.reserve(links_.size());
  for (size_t l = 0; l < links_.size(); ++l) index.emplace(links_[l], l);
  std::vector<size_t> row(result->links.size(), kNone);
  std::vector<int> readers(bytes_.size(), 0);
  for (size_t i = 0; i < result->links.size(); ++i) {
    auto it = index.find(result->links[i].name);
    if (it == index.end()) continue;
    size_t l = it->second;
    // Links alike rings merged may take a link that takes another's (a mirror's, replay.cc).
    for (size_t hops = 0; l < same_as_.size() && same_as_[l] >= 0 && hops < same_as_.size(); ++hops)
      l = same_as_[l];
    if (l >= bytes_.size() || bytes_[l].empty()) continue;
    row[i] = l;
    ++readers[l];
  }
  for (size_t i = 0; i < result->links.size(); ++i) {
    LinkStats& link = result->links[i];
    if (row[i] == kNone) {
      link.utilization.assign(bins, 0.0);
      continue;
    }
    // Each reader copies the row's first `bins` and the row goes when its last reader has it:
    // rows kept whole (max_bins_) by their readers, or a second copy of every row, were a
    // gigabyte at 65,536 GPUs.
    std::vector<double>& carried = bytes_[row[i]];
    std::vector<double>& u = link.utilization;
    u.assign(carried.begin(), carried.begin() + static_cast<std::ptrdiff_t>(bins));
    const double capacity = link.bandwidth * width_;
    for (size_t j = 0; j < bins; ++j) u[j] = u[j] != 0 ? u[j] / capacity : 0.0;
    // A sample that ended on the run's last date may sit in the bin after it: fold it back.
    for (size_t j = bins; j < max_bins_; ++j)
      if (carried[j] != 0) u[bins - 1] += carried[j] / capacity;
    if (--readers[row[i]] == 0) std::vector<double>().swap(carried);
  }
  bytes_.clear();
  result->link_usage_bin_width = width_;
}

}  // namespace orrery
