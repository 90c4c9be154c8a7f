#include "common/data_dir.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <vector>

#include "common/errors.h"

namespace fs = std::filesystem;

namespace orrery {
namespace {

// The file this code was loaded from: the `orrery` binary or a test, or the Python extension
// module, whose process is python3, so that /proc/self/exe would name the interpreter.
fs::path running_binary() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&running_binary), &info) != 0 && info.dli_fname &&
      std::string(info.dli_fname).find(".so") != std::string::npos) {
    std::error_code ec;
    const fs::path so = fs::canonical(info.dli_fname, ec);
    if (!ec) return so;
  }
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe;
}

bool is_dir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

// True when `p` lies inside `dir` (both absolute and normalized).
bool inside(const fs::path& p, const fs::path& dir) {
  const fs::path rel = p.lexically_relative(dir);
  return !rel.empty() && *rel.begin() != "..";
}

}  // namespace

std::string shipped_data_dir() {
  if (const char* env = std::getenv("ORRERY_DATA_DIR"); env && *env) {
    if (!is_dir(env))
      throw InputError(std::string("ORRERY_DATA_DIR: \"") + env + "\" is not a directory");
    return env;
  }
  const fs::path exe = running_binary();
  if (exe.empty()) return "";
  const fs::path installed = (exe.parent_path() / ".." / "share" / "orrery").lexically_normal();
  if (is_dir(installed)) return installed.string();
#if defined(ORRERY_BUILD_TREE) && defined(ORRERY_SOURCE_TREE)
  // Only a binary (or test, or Python module) inside the build tree falls back to the sources.
  if (inside(exe.lexically_normal(), fs::path(ORRERY_BUILD_TREE).lexically_normal()) &&
      is_dir(ORRERY_SOURCE_TREE))
    return ORRERY_SOURCE_TREE;
#endif
  return "";
}

std::string find_scenario_file(const std::string& arg) {
  if (arg.empty() || is_file(arg) || arg.find('/') != std::string::npos) return arg;
  const std::string data = shipped_data_dir();
  if (data.empty()) return arg;
  const fs::path dir = fs::path(data) / "scenarios";
  for (const fs::path& p : {dir / arg, dir / (arg + ".yaml")})
    if (is_file(p)) return p.string();
  std::vector<fs::path> sub;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (is_file(it->path() / (arg + ".yaml"))) sub.push_back(it->path() / (arg + ".yaml"));
  std::sort(sub.begin(), sub.end());  // directory order is not stable across file systems
  return sub.empty() ? arg : sub.front().string();
}

}  // namespace orrery
