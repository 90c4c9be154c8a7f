// orrery.run from Python (python/orrery_module.cc, python/orrery/__init__.py): the same numbers
// as `orrery run`, bit for bit, from a file or a dict, overrides that move the answer as worked
// out by hand, and bad input raised as orrery.InputError with the CLI's message. Each script
// prints JSON (floats as repr, which round-trips exactly) for the assertions here.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "results/h5_store.h"
#include "test_util.h"

namespace orrery {
namespace {

using nlohmann::json;
using testing::make_temp_dir;
using testing::read_file;
using testing::run_python;
using testing::run_python_json;
using testing::source_path;

struct Cli {
  int status;
  std::string out;
  std::string err;
};

Cli run_cli(const std::string& args) {
  const std::string dir = make_temp_dir("python_module_cli");
  const std::string cmd = std::string(std::getenv("ORRERY_BIN")) + " " + args + " > " + dir +
                          "/out.txt 2> " + dir + "/err.txt";
  const int raw = std::system(cmd.c_str());
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, read_file(dir + "/out.txt"),
          read_file(dir + "/err.txt")};
}

// The quickstart through orrery.run and through `orrery run -o`: the iteration time, every
// breakdown mean and the header lines agree exactly (the same library code computes both).
TEST(PythonModule, QuickstartMatchesTheCli) {
  REQUIRE_BUILT_PYTHON_PACKAGE();
  const std::string h5 = make_temp_dir("python_module") + "/q.h5";
  const Cli cli = run_cli("run " + source_path("scenarios/quickstart.yaml") + " -o " + h5);
  ASSERT_EQ(cli.status, 0) << cli.err;
  const RunSummary want = read_results_h5(h5).summaries.at(0);

  const json got = run_python_json(R"(
import dataclasses, json, orrery
r = orrery.run("scenarios/quickstart.yaml")
print(json.dumps(dict(dataclasses.asdict(r), iterations_per_s=r.iterations_per_s)))
)");
  EXPECT_EQ(got.value("iteration_time_s", 0.0), want.iteration_time_s);
  EXPECT_EQ(got.value("iterations_per_s", 0.0), 1.0 / want.iteration_time_s);
  const std::pair<const char*, double> columns[] = {{"compute_s", want.compute_s},
                                                    {"memory_bound_s", want.memory_bound_s},
                                                    {"idle_s", want.idle_s},
                                                    {"comm_s", want.comm_s},
                                                    {"exposed_comm_s", want.exposed_comm_s},
                                                    {"io_s", want.io_s},
                                                    {"host_s", want.host_s}};
  for (const auto& [column, value] : columns) {
    ASSERT_TRUE(got["times"].contains(column)) << column;
    EXPECT_EQ(got["times"][column].get<double>(), value) << column;
  }
  // The rows of "Where the time goes", in printed order, and the summary lines as printed.
  ASSERT_EQ(got["time_shares"].size(), 7u);
  EXPECT_EQ(got["time_shares"][0]["label"], "compute");
  EXPECT_EQ(got["time_shares"][3]["stream"], "other");
  EXPECT_EQ(got["time_shares"][1]["part_of_previous"], true);
  EXPECT_EQ(got["name"], "quickstart");
  EXPECT_NE(cli.out.find("Platform   " + got.value("platform", "?") + "\n"), std::string::npos)
      << cli.out;
  EXPECT_NE(cli.out.find("Device     " + got.value("device", "?") + "\n"), std::string::npos);
  EXPECT_EQ(got["num_devices"], 5);
  EXPECT_EQ(got["num_ops"], 152);
  EXPECT_TRUE(got["analytical_s"].is_null());  // a synthetic workload has no PAI estimate
  // Five devices (4 GPUs and the CPU that feeds them); the GPUs' compute rows average to compute_s.
  ASSERT_EQ(got["devices"].size(), 5u);
  double gpu_compute = 0;
  int gpus = 0;
  for (const auto& d : got["devices"])
    if (d["ops"].get<int>() > 0) gpu_compute += d["compute_s"].get<double>(), ++gpus;
  EXPECT_NEAR(gpu_compute / gpus, want.compute_s, 1e-12 * want.compute_s);
  EXPECT_FALSE(got["links"].empty());
  EXPECT_FALSE(got["traffic_by_link_class"].empty());
}

// The quickstart written as a dict (no output section: run writes no files) is the same
// scenario, so it gives the same iteration time.
TEST(PythonModule, DictScenarioMatchesTheFile) {
  REQUIRE_BUILT_PYTHON_PACKAGE();
  const json got = run_python_json(R"(
import json, orrery
scenario = {
    "name": "quickstart",
    "platform": {"preset": "pcie-server", "server": {"gpus": 4}},
    "workload": {"type": "synthetic-dp", "layers": 16, "forward_time": "1ms",
                 "backward_factor": 2, "gradient_bytes": "4MB", "update_time": "200us",
                 "input_bytes": "19.3MB"},
}
from_dict = orrery.run(scenario)
from_file = orrery.run("scenarios/quickstart.yaml")
print(json.dumps({"dict": from_dict.iteration_time_s, "file": from_file.iteration_time_s,
                  "name": from_dict.name, "layers8": orrery.run(scenario, {"workload.layers": 8}).iteration_time_s}))
)");
  EXPECT_EQ(got.value("dict", -1.0), got.value("file", -2.0));
  EXPECT_EQ(got["name"], "quickstart");
  // Fewer layers, less work: an override applies to a dict scenario too.
  EXPECT_LT(got.value("layers8", 1e9), got.value("dict", 0.0));
}

// A step that is all communication: one data-parallel layer of 1 us compute on the quickstart's
// 4 GPUs, whose 400 MB gradient is ring-all-reduced over the PCIe links of one server, and no
// input copies. The ring sends 2 (n-1)/n x 400 MB = 600 MB through each GPU's PCIe link, so at
// 10 GB/s the step takes 60 ms and at 20 GB/s 30 ms, plus microseconds of compute, link
// latency and NCCL's launch and step latencies (< 0.2%). The list form and the dict form of the
// same override give the same answer.
TEST(PythonModule, DoublingTheBandwidthHalvesACommBoundStep) {
  REQUIRE_BUILT_PYTHON_PACKAGE();
  const json got = run_python_json(R"(
import json, orrery
base = {"workload.layers": 1, "workload.forward_time": "1us", "workload.update_time": "1us",
        "workload.gradient_bytes": "400MB", "workload.input_bytes": 0}
slow = orrery.run("scenarios/quickstart.yaml", dict(base, **{"platform.server.pcie.bandwidth": "10GB/s"}))
fast = orrery.run("scenarios/quickstart.yaml", dict(base, **{"platform.server.pcie.bandwidth": "20GB/s"}))
listed = orrery.run("scenarios/quickstart.yaml",
                    ["%s=%s" % kv for kv in base.items()] + ["platform.server.pcie.bandwidth=20GB/s"])
print(json.dumps({"slow": slow.iteration_time_s, "fast": fast.iteration_time_s,
                  "listed": listed.iteration_time_s, "slow_comm": slow.times["comm_s"]}))
)");
  const double slow = got.value("slow", 0.0), fast = got.value("fast", 0.0);
  ASSERT_GT(slow, 0.0);
  EXPECT_GT(got.value("slow_comm", 0.0), 0.99 * slow);  // comm-bound, as the comment says
  EXPECT_NEAR(slow, 0.060, 0.060 * 2e-3);
  EXPECT_NEAR(fast, 0.030, 0.030 * 2e-3);
  EXPECT_EQ(got.value("listed", 0.0), fast);
}

// A misspelt key: orrery.InputError, a ValueError, whose message is what `orrery run` prints
// after "orrery: error: ", naming the key.
TEST(PythonModule, UnknownKeyRaisesInputErrorWithTheCliMessage) {
  REQUIRE_BUILT_PYTHON_PACKAGE();
  const Cli cli =
      run_cli("run " + source_path("scenarios/quickstart.yaml") + " --set workload.layerz=3 -q");
  ASSERT_EQ(cli.status, 2);
  const json got = run_python_json(R"(
import json, orrery
out = {}
try:
    orrery.run(")" + source_path("scenarios/quickstart.yaml") +
                                   R"(", ["workload.layerz=3"])
except ValueError as e:
    out["file"] = [type(e).__name__, isinstance(e, orrery.InputError), str(e)]
try:
    orrery.run({"platform": {"preset": "pcie-server"}, "workload": {"type": "synthetic-dp", "layerz": 3}})
except orrery.InputError as e:
    out["dict"] = str(e)
print(json.dumps(out))
)");
  ASSERT_TRUE(got.contains("file")) << got.dump();
  EXPECT_EQ(got["file"][0], "InputError");
  EXPECT_EQ(got["file"][1], true);
  const std::string message = got["file"][2];
  EXPECT_EQ("orrery: error: " + message + "\n", cli.err);
  EXPECT_NE(message.find("workload.layerz"), std::string::npos) << message;
  ASSERT_TRUE(got.contains("dict")) << got.dump();
  const std::string dict_message = got["dict"];
  EXPECT_NE(dict_message.find("workload.layerz"), std::string::npos) << dict_message;
  EXPECT_NE(dict_message.find("<scenario dict>"), std::string::npos) << dict_message;
}

// Relative files in a dict scenario resolve against base_dir: a graph file next to nothing in
// the current directory is found there, and not found without it.
TEST(PythonModule, DictPathsResolveAgainstBaseDir) {
  REQUIRE_BUILT_PYTHON_PACKAGE();
  const json got = run_python_json(R"(
import json, orrery
scenario = {"platform": {"preset": "pcie-server"},
            "workload": {"type": "graph", "file": "no-such-graph.json"}}
out = {}
for base in [None, "/nonexistent-dir"]:
    try:
        orrery.run(scenario, base_dir=base)
    except orrery.InputError as e:
        out[str(base)] = str(e)
print(json.dumps(out))
)");
  EXPECT_NE(got.value("None", "").find(source_path("no-such-graph.json")), std::string::npos)
      << got.dump();
  EXPECT_NE(got.value("/nonexistent-dir", "").find("/nonexistent-dir/no-such-graph.json"),
            std::string::npos)
      << got.dump();
}

}  // namespace
}  // namespace orrery
