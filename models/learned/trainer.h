// Training of the learned estimator from profile-database rows, as section 3.2 of
// Tianshu describes it:
//   1. classify each parameter with the pruning rules (principal_component.h);
//   2. split each mode group's rows into training, validation and held-out test rows (fixed
//      seed); the held-out rows are never used for any choice, only for the reported error;
//   3. principal-component search: for every candidate complexity, train the default network
//      (6 layers x 6 neurons, default hyper-parameters) on every mode group; keep the candidate
//      with the lowest validation error;
//   4. per mode group, architecture search over layers in [3, 20] and neurons in [3, 40] with
//      the default hyper-parameters, then fine-tuning of the best five with other step sizes,
//      batch sizes and initial weights; the lowest validation error wins;
//   5. a comparison network with the winner's architecture and training but without the
//      principal component (the paper's "No-PC" column).
// Inputs and target are logarithms (the DLRM performance model section III-B2 does the same),
// so the squared-error loss weighs relative errors alike over decades of op times.
//
// Budgets count work (multiply-adds of training) converted to nominal seconds at a fixed
// rate, not wall-clock time: the same rows, options and seed give the same model on any
// machine and under any load.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "models/learned/learned_model.h"
#include "models/profile_db.h"

namespace orrery {

// Multiply-adds per nominal second: about what one core of the development machine (a shared
// 2-core Xeon VM) does in train_mlp, so a nominal second is roughly a CPU second there.
inline constexpr double kNominalWorkRate = 1.5e9;

struct TrainerOptions {
  uint64_t seed = 1;
  // Nominal seconds per op for steps 4 and 5 (split over the mode groups by rows); the
  // principal-component search always tries every candidate.
  double budget_s = 60.0;
  double test_fraction = 0.1;
  double val_fraction = 0.1;
  size_t min_group_rows = 40;  // smaller mode groups get no network (the estimator declines)
  TrainOptions defaults;       // the "default hyper-parameters" of steps 3 and 4
  // How parameters enter the networks: as logarithms, as they are (the paper), or whichever
  // gives the lower validation error in the principal-component search.
  enum class Inputs { kLog, kLinear, kBest } inputs = Inputs::kBest;
  int default_layers = 6, default_neurons = 6;
  int min_layers = 3, max_layers = 20, min_neurons = 3, max_neurons = 40;
  int top_k = 5;
  // Fine-tuning runs, each tried on every one of the top_k architectures (while the budget
  // lasts); seeds here are offsets added to `seed`.
  std::vector<TrainOptions> fine_tune = default_fine_tune();
  std::function<void(const std::string&)> log;  // progress lines; may be empty

  static std::vector<TrainOptions> default_fine_tune();
};

// Trains the model of one op type on one device; `rows` all have that op and device. Throws
// InputError when no mode group has enough rows.
OpModel train_op_model(const std::vector<ProfileRow>& rows, const TrainerOptions& options);

// One OpModel per (op, device) of `db` whose op is in `ops` (every op when empty); pairs with
// too few rows for any network are skipped (and logged).
LearnedModel train_learned_model(const ProfileDb& db, const std::vector<std::string>& ops,
                                 const TrainerOptions& options);

}  // namespace orrery
