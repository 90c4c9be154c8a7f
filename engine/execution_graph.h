// ExecutionGraph: the per-device op graph the replay engine runs.
// Plain data; built by workloads/ and strategies, checked by graph_check.h, replayed by replay.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace orrery {

// What a stream is for. Streams of one device overlap in time; ops on one stream run one at
// a time in FIFO order of readiness.
enum class StreamClass : uint8_t { kCompute = 0, kComm = 1, kCopyH2D = 2, kCopyD2H = 3, kHost = 4 };
inline constexpr int kNumStreamClasses = 5;

const char* stream_class_name(StreamClass c);
// Parses "compute", "comm", "copy_h2d", "copy_d2h", "host"; returns false if unknown.
bool parse_stream_class(const std::string& s, StreamClass* out);

// A FIFO queue on a device: its class, plus an index so a device may own several queues of one
// class (e.g. two communication channels, "comm:1").
struct Stream {
  StreamClass cls = StreamClass::kCompute;
  int index = 0;
  bool operator==(const Stream& o) const { return cls == o.cls && index == o.index; }
};
std::string stream_name(const Stream& s);
// Parses "comm" or "comm:2"; returns false when the class is unknown or the index malformed.
bool parse_stream(const std::string& s, Stream* out);

enum class OpKind : uint8_t {
  kCompute = 0,   // an Exec on the device's host (or its launch host on the host stream)
  kTransfer = 1,  // a point-to-point flow from src to dst device over the platform's route
};

struct Op {
  std::string name;  // unique within the graph
  int device = -1;   // index into ExecutionGraph::devices; the device whose stream runs the op
  Stream stream;
  OpKind kind = OpKind::kCompute;

  // Cost of a compute op: a fixed duration in seconds when duration >= 0; otherwise the flops
  // and bytes are priced by a cost model before replay (models/).
  double duration = -1.0;
  double flops = 0.0;
  double bytes = 0.0;

  // Transfer ops only: the flow's endpoints and size in bytes.
  int src = -1;
  int dst = -1;
  double transfer_bytes = 0.0;

  // Free-form labels used by breakdowns: "forward", "backward", "optimizer", "comm", "io"...
  std::string phase;

  std::vector<int> deps;  // indices of ops that must complete before this one is ready
};

struct Device {
  std::string name;         // the name ops refer to
  std::string host;         // SimGrid host that runs its compute stream (default: name)
  std::string launch_host;  // SimGrid host that runs its host stream (default: host)
};

struct ExecutionGraph {
  std::vector<Device> devices;
  std::vector<Op> ops;

  // Index lookups (linear; used by loaders and tests, never on the replay hot path).
  int find_device(const std::string& name) const;
  int find_op(const std::string& name) const;
};

}  // namespace orrery
