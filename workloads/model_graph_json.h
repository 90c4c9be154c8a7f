// Orrery's native single-replica model file: a JSON ModelGraph ("format": "orrery-model",
// version 1). Written by scripts/export_pytorch_graph.py and by write_model_graph_json; the
// format reference, with every key and default, is in docs/workloads.md.
#pragma once

#include <iosfwd>
#include <string>

#include "workloads/model_graph.h"

namespace orrery {

// Reads and validates a model file: strict keys and types, known op types, dependencies by op
// name (forward references allowed), no cycles (check_model_graph), then fills FLOPs and bytes
// of ops that give neither (fill_op_counts). Throws InputError naming the file, the item
// (e.g. `m.json: ops[3] "fc1": unknown phase "fwd"`) and what was expected; JSON syntax errors
// give line and column.
ModelGraph load_model_graph_json(const std::string& path);
ModelGraph parse_model_graph_json(const std::string& text, const std::string& origin);

// Writes one op per line, leaving out keys at their default; loading the output yields an
// equal graph. Precondition: check_model_graph passes. The path version throws InputError if
// the file cannot be written.
void write_model_graph_json(const ModelGraph& g, std::ostream& out);
void write_model_graph_json(const ModelGraph& g, const std::string& path);

// Whether `text` starts like an orrery-model file (for commands that accept several formats).
bool looks_like_model_graph_json(const std::string& text);

}  // namespace orrery
