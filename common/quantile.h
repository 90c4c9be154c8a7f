// Quantiles of a sample: the one definition the cost tables, `orrery cost` and the collective
// benchmark's comparison all use.
#pragma once

#include <vector>

namespace orrery {

// The q-quantile (0 <= q <= 1) of `values` by linear interpolation between order statistics,
// as numpy's percentile computes it by default: with the values sorted x[0] <= ... <= x[n-1]
// and h = q (n - 1), x[floor h] + (h - floor h) (x[floor h + 1] - x[floor h]). One value is
// each of its quantiles; the median of two is their mean. NaN when `values` is empty.
double quantile(std::vector<double> values, double q);

}  // namespace orrery
