// Learned-estimator model files: JSON, shareable like the profile database (Tianshu section 3.2.3:
// "users can share trained models like the database"). A file holds, per op type and device,
// the parameters and their kinds, the principal component and its search, one network per
// mode group with its input/target scaling and training hyper-parameters, the no-PC comparison
// network, and which rows were held out; and, for the whole file, what it was trained on
// (each profile file's path, SHA-256, row count and provenance lines, e.g. the random grid's
// seed and the device). Weights are little-endian IEEE doubles in base64, so a file read back
// gives bit-identical networks. Format described in docs/cost-models.md.
#pragma once

#include <string>

#include "models/learned/learned_model.h"

namespace orrery {

inline constexpr int kLearnedModelFormatVersion = 1;

// Written atomically. Read errors are InputErrors naming the file and the item.
void write_learned_model(const std::string& path, const LearnedModel& model);
LearnedModel read_learned_model(const std::string& path);

std::string learned_model_to_json(const LearnedModel& model);
LearnedModel learned_model_from_json(const std::string& text, const std::string& origin);

}  // namespace orrery
