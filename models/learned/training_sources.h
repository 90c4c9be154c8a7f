// The profile files a learned model is trained on, read together and described for the model
// file's provenance (models/learned/learned_model.h TrainingSource): path, SHA-256, row count and
// the file's own provenance lines, so a model says which measurements it came from.
#pragma once

#include <string>
#include <vector>

#include "models/learned/learned_model.h"
#include "models/profile_db.h"

namespace orrery {

// `path` (a profile CSV or HDF5 file holding `rows` rows) as a training source: its digest and
// its '#' lines (CSV) or provenance attribute (HDF5). InputError naming the file when it cannot
// be read.
TrainingSource describe_training_source(const std::string& path, size_t rows);

// Every row of `files` merged into one database (later files add to earlier ones); when
// `sources` is given, one TrainingSource per file is appended to it. InputError naming the
// file on the first one that cannot be read.
ProfileDb load_training_profiles(const std::vector<std::string>& files,
                                 std::vector<TrainingSource>* sources);

}  // namespace orrery
