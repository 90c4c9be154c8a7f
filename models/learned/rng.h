// The random numbers of the learned estimator: weight initialisation, shuffling and data
// splits. Hand-written (SplitMix64 seeding xoshiro256**) rather than <random>, whose
// distributions are implementation-defined: a seed must give bit-identical models wherever
// the same binary runs, and the same models across standard libraries.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace orrery {

class Rng {
 public:
  explicit Rng(uint64_t seed) {
    for (auto& s : s_) {
      seed += 0x9e3779b97f4a7c15ULL;
      uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      s = z ^ (z >> 31);
    }
  }

  uint64_t next() {
    uint64_t result = rotl(s_[1] * 5, 7) * 9;
    uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, 1), 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  // Uniform integer in [0, n); n > 0. Rejection keeps it unbiased.
  uint64_t below(uint64_t n) {
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do x = next();
    while (x >= limit);
    return x % n;
  }

  template <typename T>
  void shuffle(std::vector<T>& v) {
    for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[below(i)]);
  }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

// A seed derived from a base seed and a stream tag, so independent uses (split, init of model
// 3, shuffling of model 7) do not share a sequence.
inline uint64_t derive_seed(uint64_t seed, uint64_t stream) {
  Rng r(seed ^ (stream * 0xd1342543de82ef95ULL + 0x632be59bd9b4e019ULL));
  return r.next();
}

}  // namespace orrery
