#include "cli/output_paths.h"

#include <cctype>
#include <cinttypes>
#include <cstdio>
#include <filesystem>

#include "common/errors.h"
#include "results/result_identity.h"

namespace fs = std::filesystem;

namespace orrery {

std::string name_for_overrides(const std::string& file, const std::vector<std::string>& overrides) {
  if (overrides.empty() || file.empty()) return file;
  std::string tag;
  for (const auto& o : overrides) {
    tag += "--";
    for (char c : o)
      tag += std::isalnum(static_cast<unsigned char>(c)) || std::string("._=+-").find(c) !=
                                                                std::string::npos
                 ? c
                 : '_';
  }
  if (tag.size() > 120) {
    // FNV-1a over the overrides as given: stable across runs and machines.
    uint64_t h = 1469598103934665603ull;
    for (const auto& o : overrides)
      for (char c : o + '\n') h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    char buf[32];
    std::snprintf(buf, sizeof buf, "--set-%016" PRIx64, h);
    tag = buf;
  }
  fs::path p(file);
  return (p.parent_path() / (p.stem().string() + tag + p.extension().string())).string();
}

std::string check_replaceable(const std::string& path, const std::string& what,
                              const std::string& scenario_text, bool force) {
  ExistingOutput e = inspect_output(path);
  switch (e.kind) {
    case OutputKind::kAbsent:
    case OutputKind::kOrreryTrace:
      return "";
    case OutputKind::kOrreryResult:
      if (e.scenario_text == scenario_text) return "";
      return "note: replacing " + path +
             ", which held the result of another configuration (its scenario text differs)";
    case OutputKind::kOther:
      if (force) return "";
      throw InputError(what + " \"" + path + "\": refusing to replace it: it is " + e.what +
                       ", not an Orrery result (choose another path with -o, or give --force)");
  }
  return "";
}

}  // namespace orrery
