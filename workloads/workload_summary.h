// What `orrery workload show` prints: totals and tables over a ModelGraph (one replica) or an
// ExecutionGraph (imported per-device traces), and Graphviz DOT pictures of small graphs.
#pragma once

#include <array>
#include <iosfwd>
#include <string>
#include <vector>

#include "engine/execution_graph.h"
#include "workloads/model_graph.h"

namespace orrery {

struct ModelGraphSummary {
  struct TypeRow {
    std::string type;
    std::array<int, 3> ops{};  // per phase: forward, backward, optimizer
    double flops = 0.0;
    double bytes = 0.0;
  };
  struct LayerRow {
    std::string layer;
    double params = 0.0;
    double forward_flops = 0.0;
    double backward_flops = 0.0;
  };
  std::array<int, 3> ops{};  // per phase
  std::array<double, 3> flops{};
  std::array<double, 3> bytes{};
  double params = 0.0;             // elements
  double param_bytes = 0.0;        // in each owning op's dtype
  double grad_bytes = 0.0;         // weight gradients, in grad_dtype
  double sparse_grad_bytes = 0.0;  // the part that is sparse (embedding tables)
  std::vector<TypeRow> types;      // by total FLOPs, then bytes, descending
  std::vector<LayerRow> layers;    // by parameters, then FLOPs, descending
};

ModelGraphSummary summarize_model_graph(const ModelGraph& g);
// Text report: header, totals, op types, the `top_layers` largest layers.
void print_model_graph_summary(const ModelGraph& g, std::ostream& out, int top_layers = 10);

// Text report of an ExecutionGraph: devices, ops per kind / stream class / phase, compute
// FLOPs and bytes, fixed durations, transferred bytes.
void print_execution_graph_summary(const ExecutionGraph& g, const std::string& title,
                                   std::ostream& out);

// Graphviz: one node per op (label name and type; colour by phase), one edge per dependency
// (dependency -> dependent).
void write_model_graph_dot(const ModelGraph& g, std::ostream& out);
void write_execution_graph_dot(const ExecutionGraph& g, std::ostream& out);

// "25.56 M", "4.09 G": SI-prefixed count for listings.
std::string format_count(double n);

}  // namespace orrery
