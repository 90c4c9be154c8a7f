// The estimator's network and its training: deterministic for a seed (bit-identical weights),
// and able to fit what it is for.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "common/sha256.h"
#include "models/learned/mlp.h"
#include "models/learned/rng.h"

namespace orrery {
namespace {

// y = 0.5 x0 - 0.3 x1 + 0.2 x0 x1 (standardised-looking inputs), n rows.
Dataset toy(size_t n, uint64_t seed) {
  Rng rng(seed);
  Dataset d;
  d.cols = 2;
  for (size_t i = 0; i < n; ++i) {
    double a = rng.uniform(-1.5, 1.5), b = rng.uniform(-1.5, 1.5);
    d.x.push_back(a);
    d.x.push_back(b);
    d.y.push_back(0.5 * a - 0.3 * b + 0.2 * a * b);
  }
  return d;
}

bool bit_identical(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

TEST(LearnedMlp, SameSeedGivesBitIdenticalWeights) {
  Dataset train = toy(200, 1), val = toy(50, 2);
  TrainOptions o;
  o.max_epochs = 40;
  o.seed = 7;
  TrainResult a = train_mlp(3, 5, train, val, 1.0, o);
  TrainResult b = train_mlp(3, 5, train, val, 1.0, o);
  EXPECT_TRUE(bit_identical(a.net.params(), b.net.params()));
  EXPECT_EQ(a.val_error, b.val_error);
  EXPECT_EQ(a.epochs, b.epochs);
  o.seed = 8;
  TrainResult c = train_mlp(3, 5, train, val, 1.0, o);
  EXPECT_FALSE(bit_identical(a.net.params(), c.net.params()));
}

TEST(LearnedMlp, FitsASmoothFunction) {
  Dataset train = toy(400, 3), val = toy(100, 4);
  TrainOptions o;
  o.max_epochs = 150;
  TrainResult r = train_mlp(3, 8, train, val, 1.0, o);
  double mse = 0.0;
  for (size_t i = 0; i < val.rows(); ++i) {
    double e = r.net.predict(val.row(i)) - val.y[i];
    mse += e * e / val.rows();
  }
  EXPECT_LT(mse, 0.01);  // the targets' variance is about 0.3
  // The validation error is a relative error of exp(y * scale): |exp(pred - y) - 1|.
  EXPECT_NEAR(r.val_error, mean_relative_error(r.net, val, 1.0), 1e-15);
  EXPECT_LT(r.val_error, 0.1);
}

TEST(LearnedMlp, FailedTrainingsRestartFromOtherWeights) {
  Dataset train = toy(100, 5), val = toy(30, 6);
  TrainOptions o;
  o.max_epochs = 30;
  TrainResult ok = train_mlp(3, 5, train, val, 1.0, o);
  EXPECT_EQ(ok.restarts, 0);
  EXPECT_GT(ok.best_epoch, 0);
  // No epoch at all cannot improve on the initial weights: counted as failed, retried.
  o.max_epochs = 0;
  TrainResult none = train_mlp(3, 5, train, val, 1.0, o);
  EXPECT_EQ(none.best_epoch, 0);
  EXPECT_EQ(none.restarts, kMaxRestarts);
}

TEST(LearnedMlp, ShapeAndWork) {
  Mlp net(4, 6, 6);
  // 4x6 + 5 x (6x6) + 6x1 weights, 6 x 6 + 1 biases.
  EXPECT_EQ(net.params().size(), 24u + 180u + 6u + 37u);
  EXPECT_EQ(net.macs(), 24u + 180u + 6u);
  EXPECT_DOUBLE_EQ(epoch_work(4, 6, 6, 10), 3.0 * 210 * 10);
  EXPECT_THROW(Mlp(0, 1, 1), std::invalid_argument);
}

TEST(LearnedRng, DeterministicAndInRange) {
  Rng a(42), b(42);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(a.next(), b.next());
  Rng c(1);
  for (int i = 0; i < 1000; ++i) {
    double u = c.uniform();
    EXPECT_GE(u, 0.0);
    EXPECT_LT(u, 1.0);
    EXPECT_LT(c.below(7), 7u);
  }
  EXPECT_NE(derive_seed(1, 1), derive_seed(1, 2));
}

TEST(LearnedSha256, KnownDigests) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex(std::string(1000, 'a')).substr(0, 16), "41edece42d63e8d9");
}

}  // namespace
}  // namespace orrery
