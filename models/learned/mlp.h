// A small multilayer perceptron and its training: `layers` hidden layers of `neurons` ReLU
// units and one linear output (Tianshu's LxNy, section 3.2.3), trained
// with Adam on mean squared error. Single-threaded and free of library randomness: the same
// data, options and seed give bit-identical weights.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace orrery {

// Rows of features, row-major; targets alongside.
struct Dataset {
  int cols = 0;
  std::vector<double> x;
  std::vector<double> y;
  size_t rows() const { return y.size(); }
  const double* row(size_t i) const { return x.data() + i * static_cast<size_t>(cols); }
};

class Mlp {
 public:
  Mlp() = default;
  Mlp(int inputs, int layers, int neurons);  // all weights zero

  // He-uniform weights (ReLU layers), zero biases.
  void init(uint64_t seed);
  double predict(const double* x) const;

  int inputs() const { return inputs_; }
  int layers() const { return layers_; }
  int neurons() const { return neurons_; }
  // Layer l (0..layers) maps width(l) inputs to width(l+1) outputs; its weights are stored
  // input-major (w[i * out + j]) followed by its biases.
  int width(int l) const;
  size_t layer_offset(int l) const { return offsets_[l]; }
  // Multiply-adds of one forward pass.
  size_t macs() const;

  std::vector<double>& params() { return params_; }
  const std::vector<double>& params() const { return params_; }

 private:
  int inputs_ = 0, layers_ = 0, neurons_ = 0;
  std::vector<size_t> offsets_;
  std::vector<double> params_;
};

struct TrainOptions {
  double lr = 3e-3;  // Adam step size
  int batch = 32;
  int max_epochs = 600;
  int patience = 100;    // stop after this many epochs without a better validation error
  int decay_after = 30;  // halve the step size after this many epochs without improvement
  uint64_t seed = 1;     // initial weights and shuffling
};

struct TrainResult {
  Mlp net;                 // the weights of the epoch with the best validation error
  double val_error = 0.0;  // mean relative error of the time on the validation rows
  int epochs = 0;          // epochs run
  int best_epoch = 0;      // the epoch of `net` (0: no epoch improved on the initial weights)
  double work = 0.0;       // multiply-adds spent (forward and backward), for budgets
  int restarts = 0;        // trainings restarted from other weights after ending dead
};

// A training that fails, ending with a constant network (all ReLUs of a layer dead for every
// row) or never improving on its initial weights, is restarted from other initial weights (a
// seed derived from the given one), at most this often.
inline constexpr int kMaxRestarts = 2;

// Targets are standardised log times; `y_scale` is the standard deviation that standardised
// them, so the validation error can be read as a mean relative error of the time itself:
// |exp((prediction - y) * y_scale) - 1|.
double mean_relative_error(const Mlp& net, const Dataset& data, double y_scale);

TrainResult train_mlp(int layers, int neurons, const Dataset& train, const Dataset& val,
                      double y_scale, const TrainOptions& options);

// Multiply-adds `train_mlp` spends per epoch on `rows` rows (forward + backward, ~3 passes).
double epoch_work(int inputs, int layers, int neurons, size_t rows);

}  // namespace orrery
