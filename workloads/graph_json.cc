#include "workloads/graph_json.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/atomic_file.h"
#include "common/errors.h"
#include "common/input_file.h"
#include "common/json_fields.h"
#include "engine/graph_check.h"

namespace orrery {

namespace {

using nlohmann::json;

constexpr const char* kFormat = "orrery-graph";
constexpr int kVersion = 1;

using Fields = JsonFields;
const auto& describe = describe_json;

// The names an op refers to, not yet resolved to indices, since deps may point forward and the
// devices array may come after the ops.
struct OpRefs {
  std::string device, src, dst;
  std::vector<std::string> deps;
  std::vector<std::string> ranks;  // collective ops
  std::string root;
  Collective collective;
};

std::string op_where(std::size_t i, const std::string& name) {
  std::string where = "ops[" + std::to_string(i) + "]";
  return name.empty() ? where : where + " \"" + name + "\"";
}

// The collective's fields except its ranks, which `refs` names for later resolution.
Collective read_collective(const Fields& f, OpRefs* refs) {
  Collective c;
  std::string s = f.required_text("collective");
  if (!parse_collective_type(s, &c.type)) {
    f.fail("unknown collective \"" + s +
           "\" (expected allreduce, allgather, reducescatter, broadcast, reduce, alltoall or "
           "sendrecv)");
  }
  if (f.text("algo", &s) && !parse_collective_algo(s, &c.algo))
    f.fail("unknown algo \"" + s +
           "\" (expected auto, ring, tree, hierarchical, nvls, collnet or direct)");
  if (f.text("protocol", &s) && !parse_collective_protocol(s, &c.protocol))
    f.fail("unknown protocol \"" + s + "\" (expected ideal, auto, LL, LL128 or Simple)");
  const json* ranks = f.find("ranks");
  if (ranks == nullptr || !ranks->is_array() || ranks->empty())
    f.fail("collective op needs \"ranks\": a non-empty array of device names");
  for (const json& r : *ranks) {
    if (!r.is_string()) f.fail("\"ranks\" entries must be device names, got " + describe(r));
    refs->ranks.push_back(r.get<std::string>());
  }
  if (!f.amount("bytes", "bytes", &c.bytes)) f.fail("collective op needs \"bytes\"");
  if (const json* counts = f.find("counts")) {
    if (!counts->is_array()) f.fail("\"counts\" must be an array of bytes per rank");
    for (const json& v : *counts) {
      if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0)
        f.fail("\"counts\" entries must be numbers >= 0 (bytes), got " + describe(v));
      c.counts.push_back(v.get<double>());
    }
  }
  f.text("root", &refs->root);
  if (const json* chunks = f.find("chunks")) {
    if (!chunks->is_number_integer() || chunks->get<long long>() < 1)
      f.fail("\"chunks\" must be an integer >= 1, got " + describe(*chunks));
    c.chunks = static_cast<int>(chunks->get<long long>());
  }
  if (const json* a = f.find("analytical")) {
    if (!a->is_boolean()) f.fail("\"analytical\" must be true or false, got " + describe(*a));
    c.analytical = a->get<bool>();
  }
  if (const json* r = f.find("repeat")) {
    if (!r->is_number_integer() || r->get<long long>() < 1 || r->get<long long>() > 1000000)
      f.fail("\"repeat\" must be an integer in [1, 1000000], got " + describe(*r));
    c.repeat = static_cast<int>(r->get<long long>());
  }
  double share = 0;
  if (f.amount("sm_share", "fraction of the GPU", &share)) c.sm_share = share;
  f.amount("max_rate", "bytes/s", &c.max_rate);
  return c;
}

// Fills `op` except its indices, which the returned names resolve to later.
OpRefs read_op(const json& j, std::size_t index, const std::string& origin, Op* op) {
  Fields f(j, op_where(index, ""), origin);
  if (!j.is_object()) f.fail("must be an object, got " + describe(j));
  OpRefs p;
  op->name = f.required_text("name");
  f.set_where(op_where(index, op->name));
  f.only({"name", "device", "stream",     "kind",       "duration", "flops",   "bytes",    "src",
          "dst",  "phase",  "deps",       "collective", "ranks",    "algo",    "protocol", "counts",
          "root", "chunks", "analytical", "repeat",     "sm_share", "max_rate"});
  p.device = f.required_text("device");

  std::string s;
  if (f.text("kind", &s)) {
    if (s == "transfer") {
      op->kind = OpKind::kTransfer;
    } else if (s == "collective") {
      op->kind = OpKind::kCollective;
    } else if (s != "compute") {
      f.fail("unknown kind \"" + s + "\" (expected \"compute\", \"transfer\" or \"collective\")");
    }
  }
  // Communication defaults to the communication stream.
  if (op->kind != OpKind::kCompute) op->stream = {StreamClass::kComm, 0};
  if (f.text("stream", &s) && !parse_stream(s, &op->stream)) {
    f.fail("unknown stream \"" + s +
           "\" (expected compute, comm, copy_h2d, copy_d2h or host, optionally with \":N\")");
  }
  f.text("phase", &op->phase);

  const bool collective = op->kind == OpKind::kCollective;
  for (const char* key : {"collective", "ranks", "algo", "protocol", "counts", "root", "chunks",
                          "analytical", "repeat", "sm_share"}) {
    if (!collective && f.has(key))
      f.fail("\"" + std::string(key) + "\" is only allowed on a collective op");
  }

  if (collective) {
    for (const char* key : {"duration", "flops", "src", "dst"}) {
      if (f.has(key)) f.fail("\"" + std::string(key) + "\" is not allowed on a collective op");
    }
    p.collective = read_collective(f, &p);
  } else if (op->kind == OpKind::kTransfer) {
    // A transfer's time comes from the network model, so a duration or flops would be ignored.
    for (const char* key : {"duration", "flops"}) {
      if (f.has(key)) f.fail("\"" + std::string(key) + "\" is not allowed on a transfer op");
    }
    if (!f.text("src", &p.src)) p.src = p.device;
    p.dst = f.required_text("dst");
    if (!f.amount("bytes", "bytes", &op->transfer_bytes)) {
      f.fail("transfer op needs \"bytes\" (the payload size)");
    }
    f.amount("max_rate", "bytes/s", &op->max_rate);
  } else {
    for (const char* key : {"src", "dst", "max_rate"}) {
      if (f.has(key)) f.fail("\"" + std::string(key) + "\" is only allowed on a transfer op");
    }
    f.amount("duration", "seconds", &op->duration);
    f.amount("flops", "flop", &op->flops);
    f.amount("bytes", "bytes", &op->bytes);
  }

  if (const json* deps = f.find("deps")) {
    if (!deps->is_array()) f.fail("\"deps\" must be an array of op names, got " + describe(*deps));
    p.deps.reserve(deps->size());
    for (const json& d : *deps) {
      if (!d.is_string()) f.fail("\"deps\" entries must be op names (strings), got " + describe(d));
      p.deps.push_back(d.get<std::string>());
    }
  }
  return p;
}

// `mirrors` gets the names of the device's mirrors, resolved once every device is read.
Device read_device(const json& j, std::size_t index, const std::string& origin,
                   std::vector<std::string>* mirrors) {
  std::string where = "devices[" + std::to_string(index) + "]";
  Fields f(j, where, origin);
  if (!j.is_object()) f.fail("must be an object, got " + describe(j));
  Device d;
  d.name = f.required_text("name");
  f.set_where(where + " \"" + d.name + "\"");
  f.only({"name", "host", "launch_host", "node", "mirrors"});
  if (!f.text("host", &d.host)) d.host = d.name;
  if (!f.text("launch_host", &d.launch_host)) d.launch_host = d.host;
  f.text("node", &d.node);
  if (d.host.empty() || d.launch_host.empty()) f.fail("host names must not be empty");
  if (j.contains("mirrors")) {
    const json& m = j.at("mirrors");
    if (!m.is_array()) f.fail("\"mirrors\" must be an array of device names, got " + describe(m));
    for (const json& name : m) {
      if (!name.is_string())
        f.fail("\"mirrors\" must be an array of device names, got " + describe(name));
      mirrors->push_back(name.get<std::string>());
    }
  }
  return d;
}

// Parses while streaming: each element of the top-level "ops" array is converted as soon as it
// closes and then dropped from the DOM, so a million-op file never sits in memory as JSON.
// The same pass rejects duplicate keys, which nlohmann would otherwise resolve silently.
class StreamingParser {
 public:
  explicit StreamingParser(const std::string& origin) : origin_(origin) {}

  json parse(const std::string& text) {
    json::parser_callback_t cb = [this](int, json::parse_event_t event, json& parsed) {
      return on_event(event, parsed);
    };
    return json::parse(text, cb);
  }

  std::vector<Op>& ops() { return ops_; }
  std::vector<OpRefs>& refs() { return refs_; }

 private:
  struct Frame {
    bool is_array = false;
    std::size_t index = 0;          // arrays: the element being parsed
    std::string key;                // objects: the member being parsed
    std::vector<std::string> keys;  // objects: members seen so far
  };

  bool on_event(json::parse_event_t event, json& parsed) {
    using E = json::parse_event_t;
    switch (event) {
      case E::object_start:
      case E::array_start:
        push(event == E::array_start);
        return true;
      case E::key:
        on_key(parsed.get<std::string>());
        return true;
      case E::value:
        return element_done(parsed);
      case E::array_end:
      case E::object_end:
        --depth_;
        return element_done(parsed);
    }
    return true;
  }

  // Called as each value closes; returns whether the DOM keeps it.
  bool element_done(const json& parsed) {
    bool is_op =
        depth_ == 2 && !frames_[0].is_array && frames_[0].key == "ops" && frames_[1].is_array;
    // read_op also rejects elements that are not objects.
    if (is_op) {
      ops_.emplace_back();
      refs_.push_back(read_op(parsed, frames_[1].index, origin_, &ops_.back()));
    }
    if (depth_ > 0 && frames_[depth_ - 1].is_array) ++frames_[depth_ - 1].index;
    return !is_op;
  }

  void push(bool is_array) {
    if (depth_ == frames_.size()) frames_.emplace_back();
    Frame& f = frames_[depth_++];
    f.is_array = is_array;
    f.index = 0;
    f.key.clear();
    f.keys.clear();
  }

  void on_key(const std::string& key) {
    Frame& f = frames_[depth_ - 1];
    if (std::find(f.keys.begin(), f.keys.end(), key) != f.keys.end()) {
      std::string where;
      for (std::size_t i = 0; i + 1 < depth_; ++i) {
        where += frames_[i].is_array ? "[" + std::to_string(frames_[i].index) + "]"
                                     : (where.empty() ? "" : ".") + frames_[i].key;
      }
      throw InputError(origin_ + ": " + (where.empty() ? "" : where + ": ") + "duplicate key \"" +
                       key + "\"");
    }
    f.keys.push_back(key);
    f.key = key;
  }

  const std::string& origin_;
  std::vector<Frame> frames_;  // reused across objects to spare allocations
  std::size_t depth_ = 0;
  std::vector<Op> ops_;
  std::vector<OpRefs> refs_;
};

// nlohmann reports a byte offset (1-based: the last byte it read); users want line and column.
std::string line_column(const std::string& text, std::size_t byte) {
  const std::size_t pos = byte == 0 ? 0 : std::min(byte - 1, text.size());
  const std::size_t line = 1 + std::count(text.begin(), text.begin() + pos, '\n');
  const std::size_t newline = pos == 0 ? std::string::npos : text.rfind('\n', pos - 1);
  const std::size_t column = newline == std::string::npos ? pos + 1 : pos - newline;
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

// nlohmann's message without its "[json.exception.<id>]" tag and its own position, which the
// caller replaces with line and column.
std::string json_error_detail(const std::string& what) {
  std::size_t at = what.find("syntax error");
  if (at != std::string::npos) return what.substr(at);
  at = what.find("] ");
  return what.rfind("[json.exception.", 0) == 0 && at != std::string::npos ? what.substr(at + 2)
                                                                           : what;
}

void read_header(const json& root, const std::string& origin) {
  Fields f(root, "", origin);
  if (!root.is_object()) f.fail("top level must be a JSON object, got " + describe(root));
  f.only({"format", "version", "devices", "ops"});
  std::string format;
  if (!f.text("format", &format)) f.fail("missing \"format\": \"orrery-graph\"");
  if (format != kFormat) f.fail("\"format\" is \"" + format + "\", expected \"orrery-graph\"");
  const json* version = f.find("version");
  if (version == nullptr) f.fail("missing \"version\": 1");
  if (!version->is_number_integer() || version->get<long long>() != kVersion) {
    f.fail("unsupported \"version\" " + describe(*version) + " (this Orrery reads version 1)");
  }
  for (const char* key : {"devices", "ops"}) {
    const json* v = f.find(key);
    if (v == nullptr) f.fail("missing required key \"" + std::string(key) + "\"");
    if (!v->is_array()) {
      f.fail("\"" + std::string(key) + "\" must be an array, got " + describe(*v));
    }
  }
}

int resolve(const std::unordered_map<std::string_view, int>& index, const std::string& name) {
  auto it = index.find(name);
  return it == index.end() ? -1 : it->second;
}

}  // namespace

ExecutionGraph parse_graph_json(const std::string& text, const std::string& origin) {
  StreamingParser parser(origin);
  json root;
  try {
    root = parser.parse(text);
  } catch (const json::parse_error& e) {
    throw InputError(origin + ": " + line_column(text, e.byte) +
                     ": invalid JSON: " + json_error_detail(e.what()));
  } catch (const json::exception& e) {
    throw InputError(origin + ": invalid JSON: " + json_error_detail(e.what()));
  }
  read_header(root, origin);

  ExecutionGraph g;
  const json& devices = root.at("devices");
  g.devices.reserve(devices.size());
  std::vector<std::vector<std::string>> mirror_names(devices.size());
  for (std::size_t i = 0; i < devices.size(); ++i) {
    g.devices.push_back(read_device(devices[i], i, origin, &mirror_names[i]));
  }

  g.ops = std::move(parser.ops());
  std::vector<OpRefs> refs = std::move(parser.refs());
  // Duplicates keep their first index here; check_graph reports them below.
  std::unordered_map<std::string_view, int> device_index, op_index;
  for (std::size_t i = 0; i < g.devices.size(); ++i) {
    device_index.emplace(g.devices[i].name, static_cast<int>(i));
  }
  for (std::size_t i = 0; i < g.devices.size(); ++i)
    for (const std::string& name : mirror_names[i]) {
      auto it = device_index.find(name);
      if (it == device_index.end())
        throw InputError(origin + ": devices[" + std::to_string(i) + "] \"" + g.devices[i].name +
                         "\": mirrors: unknown device \"" + name +
                         "\" (expected a name from \"devices\")");
      g.devices[i].mirrors.push_back(it->second);
    }
  op_index.reserve(g.ops.size());
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    op_index.emplace(g.ops[i].name, static_cast<int>(i));
  }

  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    Op& op = g.ops[i];
    OpRefs& r = refs[i];
    auto fail = [&](const std::string& what) {
      throw InputError(origin + ": " + op_where(i, op.name) + ": " + what);
    };
    auto device = [&](const std::string& name, const char* role) {
      int d = resolve(device_index, name);
      if (d < 0) {
        fail(std::string("unknown ") + role + " \"" + name +
             "\" (expected a name from \"devices\")");
      }
      return d;
    };
    op.device = device(r.device, "device");
    if (op.kind == OpKind::kTransfer) {
      op.src = device(r.src, "src device");
      op.dst = device(r.dst, "dst device");
    }
    if (op.kind == OpKind::kCollective) {
      Collective c = std::move(r.collective);
      for (const std::string& name : r.ranks) c.ranks.push_back(device(name, "rank"));
      if (!r.root.empty()) {
        int root = device(r.root, "root");
        auto it = std::find(c.ranks.begin(), c.ranks.end(), root);
        if (it == c.ranks.end()) fail("root \"" + r.root + "\" is not one of the ranks");
        c.root = static_cast<int>(it - c.ranks.begin());
      }
      op.collective = static_cast<int>(g.collectives.size());
      g.collectives.push_back(std::move(c));
    }
    op.deps.reserve(r.deps.size());
    for (const std::string& dep : r.deps) {
      int d = resolve(op_index, dep);
      if (d < 0) fail("unknown dependency \"" + dep + "\" (expected an op name)");
      op.deps.push_back(d);
    }
    r = OpRefs();  // release the names as we go
  }

  check_graph(g, origin);
  return g;
}

ExecutionGraph load_graph_json(const std::string& path) {
  return parse_graph_json(read_input_file(path, "orrery-graph JSON file"), path);
}

void write_graph_json(const ExecutionGraph& g, std::ostream& out) {
  // ordered_json keeps "name" first, which makes the file readable.
  using nlohmann::ordered_json;
  out << "{\n  \"format\": \"" << kFormat << "\",\n  \"version\": " << kVersion
      << ",\n  \"devices\": [";
  for (std::size_t i = 0; i < g.devices.size(); ++i) {
    const Device& d = g.devices[i];
    ordered_json j;
    j["name"] = d.name;
    if (d.host != d.name) j["host"] = d.host;
    if (d.launch_host != d.host) j["launch_host"] = d.launch_host;
    if (!d.node.empty()) j["node"] = d.node;
    if (!d.mirrors.empty()) {
      j["mirrors"] = ordered_json::array();
      for (int m : d.mirrors) j["mirrors"].push_back(g.devices[m].name);
    }
    out << (i == 0 ? "\n    " : ",\n    ") << j.dump();
  }
  out << (g.devices.empty() ? "],\n" : "\n  ],\n") << "  \"ops\": [";
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    const Op& op = g.ops[i];
    ordered_json j;
    j["name"] = op.name;
    // .at(): an index out of range is a broken precondition, not a crash.
    j["device"] = g.devices.at(op.device).name;
    const Stream default_stream =
        op.kind == OpKind::kCompute ? Stream{} : Stream{StreamClass::kComm, 0};
    if (!(op.stream == default_stream)) j["stream"] = stream_name(op.stream);
    if (op.kind == OpKind::kCollective) {
      const Collective& c = g.collectives.at(op.collective);
      j["kind"] = "collective";
      j["collective"] = collective_type_name(c.type);
      if (c.algo != CollectiveAlgo::kAuto) j["algo"] = collective_algo_name(c.algo);
      if (c.protocol != CollectiveProtocol::kIdeal)
        j["protocol"] = collective_protocol_name(c.protocol);
      ordered_json ranks = ordered_json::array();
      for (int r : c.ranks) ranks.push_back(g.devices.at(r).name);
      j["ranks"] = std::move(ranks);
      j["bytes"] = c.bytes;
      if (!c.counts.empty()) j["counts"] = c.counts;
      if (c.root != 0) j["root"] = g.devices.at(c.ranks.at(c.root)).name;
      if (c.chunks != 1) j["chunks"] = c.chunks;
      if (c.analytical) j["analytical"] = true;
      if (c.repeat != 1) j["repeat"] = c.repeat;
      if (c.sm_share != 0) j["sm_share"] = c.sm_share;
      if (c.max_rate > 0) j["max_rate"] = c.max_rate;
    } else if (op.kind == OpKind::kTransfer) {
      j["kind"] = "transfer";
      if (op.src != op.device) j["src"] = g.devices.at(op.src).name;
      j["dst"] = g.devices.at(op.dst).name;
      j["bytes"] = op.transfer_bytes;
      if (op.max_rate > 0) j["max_rate"] = op.max_rate;
    } else {
      if (op.duration >= 0) j["duration"] = op.duration;
      if (op.flops != 0) j["flops"] = op.flops;
      if (op.bytes != 0) j["bytes"] = op.bytes;
    }
    if (!op.phase.empty()) j["phase"] = op.phase;
    if (!op.deps.empty()) {
      ordered_json deps = ordered_json::array();
      for (int d : op.deps) deps.push_back(g.ops.at(d).name);
      j["deps"] = std::move(deps);
    }
    out << (i == 0 ? "\n    " : ",\n    ") << j.dump();
  }
  out << (g.ops.empty() ? "]\n}\n" : "\n  ]\n}\n");
}

void write_graph_json(const ExecutionGraph& g, const std::string& path) {
  write_atomically(path, [&](const std::string& tmp) {
    std::ofstream out(tmp, std::ios::binary);
    if (!out) throw std::runtime_error("cannot create " + tmp + ": " + std::strerror(errno));
    write_graph_json(g, out);
    out.close();
    if (!out) throw std::runtime_error("write failed");
  });
}

}  // namespace orrery
