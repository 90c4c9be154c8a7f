#include "engine/flow_record.h"

#include <unordered_map>

namespace orrery {

static_assert(sizeof(FlowRecord) == 40, "FlowRecord is meant to pack without padding");

FlowRecorder::FlowRecorder(bool on, int64_t max_flows) : on_(on), max_flows_(max_flows) {}

void FlowRecorder::start(uint64_t slot, int op, int src, int dst, double bytes, double now) {
  if (!on_) return;
  ++issued_;
  if (slot >= open_.size()) open_.resize(slot + 1, kNotKept);
  if (static_cast<int64_t>(flows_.size()) >= max_flows_) {
    open_[slot] = kNotKept;
    return;
  }
  open_[slot] = static_cast<int64_t>(flows_.size());
  FlowRecord f;
  f.start = now;
  f.end = now;
  f.bytes = bytes;
  f.src = src;
  f.dst = dst;
  f.op = op;
  flows_.push_back(f);
}

void FlowRecorder::end(uint64_t slot, double now) {
  if (!on_ || slot >= open_.size() || open_[slot] == kNotKept) return;
  flows_[open_[slot]].end = now;
  open_[slot] = kNotKept;
}

void FlowRecorder::finish(double t0, RunResult* result) {
  if (!on_) return;
  // Numbered after the run rather than at each start: one hash map pass instead of a map kept
  // per collective in flight.
  std::unordered_map<uint64_t, uint32_t> sent;
  for (FlowRecord& f : flows_) {
    const uint64_t key =
        (static_cast<uint64_t>(static_cast<uint32_t>(f.op)) << 32) | static_cast<uint32_t>(f.src);
    f.seq = sent[key]++;
    f.start -= t0;
    f.end -= t0;
  }
  result->flows = std::move(flows_);
  result->flows_issued = issued_;
  flows_.clear();
  open_.clear();
}

}  // namespace orrery
