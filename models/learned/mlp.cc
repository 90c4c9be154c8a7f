#include "models/learned/mlp.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

#include "models/learned/rng.h"

namespace orrery {

Mlp::Mlp(int inputs, int layers, int neurons)
    : inputs_(inputs), layers_(layers), neurons_(neurons) {
  if (inputs < 1 || layers < 1 || neurons < 1)
    throw std::invalid_argument("Mlp needs at least one input, layer and neuron");
  size_t off = 0;
  for (int l = 0; l <= layers_; ++l) {
    offsets_.push_back(off);
    off += static_cast<size_t>(width(l)) * width(l + 1) + width(l + 1);
  }
  offsets_.push_back(off);
  params_.assign(off, 0.0);
}

int Mlp::width(int l) const {
  if (l == 0) return inputs_;
  if (l <= layers_) return neurons_;
  return 1;
}

size_t Mlp::macs() const {
  size_t n = 0;
  for (int l = 0; l <= layers_; ++l) n += static_cast<size_t>(width(l)) * width(l + 1);
  return n;
}

void Mlp::init(uint64_t seed) {
  Rng rng(seed);
  for (int l = 0; l <= layers_; ++l) {
    int in = width(l), out = width(l + 1);
    double bound = std::sqrt(6.0 / in);
    double* w = params_.data() + offsets_[l];
    for (size_t i = 0; i < static_cast<size_t>(in) * out; ++i) w[i] = rng.uniform(-bound, bound);
    std::fill(w + static_cast<size_t>(in) * out, w + static_cast<size_t>(in) * out + out, 0.0);
  }
}

double Mlp::predict(const double* x) const {
  std::vector<double> a(x, x + inputs_), z;
  for (int l = 0; l <= layers_; ++l) {
    int in = width(l), out = width(l + 1);
    const double* w = params_.data() + offsets_[l];
    const double* b = w + static_cast<size_t>(in) * out;
    z.assign(b, b + out);
    for (int i = 0; i < in; ++i) {
      double ai = a[i];
      const double* wi = w + static_cast<size_t>(i) * out;
      for (int j = 0; j < out; ++j) z[j] += ai * wi[j];
    }
    if (l < layers_)
      for (double& v : z) v = v > 0 ? v : 0;
    a.swap(z);
  }
  return a[0];
}

double mean_relative_error(const Mlp& net, const Dataset& data, double y_scale) {
  if (data.rows() == 0) return 0.0;
  double sum = 0.0;
  for (size_t r = 0; r < data.rows(); ++r)
    sum += std::fabs(std::expm1((net.predict(data.row(r)) - data.y[r]) * y_scale));
  return sum / static_cast<double>(data.rows());
}

double epoch_work(int inputs, int layers, int neurons, size_t rows) {
  double macs = static_cast<double>(inputs) * neurons +
                static_cast<double>(layers - 1) * neurons * neurons + neurons;
  return 3.0 * macs * static_cast<double>(rows);
}

namespace {

// One pass of minibatch gradient accumulation, with the activations of every layer kept for
// the backward pass.
class Backprop {
 public:
  explicit Backprop(const Mlp& net) : net_(net) {
    acts_.resize(net.layers() + 2);
    for (int l = 0; l <= net.layers() + 1; ++l) acts_[l].resize(net.width(l));
    delta_.resize(net.layers() + 2);
    for (int l = 0; l <= net.layers() + 1; ++l) delta_[l].resize(net.width(l));
  }

  // Adds d(0.5 * (f(x) - y)^2)/dparams to grad; returns the squared error.
  double accumulate(const double* x, double y, std::vector<double>& grad) {
    const std::vector<double>& p = net_.params();
    const int L = net_.layers();
    std::copy(x, x + net_.inputs(), acts_[0].begin());
    for (int l = 0; l <= L; ++l) {
      int in = net_.width(l), out = net_.width(l + 1);
      const double* w = p.data() + net_.layer_offset(l);
      const double* b = w + static_cast<size_t>(in) * out;
      double* z = acts_[l + 1].data();
      std::copy(b, b + out, z);
      const double* a = acts_[l].data();
      for (int i = 0; i < in; ++i) {
        double ai = a[i];
        const double* wi = w + static_cast<size_t>(i) * out;
        for (int j = 0; j < out; ++j) z[j] += ai * wi[j];
      }
      if (l < L)
        for (int j = 0; j < out; ++j) z[j] = z[j] > 0 ? z[j] : 0;
    }
    double err = acts_[L + 1][0] - y;
    delta_[L + 1][0] = err;
    for (int l = L; l >= 0; --l) {
      int in = net_.width(l), out = net_.width(l + 1);
      const double* w = p.data() + net_.layer_offset(l);
      double* gw = grad.data() + net_.layer_offset(l);
      double* gb = gw + static_cast<size_t>(in) * out;
      const double* d = delta_[l + 1].data();
      const double* a = acts_[l].data();
      for (int j = 0; j < out; ++j) gb[j] += d[j];
      for (int i = 0; i < in; ++i) {
        double ai = a[i];
        double* gwi = gw + static_cast<size_t>(i) * out;
        for (int j = 0; j < out; ++j) gwi[j] += ai * d[j];
      }
      if (l == 0) break;
      double* dp = delta_[l].data();
      for (int i = 0; i < in; ++i) {
        if (a[i] <= 0) {  // ReLU: no gradient through an inactive unit
          dp[i] = 0;
          continue;
        }
        const double* wi = w + static_cast<size_t>(i) * out;
        double s = 0;
        for (int j = 0; j < out; ++j) s += wi[j] * d[j];
        dp[i] = s;
      }
    }
    return err * err;
  }

 private:
  const Mlp& net_;
  std::vector<std::vector<double>> acts_, delta_;
};

}  // namespace

namespace {

// A network whose output no longer depends on its input: every unit of some layer is inactive
// for every row (dead ReLUs), which a large early step can cause in a narrow network. When that
// happens in the first epoch the best weights are the initial ones (best_epoch 0) instead.
bool is_dead(const Mlp& net, const Dataset& data) {
  size_t n = std::min<size_t>(data.rows(), 256);
  if (n < 2) return false;
  double lo = net.predict(data.row(0)), hi = lo;
  for (size_t i = 1; i < n; ++i) {
    double y = net.predict(data.row(i));
    lo = std::min(lo, y);
    hi = std::max(hi, y);
  }
  return hi - lo <= 1e-12 * (1.0 + std::fabs(hi));
}

TrainResult train_once(int layers, int neurons, const Dataset& train, const Dataset& val,
                       double y_scale, const TrainOptions& o, uint64_t seed) {
  TrainResult r;
  r.net = Mlp(train.cols, layers, neurons);
  r.net.init(derive_seed(seed, 1));
  Rng shuffle_rng(derive_seed(seed, 2));

  std::vector<double>& p = r.net.params();
  std::vector<double> grad(p.size()), m(p.size(), 0.0), v(p.size(), 0.0), best = p;
  const double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  double beta1_t = 1.0, beta2_t = 1.0;
  double lr = o.lr;
  // Without validation rows the training error decides (only small test fixtures do that).
  const Dataset& judge = val.rows() > 0 ? val : train;
  double best_err = mean_relative_error(r.net, judge, y_scale);
  int best_epoch = 0, last_change = 0;

  std::vector<size_t> order(train.rows());
  std::iota(order.begin(), order.end(), 0);
  Backprop bp(r.net);
  const double per_epoch = epoch_work(train.cols, layers, neurons, train.rows());
  int epoch = 0;
  for (epoch = 1; epoch <= o.max_epochs; ++epoch) {
    shuffle_rng.shuffle(order);
    for (size_t start = 0; start < order.size(); start += o.batch) {
      size_t end = std::min(order.size(), start + static_cast<size_t>(o.batch));
      std::fill(grad.begin(), grad.end(), 0.0);
      for (size_t k = start; k < end; ++k)
        bp.accumulate(train.row(order[k]), train.y[order[k]], grad);
      double inv = 1.0 / static_cast<double>(end - start);
      beta1_t *= beta1;
      beta2_t *= beta2;
      double step = lr * std::sqrt(1 - beta2_t) / (1 - beta1_t);
      for (size_t i = 0; i < p.size(); ++i) {
        double g = grad[i] * inv;
        m[i] = beta1 * m[i] + (1 - beta1) * g;
        v[i] = beta2 * v[i] + (1 - beta2) * g * g;
        p[i] -= step * m[i] / (std::sqrt(v[i]) + eps);
      }
    }
    r.work += per_epoch;
    double err = mean_relative_error(r.net, judge, y_scale);
    if (err < best_err) {
      best_err = err;
      best = p;
      best_epoch = last_change = epoch;
    } else if (epoch - last_change >= o.decay_after) {
      lr *= 0.5;
      last_change = epoch;
    }
    if (epoch - best_epoch >= o.patience) break;
  }
  r.epochs = std::min(epoch, o.max_epochs);
  r.best_epoch = best_epoch;
  p = best;
  r.val_error = best_err;
  return r;
}

}  // namespace

TrainResult train_mlp(int layers, int neurons, const Dataset& train, const Dataset& val,
                      double y_scale, const TrainOptions& o) {
  if (train.rows() == 0) throw std::invalid_argument("train_mlp: no training rows");
  TrainResult r = train_once(layers, neurons, train, val, y_scale, o, o.seed);
  auto failed = [&](const TrainResult& t) { return t.best_epoch == 0 || is_dead(t.net, train); };
  for (int attempt = 1; attempt <= kMaxRestarts && failed(r); ++attempt) {
    double work = r.work;
    r = train_once(layers, neurons, train, val, y_scale, o, derive_seed(o.seed, 100 + attempt));
    r.work += work;
    r.restarts = attempt;
  }
  return r;
}

}  // namespace orrery
