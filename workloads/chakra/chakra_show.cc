#include "workloads/chakra/chakra_show.h"

#include <cstdio>
#include <map>
#include <string>

#include "common/units.h"

namespace orrery {
namespace {

// Text from the file goes to a terminal: control characters (escape sequences) become '?'.
std::string printable(std::string s) {
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return s;
}

std::string type_name(int type) {
  const char* name = chakra::node_type_name(type);
  return name != nullptr ? name : "type " + std::to_string(type);
}

// The attribute's value as text, for the listing; "" when absent or not a scalar.
std::string attr_text(const chakra::Node& n, const char* name) {
  const chakra::Attr* a = n.attr(name);
  if (a == nullptr) return "";
  int64_t i = 0;
  double d = 0;
  std::string s;
  if (a->integer(&i)) return std::to_string(i);
  if (a->number(&d)) return format_exact(d);
  if (a->text(&s)) return printable(s);
  return std::string("(") + a->value_name() + ")";
}

std::string cost_of(const chakra::Node& n) {
  std::string cost;
  auto add = [&](const std::string& part) { cost += (cost.empty() ? "" : ", ") + part; };
  if (n.duration_micros > 0) add(format_time(static_cast<double>(n.duration_micros) * 1e-6));
  const chakra::Attr* ops = n.attr("num_ops");
  double v = 0;
  if (ops != nullptr && ops->number(&v) && v > 0) add(format_exact(v) + " ops");
  const chakra::Attr* tensor = n.attr("tensor_size");
  if (tensor != nullptr && tensor->number(&v) && v > 0) add(format_size(v));
  if (n.type == chakra::kCommCollNode) {
    int64_t t = -1;
    const chakra::Attr* ct = n.attr("comm_type");
    const char* coll =
        ct != nullptr && ct->integer(&t) ? chakra::collective_name(static_cast<int>(t)) : nullptr;
    add(coll != nullptr ? coll : "comm_type " + attr_text(n, "comm_type"));
    const std::string pg = attr_text(n, "pg_name");
    if (!pg.empty()) add("group " + pg);
  }
  if (n.type == chakra::kCommSendNode) add("to rank " + attr_text(n, "comm_dst"));
  if (n.type == chakra::kCommRecvNode) add("from rank " + attr_text(n, "comm_src"));
  const chakra::Attr* size = n.attr("comm_size");
  if (size != nullptr && size->number(&v)) add(format_size(v));
  if (attr_text(n, "is_cpu_op") == "1") add("CPU");
  return cost;
}

std::string deps_of(const chakra::Node& n) {
  std::string deps;
  size_t shown = 0;
  for (const auto* list : {&n.data_deps, &n.ctrl_deps})
    for (uint64_t d : *list) {
      if (++shown > 8) continue;
      deps += (deps.empty() ? "" : " ") + std::to_string(d);
    }
  if (shown > 8) deps += " ... (" + std::to_string(shown) + ")";
  return deps.empty() ? "-" : deps;
}

}  // namespace

void print_chakra_trace(const chakra::Trace& trace, std::ostream& out, size_t max_nodes) {
  out << "Trace      " << trace.origin << " (one Chakra rank file)\n";
  out << "Schema     " << (trace.version.empty() ? "(not given)" : printable(trace.version))
      << "\n";
  for (const chakra::Attr& a : trace.metadata) {
    chakra::Node holder;
    holder.attrs = {a};
    out << "Metadata   " << printable(a.name) << " = " << attr_text(holder, a.name.c_str()) << "\n";
  }
  out << "Nodes      " << trace.nodes.size() << "\n";
  std::map<std::string, size_t> by_type;
  for (const chakra::Node& n : trace.nodes) ++by_type[type_name(n.type)];
  out << "  by type ";
  for (const auto& [type, count] : by_type) out << "  " << type << " " << count;
  out << "\n\n";
  char line[160];
  std::snprintf(line, sizeof line, "%-8s %-15s %-32s %-44s %s\n", "id", "type", "name", "cost",
                "depends on");
  out << line;
  size_t shown = 0;
  for (const chakra::Node& n : trace.nodes) {
    if (shown++ == max_nodes) {
      out << "... " << trace.nodes.size() - max_nodes << " more node(s)\n";
      break;
    }
    // Names come from the file: cut long ones so the columns stay aligned.
    std::string name = printable(n.name.size() > 32 ? n.name.substr(0, 29) + "..." : n.name);
    std::string cost = cost_of(n);
    if (cost.size() > 44) cost = cost.substr(0, 41) + "...";
    out << std::to_string(n.id);
    out << std::string(n.id < 10000000 ? 8 - std::to_string(n.id).size() : 0, ' ') << ' ';
    std::snprintf(line, sizeof line, "%-15s %-32s %-44s ", type_name(n.type).c_str(), name.c_str(),
                  cost.c_str());
    out << line << deps_of(n) << "\n";
  }
}

void print_chakra_process_groups(const std::vector<ProcessGroupEntry>& groups,
                                 const std::string& source, std::ostream& out, size_t max_groups) {
  if (groups.empty()) return;
  out << "\nProcess groups (" << source << "): " << groups.size() << "\n";
  constexpr size_t kRanksShown = 8;
  for (size_t k = 0; k < groups.size() && k < max_groups; ++k) {
    const ProcessGroupEntry& g = groups[k];
    std::string ranks;
    for (size_t i = 0; i < g.ranks.size() && i < kRanksShown; ++i)
      ranks += (i ? ", " : "") + std::to_string(g.ranks[i]);
    if (g.ranks.size() > kRanksShown) ranks += ", ...";
    out << "  " << g.name << (g.desc.empty() ? "" : " (" + g.desc + ")") << ": " << g.ranks.size()
        << (g.ranks.size() == 1 ? " rank" : " ranks") << " [" << ranks << "]\n";
  }
  if (groups.size() > max_groups) out << "  ... " << groups.size() - max_groups << " more\n";
}

}  // namespace orrery
