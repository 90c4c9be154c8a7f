// The hostile-input corpus (tests/hostile/, made by make_corpus.py): every case is one orrery
// command on a damaged or absurd input. Each must end with exit status 2 and a message that says
// "error:" and names the file and the item, within 10 s, without a signal, and without leaving a
// new result file (HDF5, CSV, JSON, XML) behind.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "test_util.h"

namespace fs = std::filesystem;

namespace orrery {
namespace {

struct HostileCase {
  std::string id;
  std::vector<std::string> args;
  std::vector<std::string> expect;
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, sep);)
    if (!item.empty()) out.push_back(item);
  return out;
}

std::vector<HostileCase> load_manifest() {
  std::vector<HostileCase> cases;
  std::ifstream in(testing::source_path("tests/hostile/manifest.tsv"));
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    auto cols = split(line, '\t');
    if (cols.size() != 3) continue;
    cases.push_back({cols[0], split(cols[1], ' '), split(cols[2], '|')});
  }
  return cases;
}

std::set<std::string> files_under(const std::string& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (!e.is_directory()) out.insert(fs::relative(e.path(), dir).string());
  return out;
}

bool is_result_file(const std::string& name) {
  for (const char* ext : {".h5", ".csv", ".json", ".xml", ".tmp"})
    if (name.find(ext) != std::string::npos) return true;
  return false;
}

class HostileInput : public ::testing::TestWithParam<HostileCase> {};

TEST_P(HostileInput, ExitsTwoNamingFileAndItem) {
  const char* bin = std::getenv("ORRERY_BIN");
  if (!bin) GTEST_SKIP() << "ORRERY_BIN not set (run through ctest)";
  const HostileCase& c = GetParam();
  const std::string dir = testing::make_temp_dir("hostile");
  fs::copy(testing::source_path("tests/hostile/cases/" + c.id), dir, fs::copy_options::recursive);
  const std::set<std::string> before = files_under(dir);
  const std::string err_path = dir + "/.stderr";

  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (chdir(dir.c_str()) != 0) _exit(126);
    FILE* err = std::freopen(err_path.c_str(), "w", stderr);
    FILE* out = std::freopen("/dev/null", "w", stdout);
    if (!err || !out) _exit(126);
    std::vector<char*> argv{const_cast<char*>(bin)};
    for (const auto& a : c.args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    setpgid(0, 0);  // its own group, so a timeout also ends the simulations it forked
    execv(bin, argv.data());
    _exit(127);
  }
  // A hang guard, not a timing assertion: 10 s is two orders of magnitude above any case.
  int status = 0;
  bool finished = false;
  for (auto t0 = std::chrono::steady_clock::now();
       std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10);) {
    if (waitpid(pid, &status, WNOHANG) == pid) {
      finished = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (!finished) {
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
  }
  std::ifstream ein(err_path);
  std::string err((std::istreambuf_iterator<char>(ein)), std::istreambuf_iterator<char>());
  fs::remove(err_path);
  ASSERT_TRUE(finished) << c.id << ": still running after 10 s\n" << err;
  ASSERT_FALSE(WIFSIGNALED(status)) << c.id << ": killed by signal " << WTERMSIG(status) << "\n"
                                    << err;
  EXPECT_EQ(WEXITSTATUS(status), 2) << c.id << "\n" << err;
  EXPECT_NE(err.find("error:"), std::string::npos) << c.id << "\n" << err;
  for (const auto& e : c.expect)
    EXPECT_NE(err.find(e), std::string::npos) << c.id << ": message lacks \"" << e << "\"\n" << err;
  for (const auto& f : files_under(dir))
    if (!before.count(f) && is_result_file(f)) ADD_FAILURE() << c.id << ": left " << f;
}

INSTANTIATE_TEST_SUITE_P(Corpus, HostileInput, ::testing::ValuesIn(load_manifest()),
                         [](const ::testing::TestParamInfo<HostileCase>& info) {
                           std::string n = info.param.id;
                           for (char& ch : n)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

TEST(HostileCorpus, HasAtLeastFiveHundredCasesOverEveryFormat) {
  auto cases = load_manifest();
  EXPECT_GE(cases.size(), 500u);
  std::set<std::string> families;
  for (const auto& c : cases) families.insert(c.id.substr(0, c.id.find('-')));
  for (const char* f : {"yaml", "sweep", "plan", "platform", "xml", "graph", "model", "chakra",
                        "profile", "report"})
    EXPECT_TRUE(families.count(f)) << "no case of the " << f << " family";
}

}  // namespace
}  // namespace orrery
