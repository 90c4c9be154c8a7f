// A trained learned estimator (Tianshu section 3.2): per op type and device,
// the parameters and their kinds, the principal component, and one network per combination of
// mode-selection values. Pure data plus the arithmetic to apply it; trainer.h makes one,
// model_file.h stores it, estimator.h plugs it into the CostModel.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/learned/mlp.h"
#include "models/learned/op_params.h"
#include "models/learned/principal_component.h"

namespace orrery {

// A network with the standardisation of its inputs and of its target (log seconds).
struct ScaledNet {
  Mlp net;
  std::vector<double> x_mean, x_scale;
  double y_mean = 0.0, y_scale = 1.0;
  TrainOptions hyper;      // how it was trained
  double val_error = 0.0;  // mean relative error on the validation rows
  double test_error = -1;  // on the held-out rows; negative when not measured
  bool empty() const { return net.inputs() == 0; }
  // log seconds for unscaled features.
  double predict_log(const std::vector<double>& features) const;
};

struct ParamInfo {
  ParamKind kind = ParamKind::kNull;
  size_t distinct = 0;  // distinct values in the training data
};

struct PcTrial {
  Candidate candidate;
  double val_error = 0.0;  // rows-weighted over the mode groups
  bool full = true;        // trained for the default epochs (false: screened out earlier)
};

// The principal-component search in one input form (parameters as logarithms or as values):
// its best candidate and the default network's validation errors with it and without any.
struct InputFormTrial {
  bool log_inputs = true;
  Candidate pc;
  double val_error = 0.0;
  double no_pc_val_error = 0.0;
};

struct ArchTrial {
  int layers = 0, neurons = 0;
  double val_error = 0.0;
  int epochs = 0;
};

struct ModeGroup {
  std::vector<std::string> mode;  // values of the mode parameters, in parameter order
  size_t train_rows = 0, val_rows = 0, test_rows = 0;
  std::vector<double> lo, hi;     // per feature parameter: range in the training rows
  ScaledNet model;                // with the principal component: what the estimator uses
  ScaledNet no_pc;                // same architecture and training, without it (comparison)
  std::vector<ArchTrial> search;  // the architecture search, in the order tried
};

struct OpModel {
  std::string op, device;
  OpSchema schema;
  std::vector<ParamInfo> params;  // parallel to schema.params
  Candidate pc;
  std::vector<PcTrial> pc_search;  // in the chosen input form
  std::vector<InputFormTrial> input_forms;
  std::vector<ModeGroup> groups;
  std::vector<std::string> held_out;  // row_key() of the rows kept out of training
  size_t rows = 0;                    // rows of this op and device offered for training
  size_t skipped_rows = 0;            // of which unused: another shape rank, a mode group too small
  // Parameters enter the network as logarithms (true) or as they are (false, the paper's way);
  // the principal component and the target are logarithms either way.
  bool log_inputs = true;

  // Indices of the numeric parameters that are not mode selections: the network's inputs.
  std::vector<int> feature_params() const;
  // Each feature parameter (its log, or log(1 + v) for non-dimension values, when log_inputs),
  // then log PC.
  std::vector<double> features(const std::vector<ParamValue>& v, bool with_pc) const;
  // The mode values of an op ("fp32", "2"...), in parameter order.
  std::vector<std::string> mode_of(const std::vector<ParamValue>& v) const;
  const ModeGroup* group(const std::vector<std::string>& mode) const;
  // "dtype=fp32 stride_h=2"
  std::string mode_text(const std::vector<std::string>& mode) const;
};

struct TrainingSource {
  std::string path;
  std::string sha256;
  size_t rows = 0;
  std::vector<std::string> header;  // the file's '#' provenance lines (CSV) or its provenance
};

struct LearnedModel {
  std::vector<TrainingSource> sources;
  std::string command;  // the `orrery estimator train` command line
  uint64_t seed = 1;
  double budget_s = 0.0;
  double test_fraction = 0.1, val_fraction = 0.1;
  std::vector<OpModel> ops;

  // The op model for `type` on a device called `device` (case-insensitive), or null.
  const OpModel* find(const std::string& type, const std::string& device) const;
};

// Text of a mode or parameter value as models store it ("2", "0.5", "fp32").
std::string param_value_text(const ParamDef& def, const ParamValue& v);

// What a model says about one op: seconds from the estimator network and from the no-PC
// comparison network, or nothing when the op is not one the model covers (another type or
// rank, a mode value without a network). `in_range` tells whether every feature parameter lies
// within its group's training range.
struct OpPrediction {
  double seconds = 0.0;
  double no_pc_seconds = 0.0;
  bool in_range = true;
};
std::optional<OpPrediction> predict_op(const OpModel& m, const ModelOp& op);

}  // namespace orrery
