// A model's config.json (Hugging Face layout) as a JSON object, for the readers of its fields
// (workloads/llm_config.h, workloads/zoo/hf_config.h).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace orrery {

// Throws InputError naming `origin` for text that is not JSON or not a JSON object.
nlohmann::json parse_config_json(const std::string& text, const std::string& origin);

}  // namespace orrery
