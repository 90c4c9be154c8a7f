#include "results/chrome_trace.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <queue>
#include <stdexcept>
#include <utility>
#include <vector>

#include "common/atomic_file.h"

namespace orrery {
namespace {

// Buffered appends to a FILE*: a trace of a million ops is written without holding it in memory.
class JsonOut {
 public:
  explicit JsonOut(const std::string& path) : path_(path), file_(std::fopen(path.c_str(), "wb")) {
    if (file_ == nullptr)
      throw std::runtime_error(path + ": cannot create file: " + std::strerror(errno));
    buf_.reserve(kFlushAt + 4096);
  }
  ~JsonOut() {
    if (file_ != nullptr) std::fclose(file_);
  }

  void raw(const char* s) { buf_ += s; }
  void raw(char c) { buf_ += c; }
  void string(const std::string& s);
  void integer(long long v) { buf_ += std::to_string(v); }
  // Shortest text that reads back as the same double; non-finite values (not JSON) become 0.
  void number(double v);
  // Microseconds with nanosecond resolution, the precision trace viewers display.
  void micros(double seconds);
  // Separates array elements; flushes between events so the buffer stays bounded.
  void begin_event() {
    if (buf_.size() >= kFlushAt) flush();
    if (events_++ > 0) buf_ += ",\n";
  }
  void close();

 private:
  static constexpr size_t kFlushAt = size_t{1} << 20;
  void flush();
  std::string path_;
  std::FILE* file_;
  std::string buf_;
  size_t events_ = 0;
};

void JsonOut::string(const std::string& s) {
  buf_ += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        buf_ += "\\\"";
        break;
      case '\\':
        buf_ += "\\\\";
        break;
      case '\n':
        buf_ += "\\n";
        break;
      case '\r':
        buf_ += "\\r";
        break;
      case '\t':
        buf_ += "\\t";
        break;
      default:
        if (c < 0x20) {
          char esc[8];
          std::snprintf(esc, sizeof esc, "\\u%04x", c);
          buf_ += esc;
        } else {
          buf_ += static_cast<char>(c);
        }
    }
  }
  buf_ += '"';
}

void JsonOut::number(double v) {
  if (!std::isfinite(v)) v = 0.0;
  char text[32];
  auto res = std::to_chars(text, text + sizeof text, v);
  buf_.append(text, res.ptr);
}

void JsonOut::micros(double seconds) {
  char text[64];
  auto res = std::to_chars(text, text + sizeof text, seconds * 1e6, std::chars_format::fixed, 3);
  if (res.ec != std::errc()) throw std::runtime_error(path_ + ": time out of range");
  buf_.append(text, res.ptr);
}

void JsonOut::flush() {
  if (!buf_.empty() && std::fwrite(buf_.data(), 1, buf_.size(), file_) != buf_.size()) {
    throw std::runtime_error(path_ + ": write failed: " + std::strerror(errno));
  }
  buf_.clear();
}

void JsonOut::close() {
  flush();
  std::FILE* f = file_;
  file_ = nullptr;
  if (std::fclose(f) != 0)
    throw std::runtime_error(path_ + ": write failed: " + std::strerror(errno));
}

using StreamKey = std::pair<int, int>;  // (class, index)
StreamKey key_of(const Stream& s) { return {static_cast<int>(s.cls), s.index}; }

void validate(const ExecutionGraph& graph, const RunResult& result) {
  if (result.timeline.size() != graph.ops.size()) {
    throw std::invalid_argument("write_chrome_trace: timeline has " +
                                std::to_string(result.timeline.size()) + " entries, graph has " +
                                std::to_string(graph.ops.size()) + " ops");
  }
  for (const Op& op : graph.ops) {
    if (op.device < 0 || op.device >= static_cast<int>(graph.devices.size())) {
      throw std::invalid_argument("write_chrome_trace: op '" + op.name + "' has no valid device");
    }
  }
  const int devices = static_cast<int>(graph.devices.size());
  for (const FlowRecord& f : result.flows) {
    if (f.src < 0 || f.src >= devices || f.dst < 0 || f.dst >= devices || f.op < 0 ||
        f.op >= static_cast<int>(graph.ops.size()) || graph.ops[f.op].kind != OpKind::kCollective ||
        graph.ops[f.op].collective < 0 ||
        graph.ops[f.op].collective >= static_cast<int>(graph.collectives.size())) {
      throw std::invalid_argument("write_chrome_trace: a flow names no valid device or collective");
    }
  }
}

void metadata(JsonOut& out, const char* name, int pid, int tid, const char* key,
              const std::string* text, int number) {
  out.begin_event();
  out.raw("{\"name\":\"");
  out.raw(name);
  out.raw("\",\"ph\":\"M\",\"pid\":");
  out.integer(pid);
  out.raw(",\"tid\":");
  out.integer(tid);
  out.raw(",\"args\":{\"");
  out.raw(key);
  out.raw("\":");
  if (text != nullptr) {
    out.string(*text);
  } else {
    out.integer(number);
  }
  out.raw("}}");
}

// The devices an op shows on: its own, or every rank of a collective (each rank takes part in
// it for its whole span; the op itself is queued on one rank only).
std::vector<int> devices_of(const ExecutionGraph& graph, const Op& op) {
  if (op.kind == OpKind::kCollective && op.collective >= 0 &&
      op.collective < static_cast<int>(graph.collectives.size())) {
    std::vector<int> ranks;
    for (int r : graph.collectives[op.collective].ranks)
      if (r >= 0 && r < static_cast<int>(graph.devices.size())) ranks.push_back(r);
    if (!ranks.empty()) return ranks;
  }
  return {op.device};
}

void op_event(JsonOut& out, const ExecutionGraph& graph, const Op& op, const OpTiming& t, int tid,
              int device) {
  out.begin_event();
  auto device_name = [&](int d) -> const std::string* {
    return d >= 0 && d < static_cast<int>(graph.devices.size()) ? &graph.devices[d].name : nullptr;
  };
  out.raw("{\"name\":");
  out.string(op.name);
  out.raw(",\"cat\":");
  out.string(op.phase);
  out.raw(",\"ph\":\"X\",\"pid\":");
  out.integer(device + 1);
  out.raw(",\"tid\":");
  out.integer(tid);
  out.raw(",\"ts\":");
  out.micros(t.start);
  out.raw(",\"dur\":");
  out.micros(t.end - t.start);
  if (op.kind == OpKind::kCollective && op.collective >= 0 &&
      op.collective < static_cast<int>(graph.collectives.size())) {
    const Collective& c = graph.collectives[op.collective];
    out.raw(",\"args\":{\"kind\":\"collective\",\"collective\":");
    out.string(collective_type_name(c.type));
    out.raw(",\"bytes\":");
    out.number(c.bytes);
    out.raw(",\"ranks\":");
    out.integer(static_cast<long long>(c.ranks.size()));
  } else if (op.kind == OpKind::kTransfer) {
    out.raw(",\"args\":{\"kind\":\"transfer\",\"bytes\":");
    out.number(op.transfer_bytes);
    if (const std::string* src = device_name(op.src)) {
      out.raw(",\"src\":");
      out.string(*src);
    }
    if (const std::string* dst = device_name(op.dst)) {
      out.raw(",\"dst\":");
      out.string(*dst);
    }
  } else {
    out.raw(",\"args\":{\"kind\":\"compute\"");
    // What a cost model priced the op on, when it had a size rather than a fixed duration.
    if (op.flops > 0) {
      out.raw(",\"flops\":");
      out.number(op.flops);
    }
    if (op.bytes > 0) {
      out.raw(",\"bytes\":");
      out.number(op.bytes);
    }
  }
  out.raw("}}");
}

// Overlapping complete events on one thread do not nest, and viewers draw them wrongly or drop
// them, so a rank's flows are spread over lanes ("comm steps", "comm steps:1", ...): each flow,
// taken in start order, gets the lowest lane free at its start.
struct FlowLanes {
  std::vector<int> lane;      // per flow
  std::vector<int> lanes_of;  // per device: lanes used
};

FlowLanes assign_lanes(const ExecutionGraph& graph, const std::vector<FlowRecord>& flows) {
  using Busy = std::pair<double, int>;  // (end, lane)
  struct DeviceLanes {
    std::priority_queue<Busy, std::vector<Busy>, std::greater<Busy>> busy;
    std::priority_queue<int, std::vector<int>, std::greater<int>> free;
    int used = 0;
  };
  std::vector<DeviceLanes> per(graph.devices.size());
  FlowLanes out;
  out.lane.resize(flows.size());
  // The replay records flows in start order; a result built otherwise is sorted here.
  std::vector<size_t> order(flows.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto earlier = [&](size_t a, size_t b) { return flows[a].start < flows[b].start; };
  if (!std::is_sorted(order.begin(), order.end(), earlier))
    std::stable_sort(order.begin(), order.end(), earlier);
  for (size_t i : order) {
    DeviceLanes& d = per[flows[i].src];
    while (!d.busy.empty() && d.busy.top().first <= flows[i].start) {
      d.free.push(d.busy.top().second);
      d.busy.pop();
    }
    int lane;
    if (d.free.empty()) {
      lane = d.used++;
    } else {
      lane = d.free.top();
      d.free.pop();
    }
    d.busy.push({flows[i].end, lane});
    out.lane[i] = lane;
  }
  for (const DeviceLanes& d : per) out.lanes_of.push_back(d.used);
  return out;
}

std::string lane_name(int lane) {
  return lane == 0 ? "comm steps" : "comm steps:" + std::to_string(lane);
}

void flow_event(JsonOut& out, const ExecutionGraph& graph, const FlowRecord& f, int tid) {
  const Op& op = graph.ops[f.op];
  const char* type = collective_type_name(graph.collectives[op.collective].type);
  const std::string& peer = graph.devices[f.dst].name;
  out.begin_event();
  out.raw("{\"name\":");
  out.string(std::string(type) + " to " + peer);
  out.raw(",\"cat\":\"comm_step\",\"ph\":\"X\",\"pid\":");
  out.integer(f.src + 1);
  out.raw(",\"tid\":");
  out.integer(tid);
  out.raw(",\"ts\":");
  out.micros(f.start);
  out.raw(",\"dur\":");
  out.micros(f.end - f.start);
  out.raw(",\"args\":{\"kind\":\"flow\",\"collective\":");
  out.string(type);
  out.raw(",\"op\":");
  out.string(op.name);
  out.raw(",\"peer\":");
  out.string(peer);
  out.raw(",\"bytes\":");
  out.number(f.bytes);
  out.raw(",\"seq\":");
  out.integer(f.seq);
  out.raw("}}");
}

// Flows the replay counted but did not keep: said in the file's metadata and, where they begin,
// by a global instant event, so a capped trace never passes for a complete one.
std::string left_out_note(const RunResult& result) {
  if (result.flows_issued <= static_cast<int64_t>(result.flows.size())) return "";
  return std::to_string(result.flows_issued - static_cast<int64_t>(result.flows.size())) + " of " +
         std::to_string(result.flows_issued) + " collective flows left out: only the first " +
         std::to_string(result.flows.size()) +
         " in start order were recorded (raise output.trace_flows, or "
         "ReplayOptions::max_recorded_flows, to keep more)";
}

void write_trace(const std::string& file_path, const ExecutionGraph& graph,
                 const RunResult& result) {
  // A stream keeps one tid on every device, so "compute" lines up across processes.
  std::map<StreamKey, int> tids;
  for (const Op& op : graph.ops) tids.emplace(key_of(op.stream), 0);
  int next_tid = 1;
  for (auto& [key, tid] : tids) tid = next_tid++;
  std::map<std::pair<int, StreamKey>, Stream> used;  // (device, stream) pairs that ran an op
  for (const Op& op : graph.ops) {
    for (int d : devices_of(graph, op))
      used.emplace(std::make_pair(d, key_of(op.stream)), op.stream);
  }

  const FlowLanes lanes = assign_lanes(graph, result.flows);
  const std::string note = left_out_note(result);

  JsonOut out(file_path);
  out.raw("{\"displayTimeUnit\":\"ns\",");
  if (!result.flows.empty() || result.flows_issued > 0) {
    out.raw("\"otherData\":{\"comm_steps_recorded\":");
    out.integer(static_cast<long long>(result.flows.size()));
    out.raw(",\"comm_steps_issued\":");
    out.integer(static_cast<long long>(result.flows_issued));
    if (!note.empty()) {
      out.raw(",\"comm_steps_left_out\":");
      out.string(note);
    }
    out.raw("},");
  }
  out.raw("\"traceEvents\":[\n");
  for (size_t d = 0; d < graph.devices.size(); ++d) {
    const int pid = static_cast<int>(d) + 1;
    metadata(out, "process_name", pid, 0, "name", &graph.devices[d].name, 0);
    metadata(out, "process_sort_index", pid, 0, "sort_index", nullptr, pid);
  }
  for (const auto& [where, stream] : used) {
    const int tid = tids.at(where.second);
    const std::string name = stream_name(stream);
    metadata(out, "thread_name", where.first + 1, tid, "name", &name, 0);
    metadata(out, "thread_sort_index", where.first + 1, tid, "sort_index", nullptr, tid);
  }
  // Lanes come after every stream, so a lane has one tid on every device too.
  const int first_lane_tid = next_tid;
  for (size_t d = 0; d < graph.devices.size(); ++d) {
    for (int lane = 0; lane < lanes.lanes_of[d]; ++lane) {
      const int pid = static_cast<int>(d) + 1;
      const std::string name = lane_name(lane);
      metadata(out, "thread_name", pid, first_lane_tid + lane, "name", &name, 0);
      metadata(out, "thread_sort_index", pid, first_lane_tid + lane, "sort_index", nullptr,
               first_lane_tid + lane);
    }
  }
  for (size_t i = 0; i < graph.ops.size(); ++i) {
    const OpTiming& t = result.timeline[i];
    if (!std::isfinite(t.start) || !std::isfinite(t.end)) continue;
    const Op& op = graph.ops[i];
    for (int d : devices_of(graph, op)) op_event(out, graph, op, t, tids.at(key_of(op.stream)), d);
  }
  for (size_t i = 0; i < result.flows.size(); ++i)
    flow_event(out, graph, result.flows[i], first_lane_tid + lanes.lane[i]);
  if (!note.empty()) {
    double last_start = 0;
    for (const FlowRecord& f : result.flows) last_start = std::max(last_start, f.start);
    out.begin_event();
    out.raw("{\"name\":");
    out.string(note);
    out.raw(",\"cat\":\"comm_step\",\"ph\":\"i\",\"s\":\"g\",\"pid\":0,\"tid\":0,\"ts\":");
    out.micros(last_start);
    out.raw("}");
  }
  out.raw("\n]}\n");
  out.close();
}

}  // namespace

void write_chrome_trace(const std::string& path, const ExecutionGraph& graph,
                        const RunResult& result) {
  validate(graph, result);
  write_atomically(path, [&](const std::string& tmp) { write_trace(tmp, graph, result); });
}

}  // namespace orrery
