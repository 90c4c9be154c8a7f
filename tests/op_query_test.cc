// workloads/op_query.h and models/cost_table.h: ops named as the measured kernel data names them,
// with hand-counted FLOPs and bytes, and `orrery cost` on one op and on a CSV.
#include "workloads/op_query.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "common/errors.h"
#include "common/quantile.h"
#include "models/cost_model.h"
#include "models/cost_table.h"
#include "platforms/device_spec.h"
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
  EXPECT_NE(unknown.find("known: add, addu, attention, attention_bwd, bmm"), std::string::npos)
      << unknown;
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

// The last column of each data line of a priced CSV, in milliseconds.
std::vector<double> predicted_ms(const CostTable& t) {
  std::vector<double> out;
  std::istringstream lines(t.csv);
  std::string line;
  std::getline(lines, line);  // the header
  while (std::getline(lines, line)) out.push_back(std::stod(line.substr(line.rfind(',') + 1)));
  return out;
}

// Quantiles interpolate between order statistics (numpy's default), so a small file's median
// and 90th percentile are not simply its lower neighbours. By hand, with h = q (n - 1):
//   {0.3}: h = 0 for every q -> 0.3.
//   {0.1, 0.5}: median h = 0.5 -> 0.1 + 0.5 x 0.4 = 0.3; 90th h = 0.9 -> 0.1 + 0.9 x 0.4 = 0.46.
//   {0.1, 0.3, 0.5}: median h = 1 -> 0.3; 90th h = 1.8 -> 0.3 + 0.8 x 0.2 = 0.46.
//   1..10: median h = 4.5 -> 5.5; 90th h = 8.1 -> 9 + 0.1 x 1 = 9.1.
TEST(CostTable, QuantilesInterpolateBetweenOrderStatistics) {
  EXPECT_DOUBLE_EQ(quantile({0.3}, 0.5), 0.3);
  EXPECT_DOUBLE_EQ(quantile({0.3}, 0.9), 0.3);
  EXPECT_DOUBLE_EQ(quantile({0.5, 0.1}, 0.5), 0.3);
  EXPECT_DOUBLE_EQ(quantile({0.5, 0.1}, 0.9), 0.46);
  EXPECT_DOUBLE_EQ(quantile({0.5, 0.1, 0.3}, 0.5), 0.3);
  EXPECT_DOUBLE_EQ(quantile({0.5, 0.1, 0.3}, 0.9), 0.46);
  const std::vector<double> ten = {7, 3, 10, 1, 9, 2, 8, 5, 4, 6};
  EXPECT_DOUBLE_EQ(quantile(ten, 0.5), 5.5);
  EXPECT_DOUBLE_EQ(quantile(ten, 0.9), 9.1);
  EXPECT_DOUBLE_EQ(quantile(ten, 0), 1);
  EXPECT_DOUBLE_EQ(quantile(ten, 1), 10);
  EXPECT_TRUE(std::isnan(quantile({}, 0.5)));
}

// A row's own dtype wins over the default (--dtype), which prices the rows whose dtype cell is
// empty or which have no dtype column. Roofline on a T4: add of two 10^6-element tensors moves
// 3 x 10^6 elements, 12 MB in fp32 and 6 MB in fp16 or bf16, at 70% of 320 GB/s.
TEST(CostTable, ARowsOwnDtypeWinsOverTheDefault) {
  CostModelOptions roofline;
  roofline.model = AnalyticModel::kRoofline;
  const CostModel cost(roofline);
  const double fp32_ms = 12e6 / (0.7 * 320e9) * 1e3, half_ms = fp32_ms / 2;
  const std::string csv =
      "op,device,dtype,B,H\n"
      "add,T4,fp16,1000,1000\n"
      "add,T4,,1000,1000\n";
  const CostTable t = price_cost_table(csv, "ops.csv", {}, cost);  // default fp32
  std::vector<double> ms = predicted_ms(t);
  ASSERT_EQ(ms.size(), 2u);
  EXPECT_NEAR(ms[0], half_ms, 1e-5 * half_ms);
  EXPECT_NEAR(ms[1], fp32_ms, 1e-5 * fp32_ms);
  EXPECT_EQ(t.default_dtype_rows, 1u);
  CostTableOptions bf16;
  bf16.dtype = DType::kBF16;
  ms = predicted_ms(price_cost_table(csv, "ops.csv", bf16, cost));
  EXPECT_NEAR(ms[0], half_ms, 1e-5 * half_ms);  // still its own fp16
  EXPECT_NEAR(ms[1], half_ms, 1e-5 * half_ms);  // now bf16
  // Without the column every row takes the default.
  const CostTable none =
      price_cost_table("op,device,B,H\nadd,T4,1000,1000\n", "ops.csv", bf16, cost);
  EXPECT_EQ(none.default_dtype_rows, 1u);
  EXPECT_NEAR(predicted_ms(none)[0], half_ms, 1e-5 * half_ms);
  // A dtype no one knows names the line, the column and every accepted name.
  const std::string bad = testing::input_error_of(
      [&] { price_cost_table("op,device,dtype,B,H\nadd,T4,fp9,1,1\n", "ops.csv", {}, cost); });
  EXPECT_NE(bad.find("ops.csv:2: dtype: unknown \"fp9\" (expected " + dtype_names() + ")"),
            std::string::npos)
      << bad;
  EXPECT_NE(dtype_names().find("int8, fp8 or fp4"), std::string::npos) << dtype_names();
}

// fp8 and fp4 GEMMs on GPUs without those Tensor Cores run in a 16-bit type, as a language
// model's recipe falls back (strategies/llm_precision.h), and the table says so.
TEST(CostTable, Fp8AndFp4FallBackWhereTheGpuHasNoSuchTensorCores) {
  const ModelOp fp8 = query_op("linear", {{"B", "1"}, {"M", "1024"}, {"N", "2560"}, {"K", "2560"}},
                               DType::kFP8, "q");
  ModelOp fp4 = fp8;
  fp4.dtype = DType::kFP4;
  std::string why;
  const ModelOp on_a100 = op_on_device(fp8, device_spec("A100-SXM4-80GB"), &why);
  EXPECT_EQ(on_a100.dtype, DType::kBF16);
  EXPECT_EQ(why, "A100-SXM4-80GB has no FP8 Tensor Cores (Ada, Hopper and later have them)");
  EXPECT_DOUBLE_EQ(on_a100.bytes, 2 * fp8.bytes);  // counted again in two-byte elements
  EXPECT_DOUBLE_EQ(on_a100.flops, fp8.flops);
  // Volta runs fp16 on Tensor Cores and bf16 on none: fp16 it is.
  EXPECT_EQ(op_on_device(fp8, device_spec("V100-SXM2"), &why).dtype, DType::kFP16);
  // Hopper and Ada have FP8, not FP4; Blackwell both.
  EXPECT_EQ(op_on_device(fp8, device_spec("H100"), &why).dtype, DType::kFP8);
  EXPECT_EQ(why, "");
  EXPECT_EQ(op_on_device(fp8, device_spec("L40S"), &why).dtype, DType::kFP8);
  EXPECT_EQ(op_on_device(fp4, device_spec("H100"), &why).dtype, DType::kBF16);
  EXPECT_EQ(why, "H100-SXM5 has no FP4 Tensor Cores (Blackwell and later have them)");
  EXPECT_EQ(op_on_device(fp4, device_spec("B200"), &why).dtype, DType::kFP4);
  EXPECT_EQ(op_on_device(fp4, device_spec("RTX-PRO-6000-Server"), &why).dtype, DType::kFP4);
  // Elementwise ops use no Tensor Cores: an fp8 add stays fp8.
  ModelOp add = query_op("add", {{"B", "10"}, {"H", "10"}}, DType::kFP8, "q");
  EXPECT_EQ(op_on_device(add, device_spec("A100"), &why).dtype, DType::kFP8);
  EXPECT_EQ(why, "");

  // In a table: the fallback rows cost what the same rows in bf16 cost, and a note per reason.
  const CostModel cost;
  const std::string csv =
      "op,device,dtype,B,M,N,K\n"
      "linear,A100-SXM4-80GB,fp8,1,1024,2560,2560\n"
      "linear,A100-SXM4-80GB,bf16,1,1024,2560,2560\n"
      "linear,H100,fp4,1,1024,2560,2560\n"
      "linear,H100,fp4,1,2048,2560,2560\n"
      "linear,H100,fp8,1,1024,2560,2560\n";
  const CostTable t = price_cost_table(csv, "ops.csv", {}, cost);
  const std::vector<double> ms = predicted_ms(t);
  ASSERT_EQ(ms.size(), 5u);
  EXPECT_DOUBLE_EQ(ms[0], ms[1]);
  EXPECT_EQ(t.notes,
            (std::vector<std::string>{
                "ops.csv: 1 row at line 2 priced in bf16: A100-SXM4-80GB has no FP8 Tensor Cores "
                "(Ada, Hopper and later have them)",
                "ops.csv: 2 rows from line 4 priced in bf16: H100-SXM5 has no FP4 Tensor Cores "
                "(Blackwell and later have them)"}));
}

// latency_ms: empty is "not measured", 0 a time too short to record (no error computed), and
// anything else but a non-negative number an error naming the line and the column.
TEST(CostTable, LatencyMustBeANonNegativeNumber) {
  const CostModel cost;
  const CostTable t = price_cost_table(
      "op,device,B,H,latency_ms\nadd,T4,10,10,\nadd,T4,10,10,0\nadd,T4,10,10,0.01\n", "ops.csv", {},
      cost);
  EXPECT_EQ(t.rows, 3u);
  EXPECT_EQ(t.relative_errors.size(), 1u);
  for (const char* bad : {"x", "-1", "1e999", "nan", "0.5ms"}) {
    const std::string e = testing::input_error_of([&] {
      price_cost_table(
          std::string("op,device,B,H,latency_ms\nadd,T4,1,1,0.1\nadd,T4,1,1,") + bad + "\n",
          "ops.csv", {}, cost);
    });
    EXPECT_NE(
        e.find("ops.csv:3: latency_ms: expected a non-negative number of milliseconds, got \"" +
               std::string(bad) + "\""),
        std::string::npos)
        << e;
  }
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

// The command line around the table: interpolated percentiles on a two-row file, the row's
// dtype over --dtype, the fp8 / fp4 fallback note, device names with spaces, exit status 2 with
// the file, line and field of bad input. Roofline add on a T4 (see
// ARowsOwnDtypeWinsOverTheDefault): 0.0535714 ms predicted; measured 0.0487013 ms (predicted / 1.1)
// and 0.0412088 ms (predicted / 1.3) are errors of 10% and 30%: median 20%, 90th percentile 10 +
// 0.9 x 20 = 28%.
TEST(CostCommand, CsvNotesPercentilesAndDtypes) {
  const std::string bin = testing::orrery_bin();
  if (bin.empty()) GTEST_SKIP() << "ORRERY_BIN not set (run through ctest)";
  const std::string dir = testing::make_temp_dir("cost");
  testing::write_file(dir + "/two.csv",
                      "op,device,B,H,latency_ms\n"
                      "add,Tesla T4,1000,1000,0.0487012987\n"
                      "add,Tesla T4,1000,1000,0.0412087912\n");
  testing::ShellResult two = testing::run_shell(bin + " cost --csv " + dir +
                                                "/two.csv --model roofline -o " + dir + "/out.csv");
  ASSERT_EQ(two.status, 0) << two.output;
  EXPECT_NE(two.output.find("against latency_ms of 2 rows: median error 20.0%, 90th percentile "
                            "28.0%"),
            std::string::npos)
      << two.output;

  // The row's dtype wins; --dtype prices the others, and the command says how many.
  testing::write_file(dir + "/mixed.csv",
                      "op,dtype,B,M,N,K\n"
                      "linear,fp8,1,1024,2560,2560\n"
                      "linear,,1,1024,2560,2560\n");
  testing::ShellResult mixed = testing::run_shell(bin + " cost --csv " + dir +
                                                  "/mixed.csv --device 'NVIDIA A100-SXM4-80GB' "
                                                  "--dtype bf16");
  ASSERT_EQ(mixed.status, 0) << mixed.output;
  EXPECT_NE(mixed.output.find("--dtype bf16 priced 1 of 2 rows (the others give their own)"),
            std::string::npos)
      << mixed.output;
  EXPECT_NE(mixed.output.find("mixed.csv: 1 row at line 2 priced in bf16: A100-SXM4-80GB has no "
                              "FP8 Tensor Cores"),
            std::string::npos)
      << mixed.output;

  // One op: a name with spaces on the command line, and the fallback's note.
  testing::ShellResult fp4 = testing::run_shell(
      bin + " cost linear B=1 M=1024 N=2560 K=2560 --device \"NVIDIA H100 80GB HBM3\" --dtype fp4");
  ASSERT_EQ(fp4.status, 0) << fp4.output;
  EXPECT_NE(fp4.output.find("on H100-SXM5, fp4"), std::string::npos) << fp4.output;
  EXPECT_NE(fp4.output.find("note       priced in bf16: H100-SXM5 has no FP4 Tensor Cores"),
            std::string::npos)
      << fp4.output;
  EXPECT_NE(fp4.output.find("bf16 on Tensor Cores"), std::string::npos) << fp4.output;

  // Bad input: exit status 2, and the message names what was wrong where.
  testing::ShellResult dtype = testing::run_shell(bin + " cost add B=1 H=1 --dtype fp9");
  EXPECT_EQ(dtype.status, 2) << dtype.output;
  EXPECT_NE(dtype.output.find("--dtype: expected " + dtype_names() + ", got \"fp9\""),
            std::string::npos)
      << dtype.output;
  testing::write_file(dir + "/bad.csv",
                      "op,device,B,H,latency_ms\nadd,T4,1,1,0.1\nadd,T4,1,1,-2\n");
  testing::ShellResult bad = testing::run_shell(bin + " cost --csv " + dir + "/bad.csv");
  EXPECT_EQ(bad.status, 2) << bad.output;
  EXPECT_NE(bad.output.find("bad.csv:3: latency_ms:"), std::string::npos) << bad.output;
  testing::write_file(dir + "/fp9.csv", "op,device,dtype,B,H\nadd,T4,fp9,1,1\n");
  testing::ShellResult fp9 = testing::run_shell(bin + " cost --csv " + dir + "/fp9.csv");
  EXPECT_EQ(fp9.status, 2) << fp9.output;
  EXPECT_NE(fp9.output.find("fp9.csv:2: dtype: unknown \"fp9\""), std::string::npos) << fp9.output;
}

}  // namespace
}  // namespace orrery
