// File-level entry points of the Chakra importer: which files make up a trace, reading them, and
// ASTRA-sim's communicator-group file. The conversion itself is chakra_import.cc.
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "engine/errors.h"
#include "workloads/chakra/chakra_import.h"

namespace fs = std::filesystem;

namespace orrery {

namespace {

// "NAME.<rank>.et" or "NAME.<rank>.et.gz": the rank, or -1.
int rank_of(const std::string& filename, std::string* stem) {
  static const std::regex re(R"((.*)\.(\d+)\.et(\.gz)?)");
  std::smatch m;
  if (!std::regex_match(filename, m, re)) return -1;
  *stem = m[1];
  return std::stoi(m[2]);
}

std::string existing_rank_file(const std::string& prefix, int rank) {
  for (const char* ext : {".et", ".et.gz"}) {
    std::string path = prefix + "." + std::to_string(rank) + ext;
    if (fs::is_regular_file(path)) return path;
  }
  return "";
}

}  // namespace

std::vector<std::string> resolve_chakra_files(const std::vector<std::string>& args) {
  if (args.empty()) throw InputError("Chakra import: no trace files given");
  if (args.size() > 1) {
    for (const auto& f : args)
      if (!fs::is_regular_file(f)) throw InputError(f + ": no such trace file");
    return args;
  }
  const std::string& a = args[0];
  if (fs::is_regular_file(a)) return args;
  if (fs::is_directory(a)) {
    std::map<int, std::string> by_rank;
    std::set<std::string> stems;
    for (const auto& entry : fs::directory_iterator(a)) {
      std::string stem;
      int r = rank_of(entry.path().filename().string(), &stem);
      if (r < 0) continue;
      stems.insert(stem);
      if (!by_rank.emplace(r, entry.path().string()).second)
        throw InputError(a + ": two trace files for rank " + std::to_string(r));
    }
    if (by_rank.empty())
      throw InputError(a + ": no Chakra trace files (NAME.<rank>.et) in the directory");
    if (stems.size() > 1)
      throw InputError(a + ": trace files of several workloads (" + *stems.begin() + ", " +
                       *std::next(stems.begin()) + "): name one prefix");
    std::vector<std::string> files;
    for (const auto& [r, path] : by_rank) {
      if (r != static_cast<int>(files.size()))
        throw InputError(a + ": rank " + std::to_string(files.size()) + " has no trace file");
      files.push_back(path);
    }
    return files;
  }
  std::string prefix = a;
  while (!prefix.empty() && prefix.back() == '.') prefix.pop_back();
  std::vector<std::string> files;
  for (std::string f; !(f = existing_rank_file(prefix, static_cast<int>(files.size()))).empty();)
    files.push_back(f);
  if (files.empty())
    throw InputError(a + ": no such file, and no Chakra traces " + prefix + ".0.et(.gz)");
  return files;
}

ExecutionGraph load_chakra_traces(const std::vector<std::string>& files_or_prefix,
                                  const ChakraImportOptions& options) {
  std::vector<chakra::Trace> traces;
  for (const auto& f : resolve_chakra_files(files_or_prefix))
    traces.push_back(chakra::read_trace(f));
  return chakra_to_execution_graph(traces, options);
}

ExecutionGraph load_chakra_traces(const std::vector<std::string>& files_or_prefix,
                                  const std::vector<std::string>& device_hosts) {
  ChakraImportOptions options;
  options.device_hosts = device_hosts;
  return load_chakra_traces(files_or_prefix, options);
}

std::map<std::string, std::vector<int>> load_chakra_comm_groups(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot open: " + std::strerror(errno));
  std::stringstream ss;
  ss << in.rdbuf();
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(ss.str());
  } catch (const nlohmann::json::exception& e) {
    throw InputError(path + ": invalid JSON: " + e.what());
  }
  if (!j.is_object()) throw InputError(path + ": expected {\"<group>\": [ranks...], ...}");
  std::map<std::string, std::vector<int>> groups;
  for (const auto& [name, ranks] : j.items()) {
    if (!ranks.is_array() || ranks.empty())
      throw InputError(path + ": group \"" + name + "\" must be a non-empty array of ranks");
    for (const auto& r : ranks) {
      if (!r.is_number_integer() || r.get<int>() < 0)
        throw InputError(path + ": group \"" + name + "\": ranks must be integers >= 0");
      groups[name].push_back(r.get<int>());
    }
  }
  return groups;
}

}  // namespace orrery
