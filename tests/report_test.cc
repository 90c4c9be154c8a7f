// `orrery report`: the table and the CSV of a results file, from a sweep or a single run.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <sstream>

#include "sweeps/report_table.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

using testing::make_temp_dir;
using testing::read_file;

RunRecord record(int index, const std::string& bw, const std::string& model, double makespan,
                 const std::string& error = "") {
  RunRecord r;
  r.name = "demo/" + std::to_string(index);
  r.params = {{"sweep.index", std::to_string(index)},
              {"sweep.hash", "00000000000000a" + std::to_string(index)},
              {"sweep.status", error.empty() ? "ok" : "failed"},
              {"sweep.error", error},
              {"platform.server.nic.bandwidth", bw},
              {"gpu", model},
              {"workload.layers", "8"}};
  if (error.empty()) {
    r.result.makespan = makespan;
    DeviceStats d;
    d.name = "gpu0";
    d.busy[0] = makespan * 0.75;
    d.busy[1] = makespan * 0.5;
    d.idle = makespan * 0.25;
    d.ops = 10;
    r.result.devices.push_back(d);
    r.result.activities = 10;
    r.result.analytical_seconds = makespan * 1.5;
  }
  return r;
}

std::string write_demo(const std::string& dir, bool complete) {
  std::string path = dir + "/demo.h5";
  std::vector<RunRecord> runs = {
      record(0, "25Gbps", "V100", 0.020), record(1, "100Gbps", "V100", 0.010),
      record(2, "100Gbps", "A100, \"big\"", 0, "simulation crashed: killed by SIGABRT (Aborted)")};
  SweepFileStatus st;
  st.points_total = complete ? 3 : 5;
  st.points_done = 3;
  st.points_failed = 1;
  st.complete = complete;
  write_sweep_h5(path, {"name: demo\n", "0.1.0", "pcie-server: test", "test", "", 0.0, 0.0, "", {}},
                 runs, st);
  return path;
}

TEST(Report, TableShowsVaryingParametersStatusAndErrors) {
  auto dir = make_temp_dir("report");
  std::string path = write_demo(dir, false);
  std::ostringstream out;
  write_report_table(out, read_results_h5(path), read_sweep_status(path), {});
  std::string t = out.str();
  EXPECT_NE(t.find("3 run(s) of demo"), std::string::npos) << t;
  EXPECT_NE(t.find("3/5 points done, 1 failed  (INCOMPLETE"), std::string::npos) << t;
  EXPECT_NE(t.find(" ...server.nic.bandwidth "), std::string::npos) << t;  // keys keep their end
  EXPECT_EQ(t.find("workload.layers"), std::string::npos) << t;  // equal everywhere: hidden
  EXPECT_NE(t.find("20 ms"), std::string::npos) << t;
  EXPECT_NE(t.find("analytic"), std::string::npos) << t;
  EXPECT_NE(t.find("  30 ms"), std::string::npos) << t;  // run 0's analytical estimate
  EXPECT_NE(t.find("FAILED"), std::string::npos) << t;
  EXPECT_NE(t.find("2: simulation crashed: killed by SIGABRT"), std::string::npos) << t;
  std::ostringstream all;
  ReportOptions o;
  o.all_params = true;
  write_report_table(all, read_results_h5(path), read_sweep_status(path), o);
  EXPECT_NE(all.str().find("workload.layers"), std::string::npos);
}

// A point's likely range is one column beside its iteration time, not four parameter columns;
// the CSV keeps the metrics as they are.
TEST(Report, LikelyRangeBesideTheIterationTime) {
  auto dir = make_temp_dir("report");
  const std::string path = dir + "/likely.h5";
  std::vector<RunRecord> runs = {record(0, "25Gbps", "V100", 0.020),
                                 record(1, "100Gbps", "V100", 0.010)};
  runs[0].params["likely.low_s"] = "0.018";
  runs[0].params["likely.high_s"] = "0.026";
  runs[0].params["likely.runs"] = "12";
  SweepFileStatus st;
  st.points_total = st.points_done = 2;
  st.complete = true;
  write_sweep_h5(path, {"name: demo\n", "0.1.0", "pcie-server: test", "test", "", 0.0, 0.0, "", {}},
                 runs, st);
  std::ostringstream out;
  write_report_table(out, read_results_h5(path), read_sweep_status(path), {});
  const std::string t = out.str();
  EXPECT_NE(t.find("likely"), std::string::npos) << t;
  EXPECT_NE(t.find("18 ms-26 ms"), std::string::npos) << t;
  EXPECT_EQ(t.find("likely.runs"), std::string::npos) << t;
  EXPECT_EQ(t.find("likely.low_s"), std::string::npos) << t;
  std::ostringstream csv;
  write_report_csv(csv, read_results_h5(path));
  EXPECT_NE(csv.str().find("likely.low_s"), std::string::npos);
}

TEST(Report, CsvHasEveryRunAndParameterAtFullPrecision) {
  auto dir = make_temp_dir("report");
  std::string path = write_demo(dir, true);
  std::ostringstream out;
  write_report_csv(out, read_results_h5(path));
  std::string csv = out.str();
  std::istringstream lines(csv);
  std::string head, row0, row1, row2;
  std::getline(lines, head);
  std::getline(lines, row0);
  std::getline(lines, row1);
  std::getline(lines, row2);
  EXPECT_EQ(head,
            "index,name,gpu,platform.server.nic.bandwidth,workload.layers,status,error,"
            "iteration_time_s,iterations_per_s,compute_s,comm_s,io_s,host_s,idle_s,"
            "exposed_comm_s,memory_bound_s,activities,wall_s,analytical_s");
  // The columns after the parameters are the ones docs/sweeps.md lists, in its order.
  const std::string doc = read_file(testing::source_path("docs/sweeps.md"));
  const auto at = doc.find("The CSV's columns after the parameters:");
  ASSERT_NE(at, std::string::npos);
  std::string listed;
  for (size_t p = doc.find('`', at), end = doc.find("\n\n", at); p < end;
       p = doc.find('`', doc.find('`', p + 1) + 1))
    listed += (listed.empty() ? "" : ",") + doc.substr(p + 1, doc.find('`', p + 1) - p - 1);
  EXPECT_EQ(head.substr(head.find("status")), listed);
  EXPECT_EQ(row0.substr(0, 35), "0,demo/0,V100,25Gbps,8,ok,,0.02,50,") << row0;
  EXPECT_NE(row1.find(",0.01,100,"), std::string::npos) << row1;
  EXPECT_EQ(row1.substr(row1.rfind(',')), ",0.015") << row1;  // analytical_s
  // Quoting: a comma and quotes inside a value.
  EXPECT_NE(row2.find("\"A100, \"\"big\"\"\""), std::string::npos) << row2;
  EXPECT_NE(row2.find(",failed,simulation crashed"), std::string::npos) << row2;
}

TEST(Report, CommandReadsAFileAndWritesCsv) {
  const char* bin = std::getenv("ORRERY_BIN");
  if (!bin) GTEST_SKIP() << "ORRERY_BIN not set (run through ctest)";
  auto dir = make_temp_dir("report");
  std::string path = write_demo(dir, true);
  std::string cmd =
      std::string(bin) + " report " + path + " --csv " + dir + "/r.csv >" + dir + "/out.txt 2>&1";
  int s = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(s) && WEXITSTATUS(s) == 0) << read_file(dir + "/out.txt");
  EXPECT_NE(read_file(dir + "/out.txt").find("3/3 points done"), std::string::npos);
  EXPECT_NE(read_file(dir + "/r.csv").find("demo/2"), std::string::npos);
  // Not a results file: bad input, exit status 2.
  s = std::system((std::string(bin) + " report " + dir + "/r.csv >/dev/null 2>&1").c_str());
  EXPECT_TRUE(WIFEXITED(s) && WEXITSTATUS(s) == 2);
}

}  // namespace
}  // namespace orrery
