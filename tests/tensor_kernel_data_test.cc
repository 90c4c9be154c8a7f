// The shipped Tensor Core fit against a fixed sample of the measured Tensor Core data
// (../shared/data/tc-kernels, AIConfigurator, read in place): every 10th BF16 GEMM row of each
// GPU, and the long prefill attention rows (S >= 2048, no sliding window), where the attention
// kernel itself sets the time rather than TensorRT-LLM's preparation of q, k and v around it.
// Rows are priced as kernels timed alone (sustained_power off), as the data was measured. The
// bounds are the leave-one-GPU-out errors of docs/validation.md ("Tensor Core kernels, leave
// one GPU out") plus a margin for the sample: the shipped fit saw every GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "common/quantile.h"
#include "models/cost_model.h"
#include "models/cost_table.h"
#include "test_util.h"

namespace orrery {
namespace {

struct GpuCase {
  const char* file;              // the data's GPU suffix
  const char* device;            // Orrery's spec
  double gemm_median, gemm_p90;  // % on BF16 GEMM rows
  double attention_median;       // % on long prefill rows
};

// |predicted - measured| / measured in %, for the rows the awk program `select` writes as
// CSV (with a header read_op_rows understands) from the data file `file`.
std::vector<double> errors(const std::string& file, const std::string& select) {
  const std::string path = testing::shared_path("data/tc-kernels/" + file);
  const testing::ShellResult r =
      testing::run_shell("zcat '" + path + "' | awk -F, '" + select + "'");
  EXPECT_EQ(r.status, 0) << r.output;
  const OpRows rows = read_op_rows(r.output, file, CostTableOptions());
  CostModelOptions options;
  options.sustained_power = false;
  const CostModel cost(options);
  std::vector<double> out;
  for (size_t i = 0; i < rows.ops.size(); ++i) {
    const auto k = cost.kernel_estimate(rows.ops[i], rows.devices[rows.device[i]]);
    EXPECT_TRUE(k) << file << " row " << i;
    if (!k) continue;
    const double measured = rows.measured_ms[i] * 1e-3;
    out.push_back(100 * std::fabs(k->seconds - measured) / measured);
  }
  return out;
}

class TensorKernelData : public ::testing::TestWithParam<GpuCase> {};

TEST_P(TensorKernelData, Bf16GemmsAreWithinTheLeaveOneGpuOutError) {
  const GpuCase& g = GetParam();
  const std::vector<double> e =
      errors(std::string("gemm_") + g.file + ".csv.gz",
             std::string("NR == 1 { print \"op,B,M,N,K,dtype,device,latency_ms\" } ") +
                 "NR > 1 && NR % 10 == 2 && $6 == \"bf16\" { print \"linear,1,\" $8 \",\" $9 \",\" "
                 "$10 \",bf16," +
                 g.device + ",\" $11 }");
  ASSERT_GT(e.size(), 500u);
  EXPECT_LE(quantile(e, 0.5), g.gemm_median + 3.0) << g.device;
  EXPECT_LE(quantile(e, 0.9), g.gemm_p90 + 8.0) << g.device;
}

TEST_P(TensorKernelData, LongPrefillAttentionIsWithinItsError) {
  const GpuCase& g = GetParam();
  // Columns: dtype 6, kv_dtype 7, batch 9, seq 10, heads 11, kv_heads 12, head_dim 13, window 14.
  const std::vector<double> e = errors(
      std::string("context_attention_") + g.file + ".csv.gz",
      std::string("NR == 1 { print \"op,B,S,H,KV,D,causal,window,dtype,device,latency_ms\" } ") +
          "NR > 1 && $6 == \"bf16\" && $7 == \"bf16\" && $10 >= 2048 && $14 == 0 { print "
          "\"attention,\" $9 \",\" $10 \",\" $11 \",\" $12 \",\" $13 \",1,0,bf16," +
          g.device + ",\" $15 }");
  ASSERT_GT(e.size(), 200u);
  // The table's cell is over every prefill row, with TensorRT-LLM's preparation priced beside
  // the op; these rows have next to none of it: 5 points of margin for the different set.
  EXPECT_LE(quantile(e, 0.5), g.attention_median + 5.0) << g.device;
}

// clang-format off
const GpuCase kGpus[] = {
    // file        device            BF16 GEMM median / p90   prefill BF16 median (all rows)
    {"a100-sxm", "A100-SXM4-80GB",  14.6,  28.0,          6.3},
    {"l40s",     "L40S",            33.2, 175.0,         50.2},
    {"h100-sxm", "H100-SXM5",       11.3,  25.0,         18.8},
    {"b200-sxm", "B200",            11.9,  27.0,         21.7},
};
// clang-format on

INSTANTIATE_TEST_SUITE_P(Gpus, TensorKernelData, ::testing::ValuesIn(kGpus),
                         [](const ::testing::TestParamInfo<GpuCase>& i) {
                           std::string n = i.param.file;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

}  // namespace
}  // namespace orrery
