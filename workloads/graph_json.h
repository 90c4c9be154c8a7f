// Orrery's native op-graph file: a JSON ExecutionGraph ("format": "orrery-graph", version 1).
// The format reference, with every key, default and unit, is docs/op-graph-format.md.
#pragma once

#include <iosfwd>
#include <string>

#include "engine/execution_graph.h"

namespace orrery {

// Reads and validates a graph file (check_graph runs last). Throws InputError naming the file,
// the item (e.g. `g.json: ops[3] "send": unknown device "gpu9"`) and what was expected; JSON
// syntax errors are reported as `line L, column C`.
ExecutionGraph load_graph_json(const std::string& path);
// Same, from text already in memory; `origin` stands in for the file name in messages.
ExecutionGraph parse_graph_json(const std::string& text, const std::string& origin);

// Writes one op per line, leaving out keys at their default, so that loading the output yields
// an equal graph. Fields the format cannot carry (the cost fields of a transfer op) are dropped.
// Precondition: the graph passes check_graph. The path version throws InputError if the file
// cannot be written.
void write_graph_json(const ExecutionGraph& g, std::ostream& out);
void write_graph_json(const ExecutionGraph& g, const std::string& path);

}  // namespace orrery
