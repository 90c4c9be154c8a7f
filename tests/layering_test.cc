// The layering rule of docs/design.md ("Layers"): a folder includes only folders of a lower
// layer (and itself). The table is read from the design note itself, so the note and the code
// cannot drift apart; the per-folder libraries of CMakeLists.txt make a call upward fail to link,
// and this test makes an include upward fail even where no symbol is used.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/test_util.h"

namespace fs = std::filesystem;

namespace orrery {
namespace {

// Folder -> layer number, from the rows "| N | `folder/` ... |" of the "Layers" table.
std::map<std::string, int> read_layers(const std::string& design_md) {
  std::map<std::string, int> layers;
  std::istringstream in(design_md);
  const std::regex row(R"(^\|\s*(\d+)\s*\|\s*((?:`[a-z_]+/`[, ]*)+)\|)");
  const std::regex folder("`([a-z_]+)/`");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (!std::regex_search(line, m, row)) continue;
    const int level = std::stoi(m[1]);
    const std::string cell = m[2];
    for (std::sregex_iterator it(cell.begin(), cell.end(), folder), end; it != end; ++it)
      layers[(*it)[1]] = level;
  }
  return layers;
}

// "file:line: folder/ (layer a) includes folder/x.h (layer b)" for every upward include under
// `root`. Folders missing from `layers` are not checked (tests/, bench/, python/ sit on top).
std::vector<std::string> upward_includes(const fs::path& root,
                                         const std::map<std::string, int>& layers) {
  std::vector<std::string> out;
  const std::regex include(R"(^\s*#\s*include\s*"([a-z_]+)/([^"]+)\")");
  for (const auto& [dir, level] : layers) {
    if (!fs::is_directory(root / dir)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(root / dir)) {
      const std::string ext = entry.path().extension().string();
      if (ext != ".h" && ext != ".cc") continue;
      std::ifstream f(entry.path());
      int n = 0;
      for (std::string line; std::getline(f, line);) {
        ++n;
        std::smatch m;
        if (!std::regex_search(line, m, include)) continue;
        auto target = layers.find(m[1]);
        if (target == layers.end() || target->second <= level) continue;
        out.push_back(fs::relative(entry.path(), root).string() + ":" + std::to_string(n) + ": " +
                      dir + "/ (layer " + std::to_string(level) + ") includes " + m[1].str() + "/" +
                      m[2].str() + " (layer " + std::to_string(target->second) + ")");
      }
    }
  }
  return out;
}

std::map<std::string, int> project_layers() {
  return read_layers(testing::read_file(testing::source_path("docs/design.md")));
}

TEST(Layering, DesignNoteNamesEveryLibraryFolder) {
  const auto layers = project_layers();
  for (const char* dir : {"common", "platforms", "engine", "workloads", "models", "strategies",
                          "results", "scenario", "sweeps", "cli"})
    EXPECT_TRUE(layers.count(dir)) << dir << "/ is missing from the Layers table";
  EXPECT_LT(layers.at("common"), layers.at("platforms"));
  EXPECT_LT(layers.at("scenario"), layers.at("sweeps"));
  EXPECT_LT(layers.at("sweeps"), layers.at("cli"));
}

TEST(Layering, NoFolderIncludesAHigherLayer) {
  const auto found = upward_includes(testing::source_path(""), project_layers());
  std::string all;
  for (const auto& v : found) all += "\n  " + v;
  EXPECT_TRUE(found.empty()) << "upward includes:" << all;
}

// The check itself: a tree with one upward and one downward include reports exactly the first.
TEST(Layering, CheckFindsAnUpwardInclude) {
  const std::string dir = testing::make_temp_dir("layering");
  testing::write_file(dir + "/low/a.h", "#pragma once\n#include \"low/b.h\"\n");
  testing::write_file(dir + "/low/b.cc", "// x\n  #include \"high/c.h\"\n");
  testing::write_file(dir + "/high/c.h", "#include \"low/a.h\"\n#include <vector>\n");
  const auto layers = read_layers(
      "| layer | folders |\n|---|---|\n| 1 | `low/` | base |\n| 2 | `high/`, `other/` | top |\n");
  ASSERT_EQ(layers.size(), 3u);
  EXPECT_EQ(layers.at("other"), 2);
  const auto found = upward_includes(dir, layers);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0], "low/b.cc:2: low/ (layer 1) includes high/c.h (layer 2)");
}

}  // namespace
}  // namespace orrery
