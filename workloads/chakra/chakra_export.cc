#include "workloads/chakra/chakra_export.h"

#include <filesystem>
#include <fstream>
#include <regex>

#include "common/atomic_file.h"
#include "common/errors.h"
#include "engine/graph_check.h"
#include "workloads/chakra/chakra_writer.h"

namespace fs = std::filesystem;

namespace orrery {
namespace {

void write_bytes(const std::string& path, const std::string& bytes) {
  write_atomically(path, [&](const std::string& tmp) {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) throw InputError(path + ": cannot write");
  });
}

// Files NAME.<r>.et(.gz) beside the prefix that the reader would mix into this set.
void check_no_other_set(const std::string& prefix, size_t ranks) {
  const fs::path p(prefix);
  const fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  const std::string stem = p.filename().string();
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string f = e.path().filename().string();
    if (f.size() <= stem.size() + 1 || f.compare(0, stem.size() + 1, stem + ".") != 0) continue;
    std::smatch m;
    const std::string rest = f.substr(stem.size() + 1);
    if (!std::regex_match(rest, m, std::regex("([0-9]+)\\.et(\\.gz)?"))) continue;
    const bool gz = m[2].matched;
    if (gz || m[1].str().size() > 9 || std::stoul(m[1].str()) >= ranks)
      throw InputError(e.path().string() + ": is in the way of the " + std::to_string(ranks) +
                       " rank traces " + prefix + ".<rank>.et (a reader would take it for a rank " +
                       "of this set); remove it or write elsewhere");
  }
}

}  // namespace

ChakraExport export_chakra_traces(const ExecutionGraph& graph, const std::string& prefix_or_dir,
                                  const std::string& name) {
  if (graph.devices.empty()) throw InputError("Chakra export: the workload has no devices");
  check_graph(graph, "Chakra export");
  ChakraExport out;
  out.prefix = prefix_or_dir;
  const bool dir_given =
      (!prefix_or_dir.empty() && prefix_or_dir.back() == '/') || fs::is_directory(prefix_or_dir);
  if (dir_given) out.prefix = (fs::path(prefix_or_dir) / (name.empty() ? "trace" : name)).string();
  const fs::path parent = fs::path(out.prefix).parent_path();
  if (!parent.empty() && !fs::is_directory(parent))
    throw InputError(out.prefix + ": the directory " + parent.string() +
                     " does not exist (create it first)");
  ChakraTraceSet set = encode_chakra_traces(graph);
  check_no_other_set(out.prefix, set.ranks.size());
  ignore_file_size_signal();
  for (size_t r = 0; r < set.ranks.size(); ++r) {
    out.files.push_back(out.prefix + "." + std::to_string(r) + ".et");
    write_bytes(out.files.back(), set.ranks[r]);
  }
  out.nodes = set.nodes;
  if (!set.comm_groups.empty()) {
    out.comm_groups_file = out.prefix + ".comm_groups.json";
    std::string json = "{";
    for (const auto& [pg, ranks] : set.comm_groups) {
      json += (json.size() > 1 ? ",\n " : "\n ") + std::string("\"") + pg + "\": [";
      for (size_t i = 0; i < ranks.size(); ++i) json += (i ? ", " : "") + std::to_string(ranks[i]);
      json += "]";
    }
    json += "\n}\n";
    write_bytes(out.comm_groups_file, json);
    out.notes.push_back("collectives over " + std::to_string(set.comm_groups.size()) +
                        " process group(s) other than all devices: give " + out.comm_groups_file +
                        " as the scenario's comm_groups");
  }
  if (set.rounded_durations > 0)
    out.notes.push_back(std::to_string(set.rounded_durations) +
                        " op duration(s) rounded to whole microseconds (duration_micros)");
  if (set.sync_pairs > 0)
    out.notes.push_back(std::to_string(set.sync_pairs) +
                        " cross-device dependencies carried by zero-byte send/receive pairs");
  return out;
}

}  // namespace orrery
