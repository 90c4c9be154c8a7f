// Draws from a seed that come out the same on every machine: std::mt19937_64's output is fixed
// by the standard, and so is the arithmetic below, unlike std::uniform_int_distribution's and
// std::uniform_real_distribution's, which each library implements its own way.
#pragma once

#include <cstdint>
#include <random>

namespace orrery {

// Uniform in [0, n), n > 0: rejection keeps every value equally likely.
inline uint64_t draw_below(std::mt19937_64& rng, uint64_t n) {
  const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t x;
  do x = rng();
  while (x >= limit);
  return x % n;
}

// Uniform in [0, 1), on the 2^53 doubles a 53-bit mantissa spaces evenly.
inline double draw_unit(std::mt19937_64& rng) {
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

}  // namespace orrery
