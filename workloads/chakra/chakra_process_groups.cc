#include "workloads/chakra/chakra_process_groups.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>

#include "common/errors.h"
#include "common/json_fields.h"

namespace orrery {

namespace {

using nlohmann::json;

std::string ranks_text(const std::vector<int>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

void append_utf8(uint32_t c, std::string* out) {
  if (c < 0x80) {
    out->push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out->push_back(static_cast<char>(0xc0 | (c >> 6)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3f)));
  } else if (c < 0x10000) {
    out->push_back(static_cast<char>(0xe0 | (c >> 12)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3f)));
  } else {
    out->push_back(static_cast<char>(0xf0 | (c >> 18)));
    out->push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3f)));
  }
}

// The strings of a Python list literal of str reprs (['...', "..."]), which is what the converter
// writes with str(list); false when `text` is not one.
bool python_string_list(const std::string& text, std::vector<std::string>* out) {
  size_t i = 0;
  auto skip = [&] {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  };
  skip();
  if (i >= text.size() || text[i] != '[') return false;
  ++i;
  for (;;) {
    skip();
    if (i >= text.size()) return false;
    if (text[i] == ']') break;
    const char quote = text[i];
    if (quote != '\'' && quote != '"') return false;
    std::string s;
    for (++i;; ++i) {
      if (i >= text.size()) return false;
      const char c = text[i];
      if (c == quote) break;
      if (c != '\\') {
        s.push_back(c);
        continue;
      }
      if (++i >= text.size()) return false;
      const char e = text[i];
      const int hex = e == 'x' ? 2 : e == 'u' ? 4 : e == 'U' ? 8 : 0;
      if (hex) {
        if (i + hex >= text.size()) return false;
        uint32_t code = 0;
        for (int k = 1; k <= hex; ++k) {
          const char h = text[i + k];
          if (!std::isxdigit(static_cast<unsigned char>(h))) return false;
          code = code * 16 + static_cast<uint32_t>(std::isdigit(static_cast<unsigned char>(h))
                                                       ? h - '0'
                                                       : std::tolower(h) - 'a' + 10);
        }
        i += hex;
        append_utf8(code, &s);
        continue;
      }
      switch (e) {
        case 'n':
          s.push_back('\n');
          break;
        case 't':
          s.push_back('\t');
          break;
        case 'r':
          s.push_back('\r');
          break;
        case '\\':
        case '\'':
        case '"':
          s.push_back(e);
          break;
        default:
          return false;
      }
    }
    ++i;
    out->push_back(std::move(s));
    skip();
    if (i < text.size() && text[i] == ',') ++i;
  }
  ++i;
  skip();
  return i == text.size();
}

// The table inside `values`: a JSON array of objects, possibly wrapped in lists or in strings
// holding JSON (the trace's input list holds the table's JSON text as its first string).
bool find_table(const json& v, json* table, int depth = 0) {
  if (depth > 4) return false;
  if (v.is_string()) {
    json inner = json::parse(v.get<std::string>(), nullptr, false);
    return !inner.is_discarded() && find_table(inner, table, depth + 1);
  }
  if (!v.is_array()) return false;
  if (v.empty() || v.front().is_object()) {
    *table = v;
    return true;
  }
  return find_table(v.front(), table, depth + 1);
}

}  // namespace

std::vector<ProcessGroupEntry> parse_process_group_table(const std::string& values, int world,
                                                         const std::string& where) {
  json outer = json::parse(values, nullptr, false);
  if (outer.is_discarded()) {
    std::vector<std::string> strings;
    if (!python_string_list(values, &strings) || strings.empty())
      throw InputError(where +
                       ": inputs.values is neither a JSON list nor a Python list of strings "
                       "holding torch.distributed's process-group table");
    outer = strings.front();
  }
  json table;
  if (!find_table(outer, &table))
    throw InputError(where +
                     ": inputs.values holds no process-group table (expected a JSON list of "
                     "{\"pg_name\", \"ranks\", \"group_size\", ...} objects)");
  std::vector<ProcessGroupEntry> out;
  const std::string origin = where;
  for (size_t k = 0; k < table.size(); ++k) {
    JsonFields f(table[k], "process group [" + std::to_string(k) + "]", origin);
    ProcessGroupEntry e;
    e.name = f.required_text("pg_name");
    f.set_where("process group \"" + e.name + "\"");
    f.text("pg_desc", &e.desc);
    const json* ranks = f.find("ranks");
    if (!ranks || !ranks->is_array())
      f.fail("\"ranks\" must be a list of global ranks ([] for all ranks), got " +
             (ranks ? describe_json(*ranks) : std::string("nothing")));
    std::set<int> seen;
    for (const json& r : *ranks) {
      if (!r.is_number_integer() || r.get<int64_t>() < 0 || r.get<int64_t>() >= world)
        f.fail("ranks must be integers from 0 to " + std::to_string(world - 1) + " (" +
               std::to_string(world) + " rank traces), got " + describe_json(r));
      const int x = r.get<int>();
      if (!seen.insert(x).second) f.fail("rank " + std::to_string(x) + " is listed twice");
      e.ranks.push_back(x);
    }
    if (e.ranks.empty())
      for (int r = 0; r < world; ++r) e.ranks.push_back(r);
    const int64_t size = f.integer("group_size", static_cast<int64_t>(e.ranks.size()), 1);
    if (size != static_cast<int64_t>(e.ranks.size()))
      f.fail("group_size " + std::to_string(size) + " but " +
             (ranks->empty() ? "\"ranks\": [] means all " + std::to_string(world) +
                                   " ranks (one trace per rank)"
                             : "ranks lists " + std::to_string(e.ranks.size())));
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<ProcessGroupEntry> trace_process_group_entries(
    const std::vector<chakra::Trace>& traces) {
  std::map<std::string, ProcessGroupEntry> groups;
  std::map<std::string, std::string> listed_by;  // pg_name -> the file that first listed it
  const int world = static_cast<int>(traces.size());
  for (const chakra::Trace& t : traces) {
    for (const chakra::Node& n : t.nodes) {
      if (n.type != chakra::kMetadataNode || n.name != kProcessGroupInitNode) continue;
      const std::string where = t.origin + ": node " + std::to_string(n.id) + " \"" + n.name + "\"";
      for (ProcessGroupEntry& e : parse_process_group_table(n.input_values, world, where)) {
        auto it = groups.find(e.name);
        if (it == groups.end()) {
          listed_by[e.name] = t.origin;
          groups.emplace(e.name, std::move(e));
        } else if (it->second.ranks != e.ranks) {
          throw InputError(where + ": process group \"" + e.name + "\" has ranks " +
                           ranks_text(e.ranks) + " here but " + ranks_text(it->second.ranks) +
                           " in " + listed_by[e.name]);
        }
      }
    }
  }
  std::vector<ProcessGroupEntry> out;
  for (auto& [name, e] : groups) out.push_back(std::move(e));
  return out;
}

std::map<std::string, std::vector<int>> trace_process_groups(
    const std::vector<chakra::Trace>& traces) {
  std::map<std::string, std::vector<int>> groups;
  for (ProcessGroupEntry& e : trace_process_group_entries(traces))
    groups.emplace(e.name, std::move(e.ranks));
  return groups;
}

}  // namespace orrery
