#include "workloads/workload_summary.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <map>
#include <ostream>

#include "common/units.h"

namespace orrery {

std::string format_count(double n) {
  const char* prefixes[] = {"", " k", " M", " G", " T", " P"};
  int i = 0;
  while (n >= 1000 && i < 5) {
    n /= 1000;
    ++i;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, i == 0 ? "%.0f%s" : "%.2f%s", n, prefixes[i]);
  return buf;
}

namespace {

// "1.57 TFLOP", "12 FLOP".
std::string format_flop(double n) {
  std::string c = format_count(n);
  return c + (c.find(' ') == std::string::npos ? " FLOP" : "FLOP");
}

std::string fmt(const char* f, ...) __attribute__((format(printf, 1, 2)));
std::string fmt(const char* f, ...) {
  char buf[512];
  va_list args;
  va_start(args, f);
  std::vsnprintf(buf, sizeof buf, f, args);
  va_end(args);
  return buf;
}

// DOT string literal.
std::string quoted(const std::string& s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '\n') {
      q += "\\n";
      continue;
    }
    if (c == '"' || c == '\\') q += '\\';
    q += c;
  }
  return q + "\"";
}

const char* phase_colour(const std::string& phase) {
  if (phase == "forward") return "#cfe2f3";
  if (phase == "backward") return "#f4cccc";
  if (phase == "optimizer") return "#d9ead3";
  if (phase == "comm") return "#fff2cc";
  return "#eeeeee";
}

}  // namespace

ModelGraphSummary summarize_model_graph(const ModelGraph& g) {
  ModelGraphSummary s;
  std::map<std::string, ModelGraphSummary::TypeRow> types;
  std::map<std::string, ModelGraphSummary::LayerRow> layers;
  for (const auto& op : g.ops) {
    const int p = static_cast<int>(op.phase);
    ++s.ops[p];
    s.flops[p] += op.flops;
    s.bytes[p] += op.bytes;
    s.params += op.params;
    s.param_bytes += op.params * dtype_bytes(op.dtype);
    const double gb = op.grads * dtype_bytes(op.grad_dtype);
    s.grad_bytes += gb;
    if (op.sparse_grad) s.sparse_grad_bytes += gb;
    auto& t = types[op.type];
    t.type = op.type;
    ++t.ops[p];
    t.flops += op.flops;
    t.bytes += op.bytes;
    auto& l = layers[op.layer.empty() ? "(none)" : op.layer];
    l.layer = op.layer.empty() ? "(none)" : op.layer;
    l.params += op.params;
    if (op.phase == Phase::kForward) l.forward_flops += op.flops;
    if (op.phase == Phase::kBackward) l.backward_flops += op.flops;
  }
  for (auto& [k, v] : types) s.types.push_back(v);
  for (auto& [k, v] : layers) s.layers.push_back(v);
  std::stable_sort(s.types.begin(), s.types.end(), [](const auto& a, const auto& b) {
    return a.flops != b.flops ? a.flops > b.flops : a.bytes > b.bytes;
  });
  std::stable_sort(s.layers.begin(), s.layers.end(), [](const auto& a, const auto& b) {
    if (a.params != b.params) return a.params > b.params;
    return a.forward_flops + a.backward_flops > b.forward_flops + b.backward_flops;
  });
  return s;
}

void print_model_graph_summary(const ModelGraph& g, std::ostream& out, int top_layers) {
  const ModelGraphSummary s = summarize_model_graph(g);
  out << "Model      " << g.name << " (batch " << g.batch << ")\n";
  if (!g.hyper.empty()) {
    std::string line;
    for (const auto& [k, v] : g.hyper) {
      std::string item = k + "=" + v;
      if (line.size() + item.size() > 88) {
        out << "Hyper      " << line << "\n";
        line.clear();
      }
      line += (line.empty() ? "" : "  ") + item;
    }
    out << "Hyper      " << line << "\n";
  }
  const int total = s.ops[0] + s.ops[1] + s.ops[2];
  out << fmt("Ops        %d: %d forward, %d backward, %d optimizer\n", total, s.ops[0], s.ops[1],
             s.ops[2]);
  out << "Parameters " << format_count(s.params) << " (" << format_size(s.param_bytes) << ")\n";
  out << "Gradients  " << format_size(s.grad_bytes);
  if (s.sparse_grad_bytes > 0)
    out << " (" << format_size(s.sparse_grad_bytes) << " sparse: only looked-up rows change)";
  out << "\n";
  const double step = s.flops[0] + s.flops[1] + s.flops[2];
  out << "FLOPs      " << format_flop(step) << " per step: forward " << format_count(s.flops[0])
      << " (" << format_count(s.flops[0] / g.batch) << " per sample), backward "
      << format_count(s.flops[1]) << ", optimizer " << format_count(s.flops[2]) << "\n";
  out << "Bytes      " << format_size(s.bytes[0] + s.bytes[1] + s.bytes[2])
      << " of memory traffic: forward " << format_size(s.bytes[0]) << ", backward "
      << format_size(s.bytes[1]) << ", optimizer " << format_size(s.bytes[2]) << "\n\n";

  out << fmt("%-20s %8s %8s %8s %12s %6s %12s\n", "op type", "forward", "backward", "optim",
             "FLOPs", "%", "bytes");
  for (const auto& t : s.types) {
    out << fmt("%-20s %8d %8d %8d %12s %5.1f%% %12s\n", t.type.c_str(), t.ops[0], t.ops[1],
               t.ops[2], format_count(t.flops).c_str(), step > 0 ? 100 * t.flops / step : 0.0,
               format_size(t.bytes).c_str());
  }
  if (top_layers > 0 && !s.layers.empty()) {
    out << fmt("\n%-40s %12s %14s %14s\n", "largest layers", "params", "forward FLOPs",
               "backward FLOPs");
    for (int i = 0; i < top_layers && i < static_cast<int>(s.layers.size()); ++i) {
      const auto& l = s.layers[i];
      out << fmt("%-40s %12s %14s %14s\n", l.layer.c_str(), format_count(l.params).c_str(),
                 format_count(l.forward_flops).c_str(), format_count(l.backward_flops).c_str());
    }
    if (static_cast<int>(s.layers.size()) > top_layers)
      out << "  ... " << s.layers.size() - top_layers << " more layers\n";
  }
}

void print_execution_graph_summary(const ExecutionGraph& g, const std::string& title,
                                   std::ostream& out) {
  std::map<std::string, int> by_kind, by_stream, by_phase;
  double flops = 0, bytes = 0, fixed = 0, transfer = 0;
  int unpriced = 0;
  std::vector<int> per_device(g.devices.size(), 0);
  std::map<std::string, std::pair<int, double>> collectives;  // type -> count, bytes
  for (const auto& op : g.ops) {
    if (op.kind == OpKind::kCollective && op.collective >= 0 &&
        op.collective < static_cast<int>(g.collectives.size())) {
      auto& c = collectives[collective_type_name(g.collectives[op.collective].type)];
      ++c.first;
      c.second += g.collectives[op.collective].bytes;
    }
    by_kind[op.kind == OpKind::kTransfer  ? "transfer"
            : op.kind == OpKind::kCompute ? "compute"
                                          : "collective"]++;
    by_stream[stream_class_name(op.stream.cls)]++;
    by_phase[op.phase.empty() ? "(none)" : op.phase]++;
    if (op.device >= 0 && op.device < static_cast<int>(per_device.size())) ++per_device[op.device];
    if (op.kind == OpKind::kTransfer) {
      transfer += op.transfer_bytes;
    } else if (op.kind == OpKind::kCompute) {
      flops += op.flops;
      bytes += op.bytes;
      if (op.duration >= 0) {
        fixed += op.duration;
      } else {
        ++unpriced;
      }
    }
  }
  out << "Workload   " << title << "\n";
  out << "Devices    " << g.devices.size() << "\n";
  out << "Ops        " << g.ops.size() << "\n";
  auto table = [&](const char* what, const std::map<std::string, int>& m) {
    out << fmt("  %-10s", what);
    for (const auto& [k, v] : m) out << "  " << k << " " << v;
    out << "\n";
  };
  table("by kind", by_kind);
  table("by stream", by_stream);
  table("by phase", by_phase);
  out << "Compute    " << format_flop(flops) << ", " << format_size(bytes)
      << " of memory traffic; fixed durations sum to " << format_time(fixed);
  if (unpriced > 0) out << " (" << unpriced << " ops priced by the cost model)";
  out << "\nTransfers  " << format_size(transfer) << " over the network\n";
  for (const auto& [type, c] : collectives)
    out << fmt("Collective %s: %d, %s in all\n", type.c_str(), c.first,
               format_size(c.second).c_str());
  if (!g.devices.empty()) {
    out << fmt("\n%-24s %-24s %10s\n", "device", "host", "ops");
    for (size_t i = 0; i < g.devices.size() && i < 32; ++i)
      out << fmt("%-24s %-24s %10d\n", g.devices[i].name.c_str(), g.devices[i].host.c_str(),
                 per_device[i]);
    if (g.devices.size() > 32) out << "  ... " << g.devices.size() - 32 << " more devices\n";
  }
}

void write_model_graph_dot(const ModelGraph& g, std::ostream& out) {
  out << "digraph " << quoted(g.name) << " {\n  rankdir=TB;\n  node [shape=box, style=filled, "
      << "fontname=\"Helvetica\", fontsize=10];\n";
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const ModelOp& op = g.ops[i];
    out << "  n" << i << " [label=" << quoted(op.name + "\n" + op.type) << ", fillcolor=\""
        << phase_colour(phase_name(op.phase)) << "\"];\n";
  }
  for (size_t i = 0; i < g.ops.size(); ++i)
    for (int d : g.ops[i].deps) out << "  n" << d << " -> n" << i << ";\n";
  out << "}\n";
}

void write_execution_graph_dot(const ExecutionGraph& g, std::ostream& out) {
  out << "digraph workload {\n  rankdir=TB;\n  node [shape=box, style=filled, "
      << "fontname=\"Helvetica\", fontsize=10];\n";
  for (size_t d = 0; d < g.devices.size(); ++d) {
    out << "  subgraph cluster_" << d << " {\n    label=" << quoted(g.devices[d].name) << ";\n";
    for (size_t i = 0; i < g.ops.size(); ++i) {
      const Op& op = g.ops[i];
      if (op.device != static_cast<int>(d)) continue;
      std::string label = op.name;
      if (op.kind == OpKind::kTransfer)
        label += "\n-> " + g.devices[op.dst].name + " " + format_size(op.transfer_bytes);
      out << "    n" << i << " [label=" << quoted(label) << ", fillcolor=\""
          << phase_colour(op.kind == OpKind::kCompute ? op.phase : "comm") << "\"];\n";
    }
    out << "  }\n";
  }
  for (size_t i = 0; i < g.ops.size(); ++i)
    for (int d : g.ops[i].deps) out << "  n" << d << " -> n" << i << ";\n";
  out << "}\n";
}

}  // namespace orrery
