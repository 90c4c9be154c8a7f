// CostModel: the duration of one op on a target device, and where that number came from.
// Sources are tried in this order (docs/cost-models.md, section 1):
//   1. the profile database: an exact measured row ("db"), else interpolation between
//      measured rows along one dimension ("interpolated");
//   2. a learned estimator, when one is plugged in ("learned"; Tianshu
//      section 3.2; not part of this module, see LearnedEstimator);
//   3. the kernel models of models/kernel_model.h ("kernel-model", the default): GEMM tiles
//      and waves, convolution algorithms, achieved bandwidth, fitted to measured kernels;
//   4. the analytic model ("analytic"): the embedding-lookup heuristic with L2 hit rate
//      (the DLRM performance model section III-B1) for embedding ops, and otherwise the roofline
//      max(FLOPs / peak, bytes / bandwidth) with a per-op-class efficiency (default 70%,
//      PAI section II-B) and the Tensor Core rule of models/tensor_cores.h. It prices what the
//      kernel models cannot (embeddings, devices without SMs or a memory type such as a CPU
//      core), and everything when a scenario says `cost_model: roofline`.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>

#include "common/yaml_reader.h"
#include "models/kernel_coefficients.h"
#include "models/kernel_model.h"
#include "models/op_class.h"
#include "models/profile_db.h"
#include "models/roofline.h"
#include "models/tensor_cores.h"
#include "platforms/device_spec.h"
#include "workloads/model_graph.h"

namespace orrery {

enum class EstimateSource : unsigned char {
  kDatabase = 0,
  kInterpolated,
  kLearned,
  kAnalytic,
  kKernelModel
};
inline constexpr int kNumEstimateSources = 5;
// "db", "interpolated", "learned", "analytic", "kernel-model"
const char* estimate_source_name(EstimateSource s);

struct OpEstimate {
  double seconds = 0.0;
  EstimateSource source = EstimateSource::kAnalytic;
  std::string detail;  // e.g. "memory-bound", "tensor cores", "L2 hit rate 0.50", the DB rows
};

// The hook for a learned per-op estimator (Tianshu's MLP with a principal-component feature),
// consulted after the profile database and before the analytic model. Return nothing to pass
// the op on to the analytic model (an op type or device the estimator was not trained for).
class LearnedEstimator {
 public:
  virtual ~LearnedEstimator() = default;
  virtual std::optional<double> estimate(const ModelOp& op, const DeviceSpec& dev) const = 0;
};

// The model that prices ops the profile database and the learned estimator leave: the kernel
// models, or the roofline alone.
enum class AnalyticModel : unsigned char { kKernel = 0, kRoofline };
// "kernel" or "roofline"; false for anything else.
bool parse_analytic_model(const std::string& name, AnalyticModel* out);

struct CostModelOptions {
  AnalyticModel model = AnalyticModel::kKernel;
  // The kernel models' coefficients; null: the shipped fit (models/kernel/coefficients.yaml).
  std::shared_ptr<const KernelCoefficients> kernel;
  // Roofline: fraction of peak FLOP/s and of bandwidth the kernels of each op class reach.
  std::array<double, kNumOpClasses> efficiency = filled(0.7);
  // Run FP32 GEMMs as TF32 on devices with TF32 Tensor Cores: PyTorch's
  // torch.backends.cuda.matmul.allow_tf32, off by default since PyTorch 1.12.
  bool allow_tf32 = false;
  // The same for FP32 convolutions: torch.backends.cudnn.allow_tf32, on by default, so FP32
  // training on Ampere and later runs its convolutions on TF32 Tensor Cores.
  bool cudnn_allow_tf32 = true;
  // Price Tensor Core kernels at the board's sustained power limit, as a training step's
  // back-to-back kernels run; false prices each as if timed alone (boost clocks while they
  // last: how kernel benchmarks, and the fitting data, time them).
  bool sustained_power = true;
  // Embedding ops: the L2 hit-rate model of the DLRM performance model; false uses its plain
  // DRAM-only model.
  bool embedding_l2 = true;
  // Warps resident per SM in the embedding kernel (rows_per_block of the DLRM performance model):
  // 32, the value its code derives for FBGEMM's kernel when shared memory allows.
  int embedding_rows_per_block = 32;
  std::shared_ptr<const ProfileDb> db;              // optional
  std::shared_ptr<const LearnedEstimator> learned;  // optional
  // Measured times describe the named device as shipped; when a scenario overrides its speeds
  // they are skipped unless this is set.
  bool db_for_overridden_devices = false;

  static std::array<double, kNumOpClasses> filled(double v) {
    std::array<double, kNumOpClasses> a;
    a.fill(v);
    return a;
  }
  double efficiency_of(OpClass c) const { return efficiency[static_cast<int>(c)]; }
};

// Reads a scenario's `cost_model`: `roofline` or `kernel` alone, or a mapping:
//   model: kernel                    (kernel or roofline)
//   kernel_coefficients: FILE        (another fit of scripts/fit_kernel_models.py)
//   efficiency: 0.7                  (every class) or {default: 0.7, gemm: 0.8, embedding: 0.6}
//   allow_tf32: false                (FP32 GEMMs as TF32)
//   cudnn_allow_tf32: true           (FP32 convolutions as TF32)
//   embedding_l2: true
//   embedding_rows_per_block: 32
//   profile_db: path/to/db.h5        (or a CSV; a list of files is merged; relative paths are
//                                     relative to `base_dir`)
//   db_for_overridden_devices: false
// Unknown keys and bad values are InputErrors naming the file, line and key.
CostModelOptions parse_cost_model_options(const YamlMap& m, const std::string& base_dir = "");
// The same for a `cost_model:` node that may be a scalar; `parent` is the map holding it.
CostModelOptions parse_cost_model(const YamlMap& parent, const std::string& key,
                                  const std::string& base_dir = "");

// The pieces of the roofline estimate of one op (`orrery cost` shows them).
struct RooflineParts {
  double flops = 0.0;
  double bytes = 0.0;
  MathMode mode;            // the dtype the math runs in and whether on Tensor Cores
  double peak_flops = 0.0;  // the device's peak for that mode, flop/s
  double efficiency = 0.0;  // of the op's class (CostModelOptions::efficiency)
  RooflineTime time;        // compute and memory terms, and the larger
};

class CostModel {
 public:
  CostModel() = default;
  explicit CostModel(CostModelOptions options);

  OpEstimate estimate(const ModelOp& op, const DeviceSpec& dev) const;
  // The models (step 3, or 4 alone when the options say roofline), whatever the database holds.
  OpEstimate analytic(const ModelOp& op, const DeviceSpec& dev) const;
  // The kernel models' estimate with its GEMM plan; nothing for ops and devices they do not
  // price (embeddings, CPU cores).
  std::optional<KernelEstimate> kernel_estimate(const ModelOp& op, const DeviceSpec& dev) const;
  const KernelCoefficients& coefficients() const;
  // How the roofline prices `op` on `dev` (embedding lookups aside, which have their own model).
  RooflineParts roofline_parts(const ModelOp& op, const DeviceSpec& dev) const;

  const CostModelOptions& options() const { return options_; }

 private:
  CostModelOptions options_;
};

}  // namespace orrery
