// Op pricing throughput: CostModel::estimate over a mix of the op classes a training step holds
// (GEMMs, convolutions, elementwise, softmax, layer norm), each op priced on an A100, as a model
// workload prices every op of its replica before the replay. Sweeps price a replica per point,
// so this rate bounds how much pricing adds to each point.
//
// Prints ops priced per second over 2 million estimates (the sum of the estimates is printed
// too, so the work cannot be optimized away).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "models/cost_model.h"
#include "platforms/device_spec.h"
#include "workloads/op_query.h"

using namespace orrery;

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::atol(argv[1]) : 2'000'000;
  std::vector<ModelOp> ops;
  for (int i = 1; i <= 16; ++i) {
    const std::string s = std::to_string(64 * i);
    ops.push_back(
        query_op("linear", {{"B", "8"}, {"M", s}, {"N", "1024"}, {"K", s}}, DType::kFP32, "bench"));
    ops.push_back(
        query_op("bmm", {{"B", "16"}, {"M", s}, {"N", "64"}, {"K", s}}, DType::kFP16, "bench"));
    ops.push_back(query_op("conv",
                           {{"B", "32"},
                            {"in_channels", s},
                            {"out_channels", s},
                            {"kernel_size", "3"},
                            {"input_size", "28"},
                            {"stride", "1"},
                            {"padding", "1"}},
                           DType::kFP32, "bench"));
    for (const char* op : {"add", "relu", "gelu", "softmax", "ln"})
      ops.push_back(query_op(op, {{"B", "64"}, {"H", s}}, DType::kFP32, "bench"));
  }
  const DeviceSpec dev = device_spec("A100-PCIe-40GB");
  // The default kernel models, then the roofline (`cost_model: roofline`) for comparison.
  CostModelOptions roofline;
  roofline.model = AnalyticModel::kRoofline;
  const struct {
    const char* name;
    CostModel cost;
  } models[] = {{"kernel models", CostModel()}, {"roofline", CostModel(roofline)}};
  for (const auto& m : models) {
    double sum = 0;
    const auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < n; ++i) sum += m.cost.estimate(ops[i % ops.size()], dev).seconds;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf(
        "op pricing (%s): %ld estimates of %zu distinct ops in %.3f s: %.0f ops/s (sum %.6g s)\n",
        m.name, n, ops.size(), s, n / s, sum);
  }
  return 0;
}
