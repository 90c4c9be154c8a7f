// The learned estimator as the CostModel's LearnedEstimator (models/cost_model.h): consulted
// only after the profile database misses, before the analytic model. It answers for an op
// when the model file has a network for the op's type on the device (by spec name or alias),
// its input ranks and mode values (dtype, small-valued attributes), and every parameter lies
// within the range the network was trained on; otherwise it declines, and the analytic model
// answers. An MLP outside its training range has nothing to go by.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "models/cost_model.h"
#include "models/learned/learned_model.h"

namespace orrery {

class LearnedOpEstimator : public LearnedEstimator {
 public:
  explicit LearnedOpEstimator(std::shared_ptr<const LearnedModel> model);
  std::optional<double> estimate(const ModelOp& op, const DeviceSpec& dev) const override;
  const LearnedModel& model() const { return *model_; }

 private:
  std::shared_ptr<const LearnedModel> model_;
};

// Reads a model file (model_file.h); InputError naming the file when it is not one.
std::shared_ptr<const LearnedOpEstimator> load_learned_estimator(const std::string& path);

}  // namespace orrery
