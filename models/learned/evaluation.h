// Accuracy of a learned model on profile rows (Tianshu Table 3): per op, the
// mean relative error |predicted - measured| / measured of the estimator network and of the
// no-PC comparison network, over the rows the model held out (default) or over every row of
// the op and device (e.g. a database measured after training).
#pragma once

#include <string>
#include <vector>

#include "models/learned/learned_model.h"
#include "models/profile_db.h"

namespace orrery {

struct GroupAccuracy {
  std::string mode;   // "pad_h=0 pad_w=0 stride_h=2 ..." or "" for a single group
  std::string label;  // the modes that tell the op's groups apart: "pad_h=0 stride_h=2"
  std::string arch;   // "L5N7"
  size_t rows = 0;
  double error = 0.0;  // means over `rows`
  double no_pc_error = 0.0;
};

struct OpAccuracy {
  std::string op, device;
  std::string pc;       // principal component text
  size_t rows = 0;      // rows evaluated
  size_t declined = 0;  // rows of the op the model has no network for (not in `rows`)
  double error = 0.0;
  double no_pc_error = 0.0;
  // Of `rows`, those with a parameter outside its network's training range: the estimator in
  // the cost model declines them; the errors above include them, `error_in_range` does not.
  size_t out_of_range = 0;
  double error_in_range = 0.0;
  std::vector<GroupAccuracy> groups;
};

std::vector<OpAccuracy> evaluate_learned_model(const LearnedModel& model, const ProfileDb& db,
                                               bool held_out_only);

// The Table-3-like markdown table: op | principal component | best model | error | no-PC
// error | rows, with an average line.
std::string accuracy_table(const std::vector<OpAccuracy>& acc);

// The principal-component search in each input form (validation errors of the default
// L6N6 network, from the model file): op | inputs | principal component | with PC | no PC.
std::string input_form_table(const LearnedModel& model);

}  // namespace orrery
