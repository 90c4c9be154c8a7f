#include "models/learned/estimator.h"

#include "models/learned/model_file.h"

namespace orrery {

LearnedOpEstimator::LearnedOpEstimator(std::shared_ptr<const LearnedModel> model)
    : model_(std::move(model)) {}

std::optional<double> LearnedOpEstimator::estimate(const ModelOp& op, const DeviceSpec& dev) const {
  const OpModel* m = model_->find(op.type, dev.name);
  for (size_t i = 0; !m && i < dev.aliases.size(); ++i) m = model_->find(op.type, dev.aliases[i]);
  if (!m) return std::nullopt;
  auto p = predict_op(*m, op);
  if (!p || !p->in_range) return std::nullopt;
  return p->seconds;
}

std::shared_ptr<const LearnedOpEstimator> load_learned_estimator(const std::string& path) {
  return std::make_shared<LearnedOpEstimator>(
      std::make_shared<const LearnedModel>(read_learned_model(path)));
}

}  // namespace orrery
