#include "tests/test_util.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <vector>

#include "common/errors.h"
#include "engine/run_result_io.h"
#include "platforms/platform_spec.h"
#include "results/h5_store.h"
#include "sweeps/journal.h"
#include "sweeps/sweep_h5.h"

namespace orrery::testing {
namespace {

// The directories this test process made, removed when it exits. Only by the process that made
// them: a forked child that exits normally must not delete its parent's files.
class TempDirs {
 public:
  ~TempDirs() {
    if (getpid() != owner_ || std::getenv("ORRERY_KEEP_TEST_DIRS") != nullptr) return;
    std::error_code ignored;
    for (const auto& dir : dirs_) std::filesystem::remove_all(dir, ignored);
  }
  void add(const std::filesystem::path& dir) {
    std::lock_guard<std::mutex> lock(mu_);
    dirs_.push_back(dir);
  }

 private:
  pid_t owner_ = getpid();
  std::mutex mu_;
  std::vector<std::filesystem::path> dirs_;
};

TempDirs& temp_dirs() {
  static TempDirs dirs;
  return dirs;
}

}  // namespace

std::string make_temp_dir(const std::string& tag) {
  static std::atomic<int> counter{0};
  auto dir = std::filesystem::temp_directory_path() /
             ("orrery_" + tag + "_" + std::to_string(getpid()) + "_" + std::to_string(counter++));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  temp_dirs().add(dir);
  return dir.string();
}

void write_file(const std::string& path, const std::string& text) {
  auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  std::ofstream(path) << text;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<int> child_pids(int parent) {
  std::vector<int> pids;
  DIR* proc = ::opendir("/proc");
  if (!proc) return pids;
  while (dirent* e = ::readdir(proc)) {
    int pid = std::atoi(e->d_name);
    if (pid <= 0) continue;
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so read after the last
    // ')'.
    std::string stat = read_file("/proc/" + std::string(e->d_name) + "/stat");
    auto close = stat.rfind(')');
    char state = 0;
    int ppid = 0;
    if (close != std::string::npos &&
        std::sscanf(stat.c_str() + close + 1, " %c %d", &state, &ppid) == 2 && ppid == parent)
      pids.push_back(pid);
  }
  ::closedir(proc);
  return pids;
}

std::set<int64_t> journal_points(const std::string& path) {
  std::set<int64_t> points;
  std::string copy = path + ".copy";
  std::error_code ec;
  if (!std::filesystem::copy_file(path, copy, std::filesystem::copy_options::overwrite_existing,
                                  ec))
    return points;
  std::vector<PointOutcome> loaded;
  try {
    Journal journal(copy, &loaded);
  } catch (const std::exception&) {
    return points;  // caught mid-header
  }
  for (const auto& o : loaded) points.insert(o.index);
  return points;
}

std::string source_path(const std::string& relative) {
  return std::string(ORRERY_SOURCE_DIR) + "/" + relative;
}

std::string shared_path(const std::string& relative) {
  return (std::filesystem::path(ORRERY_SOURCE_DIR).parent_path() / "shared" / relative).string();
}

ShellResult run_shell(const std::string& command) {
  ShellResult r;
  const std::string log = make_temp_dir("shell") + "/output.txt";
  const int s = std::system(("( " + command + " ) >" + log + " 2>&1").c_str());
  r.status = WIFEXITED(s) ? WEXITSTATUS(s) : -1;
  r.output = read_file(log);
  return r;
}

namespace {

// Expects the text of `doc` between the line starting `begin` and the line `<!-- tag:end -->`
// to be `output`; `regenerate` says how to make it so.
void expect_doc_block(const std::string& doc, const std::string& begin, const std::string& tag,
                      const std::string& output, const std::string& regenerate) {
  const std::string text = read_file(source_path(doc));
  const size_t from = text.find(begin);
  const size_t body = from == std::string::npos ? from : text.find('\n', from);
  const size_t to = body == std::string::npos ? body : text.find("<!-- " + tag + ":end -->", body);
  EXPECT_NE(from, std::string::npos) << doc << " has no " << begin;
  EXPECT_NE(to, std::string::npos) << doc << " has no end of " << tag;
  if (to != std::string::npos) {
    EXPECT_EQ(text.substr(body + 1, to - body - 1), output) << "regenerate: " << regenerate;
  }
}

}  // namespace

std::string expect_doc_block_is_script_output(const std::string& script, const std::string& doc,
                                              const std::string& tag) {
  const ShellResult r = run_shell("/usr/bin/python3 " + source_path("scripts/" + script) +
                                  " --orrery " + orrery_bin() + " 2>/dev/null");
  EXPECT_EQ(r.status, 0) << r.output;
  expect_doc_block(doc, "<!-- " + tag + ":begin (scripts/" + script + " --update-doc) -->\n", tag,
                   r.output, "/usr/bin/python3 scripts/" + script + " --update-doc " + doc);
  return r.output;
}

std::string expect_doc_block_is_command_output(const std::string& args, const std::string& doc,
                                               const std::string& tag) {
  const ShellResult r =
      run_shell("cd '" + source_path(".") + "' && " + orrery_bin() + " " + args + " 2>/dev/null");
  EXPECT_EQ(r.status, 0) << r.output;
  expect_doc_block(doc, "<!-- " + tag + ":begin", tag, r.output,
                   "orrery " + args + " --update-doc " + doc + " --block " + tag);
  return r.output;
}

std::string python_package_dir() {
  const char* dir = std::getenv("ORRERY_PYTHONPATH");
  return dir ? dir : "";
}

PythonRun run_python(const std::string& script) {
  const std::string dir = make_temp_dir("python");
  write_file(dir + "/script.py", script);
  const std::string cmd = "cd '" + source_path(".") + "' && PYTHONPATH='" + python_package_dir() +
                          "' /usr/bin/python3 " + dir + "/script.py > " + dir + "/out.txt 2> " +
                          dir + "/err.txt";
  const int raw = std::system(cmd.c_str());
  PythonRun r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  r.out = read_file(dir + "/out.txt");
  r.err = read_file(dir + "/err.txt");
  return r;
}

std::string orrery_bin() {
  const char* b = std::getenv("ORRERY_BIN");
  return b ? b : "";
}

const char* const kSmallSweepScenario = R"(name: small
platform:
  preset: pcie-server
  server: {gpus: 4}
workload:
  type: synthetic-dp
  layers: 4
  forward_time: 1ms
  gradient_bytes: 2MB
sweep:
  grid:
    platform.server.pcie.bandwidth: [10GB/s, 50GB/s]
    workload.gradient_bytes: [1MB, 4MB, 16MB]
  named:
    depth: {shallow: {workload.layers: 2}, deep: {workload.layers: 6}}
)";

nlohmann::json run_python_json(const std::string& script) {
  const PythonRun r = run_python(script);
  EXPECT_EQ(r.status, 0) << r.err << r.out;
  try {
    return nlohmann::json::parse(r.out);
  } catch (const nlohmann::json::exception& e) {
    ADD_FAILURE() << "script printed no JSON: " << e.what() << "\n" << r.out << r.err;
    return nlohmann::json::object();
  }
}

BenchPlatform bench_platform(const std::string& yaml) {
  BenchPlatform p;
  p.source.topology = build_topology(parse_platform_spec(YAML::Load(yaml), "test"));
  for (const auto& h : gpu_hosts(p.source.topology))
    p.ranks.push_back({h, h.substr(0, h.find('_'))});
  return p;
}

ModelOp model_op(const std::string& name, const std::string& type, std::vector<Shape> inputs,
                 Shape output, std::vector<int> deps, const std::string& layer) {
  ModelOp op;
  op.name = name;
  op.type = type;
  op.layer = layer;
  op.inputs = std::move(inputs);
  op.output = std::move(output);
  op.deps = std::move(deps);
  return op;
}

const ModelOp& model_op_named(const ModelGraph& g, const std::string& name) {
  for (const auto& op : g.ops)
    if (op.name == name) return op;
  throw std::runtime_error("no op " + name);
}

PlatformSource star_platform(int n, double bandwidth, double latency) {
  PlatformSource p;
  p.topology.name = "star";
  p.topology.routers.push_back("sw");
  for (int i = 0; i < n; ++i) {
    std::string h = "g" + std::to_string(i);
    p.topology.hosts.push_back({h, 1e12, 1, "gpu", {}});
    p.topology.links.push_back({h + "_link", bandwidth, latency, true, "test"});
    p.topology.edges.push_back({h, "sw", h + "_link"});
  }
  return p;
}

void expect_same_sweep_results(const std::string& a_path, const std::string& b_path) {
  LoadedResults a = read_results_h5(a_path), b = read_results_h5(b_path);
  EXPECT_EQ(a.meta.scenario_text, b.meta.scenario_text);
  EXPECT_EQ(a.meta.orrery_version, b.meta.orrery_version);
  EXPECT_EQ(a.meta.platform_description, b.meta.platform_description);
  ASSERT_EQ(a.runs.size(), b.runs.size());
  for (size_t i = 0; i < a.runs.size(); ++i) {
    EXPECT_EQ(a.runs[i].name, b.runs[i].name);
    EXPECT_EQ(a.runs[i].params, b.runs[i].params) << "run " << i;
    RunResult ra = a.runs[i].result, rb = b.runs[i].result;
    ra.wall_seconds = rb.wall_seconds = 0;
    EXPECT_EQ(serialize_run_result(ra), serialize_run_result(rb)) << "run " << i;
    EXPECT_EQ(a.summaries[i].iteration_time_s, b.summaries[i].iteration_time_s);
  }
  SweepFileStatus sa = read_sweep_status(a_path), sb = read_sweep_status(b_path);
  EXPECT_EQ(sa.points_total, sb.points_total);
  EXPECT_EQ(sa.points_done, sb.points_done);
  EXPECT_EQ(sa.points_failed, sb.points_failed);
  EXPECT_EQ(sa.complete, sb.complete);
}

std::string input_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no InputError)";
}

}  // namespace orrery::testing
