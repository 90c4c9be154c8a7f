#include "models/learned/training_sources.h"

#include <sstream>

#include "common/input_file.h"
#include "common/sha256.h"
#include "models/profile_io.h"

namespace orrery {
namespace {

bool is_hdf5(const std::string& bytes) { return bytes.rfind("\x89HDF\r\n\x1a\n", 0) == 0; }

}  // namespace

TrainingSource describe_training_source(const std::string& path, size_t rows) {
  std::string bytes = read_input_file(path, "profile file");
  TrainingSource s{path, sha256_hex(bytes), rows, {}};
  if (is_hdf5(bytes)) {
    s.header.push_back(read_profile_h5_provenance(path));
  } else {
    std::istringstream lines(bytes);
    std::string line;
    while (std::getline(lines, line))
      if (line.rfind("#", 0) == 0) s.header.push_back(line);
  }
  return s;
}

ProfileDb load_training_profiles(const std::vector<std::string>& files,
                                 std::vector<TrainingSource>* sources) {
  ProfileDb db;
  for (const auto& f : files) {
    ProfileDb part = load_profile_db(f);
    if (sources) sources->push_back(describe_training_source(f, part.size()));
    db.merge(part);
  }
  return db;
}

}  // namespace orrery
