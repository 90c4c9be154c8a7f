#include "engine/run_result_io.h"

#include <cstring>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace orrery {
namespace {

class Writer {
 public:
  template <typename T>
  void pod(const T& v) {
    out_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void str(const std::string& s) {
    pod<uint64_t>(s.size());
    out_ += s;
  }
  // A count, then the elements' bytes in one piece: millions of flows or bins copy at memory speed.
  template <typename T>
  void block(const std::vector<T>& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    pod<uint64_t>(v.size());
    out_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(const std::string& in) : in_(in) {}
  template <typename T>
  T pod() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, in_.data() + pos_, sizeof v);
    pos_ += sizeof v;
    return v;
  }
  std::string str() {
    auto n = pod<uint64_t>();
    need(n);
    std::string s = in_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  template <typename T>
  std::vector<T> block() {
    static_assert(std::is_trivially_copyable_v<T>);
    auto n = pod<uint64_t>();
    if (n > (in_.size() - pos_) / sizeof(T)) throw std::runtime_error("truncated run result");
    std::vector<T> v(n);
    if (n > 0) std::memcpy(v.data(), in_.data() + pos_, n * sizeof(T));
    pos_ += n * sizeof(T);
    return v;
  }
  bool done() const { return pos_ == in_.size(); }

 private:
  void need(uint64_t n) {
    if (pos_ + n > in_.size()) throw std::runtime_error("truncated run result");
  }
  const std::string& in_;
  size_t pos_ = 0;
};

constexpr uint32_t kMagic = 0x4f525235;  // "ORR5"

}  // namespace

std::string serialize_run_result(const RunResult& r) {
  Writer w;
  w.pod(kMagic);
  w.pod(r.makespan);
  w.pod(r.activities);
  w.pod(r.wall_seconds);
  w.pod(r.analytical_seconds);
  w.pod(r.iterations);
  w.pod<uint64_t>(r.devices.size());
  for (const auto& d : r.devices) {
    w.str(d.name);
    for (double b : d.busy) w.pod(b);
    w.pod(d.idle);
    w.pod(d.exposed_comm);
    w.pod(d.memory_bound);
    w.pod(d.ops);
    w.block(d.exposed_by_queue);
    w.pod<uint64_t>(d.compute_by_phase.size());
    for (const auto& [phase, seconds] : d.compute_by_phase) {
      w.str(phase);
      w.pod(seconds);
    }
  }
  w.pod<uint64_t>(r.links.size());
  for (const auto& l : r.links) {
    w.str(l.name);
    w.pod(l.bandwidth);
    w.pod(l.latency);
    w.pod(l.bytes);
    w.str(l.link_class);
    w.block(l.utilization);
  }
  w.pod<uint64_t>(r.timeline.size());
  for (const auto& t : r.timeline) {
    w.pod(t.start);
    w.pod(t.end);
  }
  w.pod<uint64_t>(r.collectives.size());
  for (const auto& c : r.collectives) {
    w.pod(static_cast<uint8_t>(c.algo));
    w.pod(static_cast<uint8_t>(c.protocol));
    w.pod(c.channels);
  }
  w.block(r.flows);
  w.pod(r.flows_issued);
  w.pod(r.link_usage_bin_width);
  w.pod(r.asymmetric_mirror_flows);
  return w.take();
}

RunResult deserialize_run_result(const std::string& bytes) {
  Reader rd(bytes);
  if (rd.pod<uint32_t>() != kMagic) throw std::runtime_error("not a serialized run result");
  RunResult r;
  r.makespan = rd.pod<double>();
  r.activities = rd.pod<int64_t>();
  r.wall_seconds = rd.pod<double>();
  r.analytical_seconds = rd.pod<double>();
  r.iterations = rd.pod<int32_t>();
  r.devices.resize(rd.pod<uint64_t>());
  for (auto& d : r.devices) {
    d.name = rd.str();
    for (double& b : d.busy) b = rd.pod<double>();
    d.idle = rd.pod<double>();
    d.exposed_comm = rd.pod<double>();
    d.memory_bound = rd.pod<double>();
    d.ops = rd.pod<int64_t>();
    d.exposed_by_queue = rd.block<double>();
    d.compute_by_phase.resize(rd.pod<uint64_t>());
    for (auto& [phase, seconds] : d.compute_by_phase) {
      phase = rd.str();
      seconds = rd.pod<double>();
    }
  }
  r.links.resize(rd.pod<uint64_t>());
  for (auto& l : r.links) {
    l.name = rd.str();
    l.bandwidth = rd.pod<double>();
    l.latency = rd.pod<double>();
    l.bytes = rd.pod<double>();
    l.link_class = rd.str();
    l.utilization = rd.block<double>();
  }
  r.timeline.resize(rd.pod<uint64_t>());
  for (auto& t : r.timeline) {
    t.start = rd.pod<double>();
    t.end = rd.pod<double>();
  }
  r.collectives.resize(rd.pod<uint64_t>());
  for (auto& c : r.collectives) {
    c.algo = static_cast<CollectiveAlgo>(rd.pod<uint8_t>());
    c.protocol = static_cast<CollectiveProtocol>(rd.pod<uint8_t>());
    c.channels = rd.pod<int>();
  }
  r.flows = rd.block<FlowRecord>();
  r.flows_issued = rd.pod<int64_t>();
  r.link_usage_bin_width = rd.pod<double>();
  r.asymmetric_mirror_flows = rd.pod<int64_t>();
  if (!rd.done()) throw std::runtime_error("trailing bytes after run result");
  return r;
}

}  // namespace orrery
