// File-level entry points of the Chakra importer: which files make up a trace, reading them, and
// ASTRA-sim's communicator-group file. The conversion itself is chakra_import.cc.
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "common/errors.h"
#include "common/input_file.h"
#include "workloads/chakra/chakra_import.h"

namespace fs = std::filesystem;

namespace orrery {

namespace {

// "NAME.<rank>.et" or "NAME.<rank>.et.gz": the rank, or -1. Seven digits at most (no job has
// ten million ranks; more would not fit an int).
int rank_of(const std::string& filename, std::string* stem) {
  static const std::regex re(R"((.*)\.(\d{1,7})\.et(\.gz)?)");
  std::smatch m;
  if (!std::regex_match(filename, m, re)) return -1;
  *stem = m[1];
  return std::stoi(m[2]);
}

// Every NAME.<rank>.et(.gz) in `dir` whose NAME is `stem` (any stem when `stem` is null, then
// collected into `stems`). Throws when one rank has two files.
std::map<int, std::string> rank_files(const fs::path& dir, const std::string* stem,
                                      std::set<std::string>* stems, const std::string& what) {
  std::map<int, std::string> by_rank;
  std::error_code ec;
  for (fs::directory_iterator it(dir.empty() ? fs::path(".") : dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    std::string name_stem;
    const int r = rank_of(it->path().filename().string(), &name_stem);
    if (r < 0 || (stem != nullptr && name_stem != *stem)) continue;
    if (stems != nullptr) stems->insert(name_stem);
    const std::string path = dir.empty() ? it->path().filename().string() : it->path().string();
    auto [pos, fresh] = by_rank.emplace(r, path);
    if (!fresh)
      throw InputError(what + ": two trace files for rank " + std::to_string(r) + " (" +
                       pos->second + ", " + path + ")");
  }
  return by_rank;
}

// The files of ranks 0..n-1, or an InputError naming every missing rank's file: a trace set
// with a rank missing would run as a different, smaller job.
std::vector<std::string> contiguous(const std::map<int, std::string>& by_rank,
                                    const std::string& what, const std::string& pattern) {
  std::vector<std::string> files;
  std::string missing;
  int count = 0;
  const int last = by_rank.rbegin()->first;
  for (int r = 0; r <= last; ++r) {
    auto it = by_rank.find(r);
    if (it != by_rank.end()) {
      files.push_back(it->second);
      continue;
    }
    if (++count <= 10)
      missing += (missing.empty() ? "" : ", ") + pattern + "." + std::to_string(r) + ".et";
  }
  if (count > 0)
    throw InputError(what + ": the trace set has files up to rank " + std::to_string(last) +
                     " but " + std::to_string(count) + " rank file(s) are missing: " + missing +
                     (count > 10 ? ", ..." : ""));
  return files;
}

}  // namespace

std::vector<std::string> resolve_chakra_files(const std::vector<std::string>& args) {
  if (args.empty()) throw InputError("Chakra import: no trace files given");
  if (args.size() > 1) {
    for (const auto& f : args) require_regular_file(f, "Chakra trace file");
    // Files named NAME.<rank>.et must be given in rank order, without gaps.
    for (size_t i = 0; i < args.size(); ++i) {
      std::string stem;
      const int r = rank_of(fs::path(args[i]).filename().string(), &stem);
      if (r >= 0 && r != static_cast<int>(i))
        throw InputError(args[i] + ": is the trace of rank " + std::to_string(r) +
                         " but given as " + "file " + std::to_string(i) +
                         " (rank i is the i-th file; is a rank " + "missing?)");
    }
    return args;
  }
  const std::string& a = args[0];
  if (fs::is_regular_file(a)) {
    // One rank's file of a larger set would run as a one-rank job whose collectives vanish.
    std::string stem;
    const fs::path p(a);
    const int r = rank_of(p.filename().string(), &stem);
    if (r >= 0) {
      std::map<int, std::string> set = rank_files(p.parent_path(), &stem, nullptr, a);
      if (set.size() > 1 || r != 0) {
        const std::string prefix = (p.parent_path() / stem).string();
        throw InputError(a + ": is the trace of rank " + std::to_string(r) + " of a set of " +
                         std::to_string(set.rbegin()->first + 1) + " ranks; give the prefix " +
                         prefix + " or the directory to run them all (`orrery workload show " + a +
                         "` lists this rank's nodes)");
      }
    }
    require_regular_file(a, "Chakra trace file");
    return args;
  }
  std::error_code ec;
  if (fs::exists(a, ec) && !fs::is_directory(a, ec)) require_regular_file(a, "Chakra trace file");
  if (fs::is_directory(a)) {
    std::set<std::string> stems;
    std::map<int, std::string> by_rank = rank_files(a, nullptr, &stems, a);
    if (by_rank.empty())
      throw InputError(a + ": no Chakra trace files (NAME.<rank>.et) in the directory");
    if (stems.size() > 1)
      throw InputError(a + ": trace files of several workloads (" + *stems.begin() + ", " +
                       *std::next(stems.begin()) + "): name one prefix");
    return contiguous(by_rank, a, (fs::path(a) / *stems.begin()).string());
  }
  std::string prefix = a;
  while (!prefix.empty() && prefix.back() == '.') prefix.pop_back();
  const fs::path p(prefix);
  const std::string stem = p.filename().string();
  std::map<int, std::string> by_rank = rank_files(p.parent_path(), &stem, nullptr, a);
  if (by_rank.empty())
    throw InputError(a + ": no such file, and no Chakra traces " + prefix + ".0.et(.gz)");
  return contiguous(by_rank, a, prefix);
}

namespace {

// A trace whose metadata names the job's size must come with that many rank files.
void check_declared_ranks(const std::vector<chakra::Trace>& traces) {
  for (const chakra::Trace& t : traces)
    for (const chakra::Attr& a : t.metadata) {
      if (a.name != "world_size" && a.name != "num_ranks" && a.name != "npus" &&
          a.name != "num_npus")
        continue;
      int64_t n = 0;
      if (!a.integer(&n) || n == static_cast<int64_t>(traces.size())) continue;
      throw InputError(t.origin + ": GlobalMetadata says " + a.name + " = " + std::to_string(n) +
                       ", but the trace set has " + std::to_string(traces.size()) +
                       " rank file(s)" +
                       (n > static_cast<int64_t>(traces.size()) ? ": rank files are missing" : ""));
    }
}

}  // namespace

std::vector<chakra::Trace> read_chakra_traces(const std::vector<std::string>& files_or_prefix) {
  // One file per rank, each decoded alone: on every core (1,024 rank files of dp50 took as long
  // to decode as the replay of their 1.7 million activities). A bad file is reported as a
  // sequential read would report it: the first in rank order.
  const std::vector<std::string> files = resolve_chakra_files(files_or_prefix);
  std::vector<chakra::Trace> traces(files.size());
  std::vector<std::exception_ptr> errors(files.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next++) < files.size();) {
      try {
        traces[i] = chakra::read_trace(files[i]);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  const size_t cores = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> helpers;
  for (size_t t = 1; t < std::min(cores, files.size()); ++t) helpers.emplace_back(work);
  work();
  for (auto& h : helpers) h.join();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
  check_declared_ranks(traces);
  return traces;
}

ExecutionGraph load_chakra_traces(const std::vector<std::string>& files_or_prefix,
                                  const ChakraImportOptions& options) {
  return chakra_to_execution_graph(read_chakra_traces(files_or_prefix), options);
}

ExecutionGraph load_chakra_traces(const std::vector<std::string>& files_or_prefix,
                                  const std::vector<std::string>& device_hosts) {
  ChakraImportOptions options;
  options.device_hosts = device_hosts;
  return load_chakra_traces(files_or_prefix, options);
}

std::map<std::string, std::vector<int>> load_chakra_comm_groups(const std::string& path) {
  const std::string text = read_input_file(path, "communicator-group JSON file");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(path + ": invalid JSON: " + e.what());
  }
  if (!j.is_object()) throw InputError(path + ": expected {\"<group>\": [ranks...], ...}");
  std::map<std::string, std::vector<int>> groups;
  for (const auto& [name, ranks] : j.items()) {
    if (!ranks.is_array() || ranks.empty())
      throw InputError(path + ": group \"" + name + "\" must be a non-empty array of ranks");
    for (const auto& r : ranks) {
      // get<int> would wrap 4294967297 to 1: range-check the 64-bit value first.
      if (!r.is_number_integer() || r.get<int64_t>() < 0 || r.get<int64_t>() > (1 << 24))
        throw InputError(path + ": group \"" + name + "\": ranks must be integers from 0 to " +
                         std::to_string(1 << 24) + ", got " + r.dump());
      groups[name].push_back(static_cast<int>(r.get<int64_t>()));
    }
  }
  return groups;
}

}  // namespace orrery
