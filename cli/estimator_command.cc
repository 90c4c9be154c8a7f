// `orrery estimator train` (profile rows -> learned-estimator model file) and `orrery estimator
// eval` (accuracy of a model file on profile rows, the Table 3 of Tianshu).
// Method: models/learned/trainer.h; file format: models/learned/model_file.h.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "common/atomic_file.h"
#include "common/errors.h"
#include "models/learned/evaluation.h"
#include "models/learned/model_file.h"
#include "models/learned/trainer.h"
#include "models/learned/training_sources.h"
#include "models/profile_io.h"

namespace orrery {
namespace {

struct TrainArgs {
  std::vector<std::string> inputs;
  std::string output;
  double budget_s = 60.0;
  uint64_t seed = 1;
  std::string ops;
  bool quiet = false;
};

struct MergeArgs {
  std::vector<std::string> inputs;
  std::string output;
};

struct EvalArgs {
  std::string model;
  std::vector<std::string> inputs;
  bool table = false;
  bool all_rows = false;
};

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

// Only an earlier model file may be replaced, and never an input of the same command.
void check_model_output(const std::string& output, const std::vector<std::string>& inputs) {
  require_not_input(output, "-o", inputs);
  require_replaceable(output, "-o", [](const std::string& p) {
    return file_head(p, 256).find("\"orrery-learned") != std::string::npos;
  });
}

int train_command(const TrainArgs& a) {
  check_model_output(a.output, a.inputs);
  if (!(a.budget_s >= 0)) throw InputError("--budget: must be a non-negative number of seconds");
  LearnedModel model;
  std::vector<TrainingSource> sources;
  ProfileDb db = load_training_profiles(a.inputs, &sources);
  TrainerOptions o;
  o.seed = a.seed;
  o.budget_s = a.budget_s;
  auto t0 = std::chrono::steady_clock::now();
  if (!a.quiet)
    o.log = [t0](const std::string& line) {
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::fprintf(stderr, "[%7.1f s] %s\n", s, line.c_str());
    };
  std::vector<std::string> ops = split_commas(a.ops);
  for (const auto& op : ops) {
    bool found = false;
    for (const auto& r : db.rows()) found = found || r.op == op;
    if (!found) throw InputError("--ops: no rows of op \"" + op + "\" in the profile files");
  }
  model = train_learned_model(db, ops, o);
  if (model.ops.empty())
    throw InputError("no op has enough rows to train on in the profile files (at least " +
                     std::to_string(o.min_group_rows) + " of one mode)");
  model.sources = std::move(sources);
  model.command = current_command_line();
  write_learned_model(a.output, model);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%s: %zu op model(s) trained in %.0f s\n\nheld-out accuracy:\n\n", a.output.c_str(),
              model.ops.size(), secs);
  std::printf("%s", accuracy_table(evaluate_learned_model(model, db, true)).c_str());
  std::printf("\nprincipal-component search, default network (validation rows):\n\n%s",
              input_form_table(model).c_str());
  return 0;
}

int eval_command(const EvalArgs& a) {
  LearnedModel model = read_learned_model(a.model);
  ProfileDb db = load_training_profiles(a.inputs, nullptr);
  auto acc = evaluate_learned_model(model, db, !a.all_rows);
  if (a.table) {
    std::printf("%s\n%s", accuracy_table(acc).c_str(), input_form_table(model).c_str());
    return 0;
  }
  std::printf("%s: %s rows of %zu file(s)\n", a.model.c_str(), a.all_rows ? "all" : "held-out",
              a.inputs.size());
  for (const auto& op : acc) {
    std::printf("%s on %s: PC %s; %zu rows, error %.2f%%, no-PC error %.2f%%", op.op.c_str(),
                op.device.c_str(), op.pc.c_str(), op.rows, 100 * op.error, 100 * op.no_pc_error);
    if (op.declined) std::printf(" (%zu row(s) without a network)", op.declined);
    if (op.out_of_range)
      std::printf(
          "; %zu row(s) outside the training range (the estimator declines them), error "
          "on the others %.2f%%",
          op.out_of_range, 100 * op.error_in_range);
    std::printf("\n");
    for (const auto& g : op.groups)
      std::printf("  %-40s %-7s %5zu rows  error %6.2f%%  no-PC %6.2f%%\n",
                  g.mode.empty() ? "(one mode)" : g.mode.c_str(), g.arch.c_str(), g.rows,
                  100 * g.error, 100 * g.no_pc_error);
  }
  return 0;
}

// Op models trained by separate runs (one op each, on as many cores) into one file. The runs
// must share the settings that shape every op model (seed, budget, split); an op trained twice
// is an error rather than a silent choice.
int merge_command(const MergeArgs& a) {
  check_model_output(a.output, a.inputs);
  if (a.inputs.size() < 2) throw InputError("estimator merge: give at least two model files");
  LearnedModel out;
  for (size_t i = 0; i < a.inputs.size(); ++i) {
    LearnedModel m = read_learned_model(a.inputs[i]);
    if (i == 0) {
      out.seed = m.seed;
      out.budget_s = m.budget_s;
      out.test_fraction = m.test_fraction;
      out.val_fraction = m.val_fraction;
    } else if (m.seed != out.seed || m.budget_s != out.budget_s ||
               m.test_fraction != out.test_fraction || m.val_fraction != out.val_fraction) {
      throw InputError(a.inputs[i] + ": trained with another seed, budget or split than " +
                       a.inputs[0] + " (merge only runs of one training setting)");
    }
    for (auto& op : m.ops) {
      if (out.find(op.op, op.device))
        throw InputError(a.inputs[i] + ": op " + op.op + " on " + op.device +
                         " is already in an earlier file");
      out.ops.push_back(std::move(op));
    }
    for (auto& src : m.sources) {
      bool seen = false;
      for (const auto& have : out.sources) seen = seen || have.sha256 == src.sha256;
      if (!seen) out.sources.push_back(std::move(src));
    }
    out.command += (out.command.empty() ? "" : "\n") + m.command;
  }
  write_learned_model(a.output, out);
  std::printf("%s: %zu op model(s) from %zu file(s)\n", a.output.c_str(), out.ops.size(),
              a.inputs.size());
  return 0;
}

}  // namespace

void register_estimator_commands(CLI::App& app, CommandList& out) {
  auto* est = app.add_subcommand(
      "estimator", "Learned op-time estimator (Tianshu's MLP with a principal component)");
  est->require_subcommand(1);

  static TrainArgs targs;
  auto* train = est->add_subcommand("train", "Train a model file from profile rows");
  train->add_option("files", targs.inputs, "Profile files (CSV or HDF5)")->required();
  train->add_option("-o,--output", targs.output, "Model file to write (JSON)")->required();
  train
      ->add_option("--budget", targs.budget_s,
                   "Nominal seconds per op for architecture search and fine-tuning (work at a "
                   "fixed rate, so results do not depend on the machine)")
      ->capture_default_str();
  train->add_option("--seed", targs.seed, "Seed of the data split, weights and search order")
      ->capture_default_str();
  train->add_option("--ops", targs.ops, "Comma-separated op types (default: every op)");
  train->add_flag("-q,--quiet", targs.quiet, "No progress lines");
  out.push_back({train, [] { return train_command(targs); }});

  static MergeArgs margs;
  auto* merge = est->add_subcommand(
      "merge", "Join model files trained separately (e.g. one op per core) into one");
  merge->add_option("models", margs.inputs, "Model files of one training setting")->required();
  merge->add_option("-o,--output", margs.output, "Model file to write (JSON)")->required();
  out.push_back({merge, [] { return merge_command(margs); }});

  static EvalArgs eargs;
  auto* eval = est->add_subcommand("eval", "Accuracy of a model file on profile rows");
  eval->add_option("model", eargs.model, "Model file")->required();
  eval->add_option("files", eargs.inputs, "Profile files (CSV or HDF5)")->required();
  eval->add_flag("--table", eargs.table, "Print the Table-3-like markdown table");
  eval->add_flag("--all-rows", eargs.all_rows,
                 "Every row of the model's ops and devices, not only the held-out ones");
  out.push_back({eval, [] { return eval_command(eargs); }});
}

}  // namespace orrery
