// workloads/op_query.h and models/cost_table.h: ops named as the measured kernel data names them,
// with hand-counted FLOPs and bytes, and `orrery cost` on one op and on a CSV.
#include "workloads/op_query.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "common/errors.h"
#include "models/cost_model.h"
#include "models/cost_table.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

std::string error_of(const std::string& op, const std::map<std::string, std::string>& fields) {
  try {
    query_op(op, fields, DType::kFP32, "q");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(OpQuery, LinearIsAMatmulOverTheBatchedInput) {
  ModelOp m =
      query_op("linear", {{"B", "2"}, {"M", "3"}, {"N", "4"}, {"K", "5"}}, DType::kFP32, "q");
  EXPECT_EQ(m.type, "matmul");
  EXPECT_DOUBLE_EQ(m.flops, 2.0 * 2 * 3 * 4 * 5);                    // 2 B M N K
  EXPECT_DOUBLE_EQ(m.bytes, (2 * 3 * 5 + 5 * 4 + 2 * 3 * 4) * 4.0);  // a, the weights, the output
  // bmm has one weight matrix per batch entry.
  ModelOp b = query_op("bmm", {{"B", "2"}, {"M", "3"}, {"N", "4"}, {"K", "5"}}, DType::kFP16, "q");
  EXPECT_DOUBLE_EQ(b.flops, 240);
  EXPECT_DOUBLE_EQ(b.bytes, (30 + 40 + 24) * 2.0);
  // The op-graph form of the same linear gives the same counts.
  ModelOp g = query_op("matmul", {{"in", "2x3x5;5x4"}, {"out", "2x3x4"}}, DType::kFP32, "q");
  EXPECT_DOUBLE_EQ(g.flops, m.flops);
  EXPECT_DOUBLE_EQ(g.bytes, m.bytes);
}

TEST(OpQuery, ConvOutputSizeFromStrideAndPadding) {
  // 1 x 3 x 5 x 5 input, 8 filters of 3 x 3, stride 1, padding 1: a 1 x 8 x 5 x 5 output whose
  // 200 elements each take 3 x 3 x 3 multiply-adds.
  ModelOp c = query_op("conv",
                       {{"B", "1"},
                        {"in_channels", "3"},
                        {"out_channels", "8"},
                        {"kernel_size", "3"},
                        {"input_size", "5"},
                        {"stride", "1"},
                        {"padding", "1"}},
                       DType::kFP32, "q");
  ASSERT_EQ(c.output, (Shape{1, 8, 5, 5}));
  EXPECT_DOUBLE_EQ(c.flops, 2.0 * 200 * 27);
  EXPECT_DOUBLE_EQ(c.bytes, (75 + 216 + 200) * 4.0);
  // Stride 2 without padding: (5 - 3) / 2 + 1 = 2.
  ModelOp s = query_op("conv2d",
                       {{"B", "1"},
                        {"in_channels", "3"},
                        {"out_channels", "8"},
                        {"kernel_size", "3"},
                        {"input_size", "5"},
                        {"stride", "2"},
                        {"padding", "0"}},
                       DType::kFP32, "q");
  EXPECT_EQ(s.output, (Shape{1, 8, 2, 2}));
}

TEST(OpQuery, ElementwiseWithATensorOrAScalar) {
  ModelOp add = query_op("add", {{"B", "10"}, {"H", "100"}}, DType::kFP32, "q");
  ModelOp addu = query_op("addu", {{"B", "10"}, {"H", "100"}}, DType::kFP32, "q");
  EXPECT_DOUBLE_EQ(add.bytes, 3 * 1000 * 4.0);   // two inputs and the output
  EXPECT_DOUBLE_EQ(addu.bytes, 2 * 1000 * 4.0);  // one input and the output
  ModelOp ln = query_op("ln", {{"B", "10"}, {"H", "100"}}, DType::kFP32, "q");
  EXPECT_EQ(ln.type, "layernorm");
  EXPECT_EQ(query_op("powu", {{"B", "1"}, {"H", "8"}}, DType::kFP32, "q").type, "pow");
}

TEST(OpQuery, BadQueriesNameTheProblem) {
  std::string unknown = error_of("lienar", {});
  EXPECT_NE(unknown.find("unknown op \"lienar\" (did you mean \"linear\"?)"), std::string::npos)
      << unknown;
  EXPECT_NE(unknown.find("known: add, addu, bmm"), std::string::npos) << unknown;
  EXPECT_NE(error_of("linear", {{"B", "1"}, {"M", "2"}, {"N", "3"}}).find("q: K is required"),
            std::string::npos);
  EXPECT_NE(error_of("add", {{"B", "1"}, {"H", "-3"}}).find("H: expected a non-negative integer"),
            std::string::npos);
  EXPECT_NE(error_of("conv", {{"B", "1"},
                              {"in_channels", "3"},
                              {"out_channels", "8"},
                              {"kernel_size", "7"},
                              {"input_size", "2"},
                              {"stride", "1"},
                              {"padding", "0"}})
                .find("kernel_size 7 is larger than the padded input (2)"),
            std::string::npos);
  EXPECT_NE(error_of("matmul", {{"in", "2x3"}}).find("q:"), std::string::npos);
}

TEST(CostTable, PricesEveryRowAndKeepsItsColumns) {
  CostModelOptions roofline;
  roofline.model = AnalyticModel::kRoofline;  // its hand-computed times
  const CostModel cost(roofline);
  const std::string csv =
      "op,latency_ms,device,kernel,B,H\n"
      "add,0.02,Tesla-T4,\"void k<4, f>(int)\",1000,1000\n"
      "relu,1.0,V100,x,10,10\n";
  CostTable t = price_cost_table(csv, "ops.csv", {}, cost);
  ASSERT_EQ(t.rows, 2u);
  std::istringstream lines(t.csv);
  std::string header, first, second;
  std::getline(lines, header);
  std::getline(lines, first);
  std::getline(lines, second);
  EXPECT_EQ(header, "op,latency_ms,device,kernel,B,H,predicted_ms");
  // add of two 10^6-element fp32 tensors on a T4: 12 MB at 70% of its 320 GB/s.
  const double add_ms = 12e6 / (0.7 * 320e9) * 1e3;
  EXPECT_EQ(first.rfind("add,0.02,Tesla-T4,\"void k<4, f>(int)\",1000,1000,", 0), 0u) << first;
  EXPECT_NEAR(std::stod(first.substr(first.rfind(',') + 1)), add_ms, 1e-5 * add_ms);
  ASSERT_EQ(t.relative_errors.size(), 2u);
  EXPECT_NEAR(t.relative_errors[0], std::fabs(add_ms - 0.02) / 0.02, 1e-4);
  // One device for every row overrides the column.
  CostTableOptions on_v100;
  on_v100.device = "V100-SXM2";
  CostTable v = price_cost_table(csv, "ops.csv", on_v100, cost);
  EXPECT_NE(v.csv, t.csv);
}

TEST(CostTable, BadTablesNameLineAndColumn) {
  const CostModel cost;
  auto err = [&](const std::string& csv) {
    try {
      price_cost_table(csv, "ops.csv", {}, cost);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(err("B,H\n1,2\n").find("ops.csv:1: the header has no \"op\" column"),
            std::string::npos);
  EXPECT_NE(err("op,B,H\nadd,1,2\n").find("no \"device\" column"), std::string::npos);
  EXPECT_NE(err("op,device,B,H\nadd,V100,1\n").find("ops.csv:2: 3 fields, the header has 4"),
            std::string::npos);
  EXPECT_NE(err("op,device,B,H\nadd,V200,1,2\n").find("ops.csv:2: device:"), std::string::npos);
  EXPECT_NE(err("op,device,B,H\nadd,V100,1,x\n").find("ops.csv:2: H: expected"), std::string::npos);
}

TEST(CostCommand, OneOpPrintsTimePathAndSource) {
  const std::string bin = testing::orrery_bin();
  if (bin.empty()) GTEST_SKIP() << "ORRERY_BIN not set (run through ctest)";
  testing::ShellResult r = testing::run_shell(bin + " cost add B=1000 H=1000 --device V100-SXM2");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("add B=1000 H=1000 on V100-SXM2, fp32"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("(kernel-model: stream: memory-bound at"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("bound      memory"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("roofline   "), std::string::npos) << r.output;
  testing::ShellResult roof =
      testing::run_shell(bin + " cost add B=1000 H=1000 --device V100-SXM2 --model roofline");
  ASSERT_EQ(roof.status, 0) << roof.output;
  EXPECT_NE(roof.output.find("(analytic: memory-bound)"), std::string::npos) << roof.output;
  // A GEMM shows the path the kernel model took: tiles, waves, precision.
  testing::ShellResult gemm =
      testing::run_shell(bin + " cost linear B=1 M=1024 N=2560 K=2560 --device H100 --dtype bf16");
  ASSERT_EQ(gemm.status, 0) << gemm.output;
  EXPECT_NE(gemm.output.find("bf16 on Tensor Cores"), std::string::npos) << gemm.output;
  EXPECT_NE(gemm.output.find("waves of 132 SMs"), std::string::npos) << gemm.output;
  testing::ShellResult coef =
      testing::run_shell(bin + " cost add B=1 H=1 --coefficients /no/such.yaml");
  EXPECT_EQ(coef.status, 2) << coef.output;
  EXPECT_NE(coef.output.find("/no/such.yaml"), std::string::npos) << coef.output;
  testing::ShellResult bad = testing::run_shell(bin + " cost add B=1 X=2");
  EXPECT_EQ(bad.status, 2) << bad.output;
  EXPECT_NE(bad.output.find("unknown field \"X\""), std::string::npos) << bad.output;
  const std::string dir = testing::make_temp_dir("cost");
  testing::write_file(dir + "/ops.csv", "op,B,M,N,K\nlinear,1,1024,2560,2560\n");
  testing::ShellResult csv = testing::run_shell(bin + " cost --csv " + dir + "/ops.csv --device " +
                                                "H100 -o " + dir + "/out.csv");
  ASSERT_EQ(csv.status, 0) << csv.output;
  EXPECT_EQ(testing::read_file(dir + "/out.csv").rfind("op,B,M,N,K,predicted_ms\nlinear,1,", 0),
            0u);
}

// `orrery cost --csv` on the softmax rows of the shared kernel data: every row is priced and
// compared with its latency_ms.
TEST(CostCommand, CsvOfTheSharedKernelDataIsPricedAndCompared) {
  const std::string bin = testing::orrery_bin();
  if (bin.empty()) GTEST_SKIP() << "ORRERY_BIN not set (run through ctest)";
  const std::string dir = testing::make_temp_dir("cost");
  testing::ShellResult r = testing::run_shell(
      "zcat " + testing::shared_path("data/gpu-kernels/softmax.csv.gz") + " > " + dir +
      "/softmax.csv && " + bin + " cost --csv " + dir + "/softmax.csv -o " + dir + "/out.csv");
  ASSERT_EQ(r.status, 0) << r.output;
  // softmax.csv.gz holds 8,750 rows: 1,750 per GPU.
  EXPECT_NE(r.output.find("8750 rows priced"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("against latency_ms of 8750 rows: median error"), std::string::npos)
      << r.output;
}

}  // namespace
}  // namespace orrery
