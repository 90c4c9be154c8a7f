// Every Python module that scripts/, the tests and the docs' examples import is installed by
// scripts/setup: the modules are collected at test time by scanning the files
// (scripts/python_imports.py), each is imported with /usr/bin/python3, and each must have its
// Debian package in scripts/setup. A new import without a setup line fails here on every
// machine, not only on a fresh one.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "test_util.h"

namespace {

using orrery::testing::make_temp_dir;
using orrery::testing::read_file;
using orrery::testing::source_path;
using orrery::testing::write_file;

struct Command {
  int status;
  std::string output;
};

Command run(const std::string& cmd) {
  const std::string dir = make_temp_dir("python_imports");
  const int raw = std::system((cmd + " > " + dir + "/out.txt 2>&1").c_str());
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, read_file(dir + "/out.txt")};
}

// Module -> the files that import it, from the scanner's "MODULE<TAB>FILE,FILE" lines.
std::map<std::string, std::string> scan(const std::string& root) {
  Command c =
      run("/usr/bin/python3 " + source_path("scripts/python_imports.py") + " --root " + root);
  EXPECT_EQ(c.status, 0) << c.output;
  std::map<std::string, std::string> modules;
  std::istringstream lines(c.output);
  for (std::string line; std::getline(lines, line);) {
    const auto tab = line.find('\t');
    if (tab != std::string::npos) modules[line.substr(0, tab)] = line.substr(tab + 1);
  }
  return modules;
}

// Module -> Debian package, from scripts/setup's "python3-foo   import foo: why" lines.
std::map<std::string, std::string> setup_packages() {
  std::map<std::string, std::string> packages;
  std::istringstream lines(read_file(source_path("scripts/setup")));
  const std::regex line_re(R"(^(python3-[a-z0-9.+-]+)\s+import ([A-Za-z0-9_]+))");
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_search(line, m, line_re)) packages[m[2]] = m[1];
  }
  return packages;
}

// The scanner reads imports as Python does: docstrings, stdlib, the scripts' own modules and the
// packages in python/ do not count; test raw strings, `python3 -c` one-liners and ```python blocks
// of the docs do.
TEST(PythonImports, ScannerCountsRealImportsOnly) {
  const std::string root = make_temp_dir("python_imports_tree");
  write_file(root + "/scripts/helper.py", "import os\n");
  // Plain strings, not raw ones, so that scanning this file finds none of these fake imports.
  write_file(root + "/scripts/tool.py",
             "\"\"\"Run `orrery profile\nimport rows.csv` afterwards.\"\"\"\n"
             "import json, helper\nfrom alpha.sub import thing\ndef f():\n    import beta as b\n");
  write_file(root + "/scripts/runner", "#!/usr/bin/python3\nimport gamma\n");
  write_file(root + "/scripts/notes.txt", "import nope\n");
  write_file(root + "/tests/x_test.cc",
             "write_file(dir + \"/r.py\", R\"(import sys, delta\n)\");\n"
             "std::system(\"/usr/bin/python3"  // split, or the scan of this file would see it
             " -c 'import epsilon, zeta' > /dev/null\");\n"
             "const char* yaml = R\"(model: resnet50\n)\";\n");
  write_file(root + "/docs/guide.md",
             "Read it:\n\n```python\nimport eta\nimport ownpkg\n```\n\n```sh\nimport nope\n```\n");
  write_file(root + "/python/ownpkg/__init__.py", "");  // the project's own package (python/)
  const auto found = scan(root);
  std::set<std::string> names;
  for (const auto& [name, files] : found) names.insert(name);
  EXPECT_EQ(names,
            (std::set<std::string>{"alpha", "beta", "delta", "epsilon", "eta", "gamma", "zeta"}));
  EXPECT_EQ(found.count("alpha") ? found.at("alpha") : "", "scripts/tool.py");
  EXPECT_EQ(found.count("delta") ? found.at("delta") : "", "tests/x_test.cc");
  EXPECT_EQ(found.count("eta") ? found.at("eta") : "", "docs/guide.md");
}

// The scan of this repository finds the modules we know are used, so an empty scan (a broken
// scanner) cannot pass the tests below by finding nothing.
TEST(PythonImports, ScanFindsTheKnownModules) {
  const auto found = scan(source_path("."));
  for (const char* m : {"h5py", "matplotlib", "torch", "torchvision"})
    EXPECT_EQ(found.count(m), 1u) << m << " not found by scripts/python_imports.py";
}

TEST(PythonImports, EveryImportedModuleHasAPackageInSetup) {
  const auto packages = setup_packages();
  for (const auto& [module, files] : scan(source_path(".")))
    EXPECT_EQ(packages.count(module), 1u)
        << "module '" << module << "' (imported by " << files
        << ") has no package in scripts/setup: add a line 'python3-<package>  import " << module
        << ": <who needs it>' to its table";
}

TEST(PythonImports, EveryImportedModuleImports) {
  const auto packages = setup_packages();
  for (const auto& [module, files] : scan(source_path("."))) {
    Command c = run("/usr/bin/python3 -c 'import " + module + "'");
    const std::string package =
        packages.count(module) ? packages.at(module) : "python3-" + module + " (not in setup)";
    EXPECT_EQ(c.status, 0) << "/usr/bin/python3 cannot import '" << module << "' (used by " << files
                           << "): install the Debian package " << package
                           << " (scripts/setup does)\n"
                           << c.output;
  }
}

TEST(PythonImports, SetupCheckFindsNothingMissing) {
  Command c = run(source_path("scripts/setup") + " --check");
  EXPECT_EQ(c.status, 0) << "scripts/setup --check reports missing packages; run scripts/setup\n"
                         << c.output;
}

}  // namespace
