// The extension's entry points for fitting the kernel models (scripts/fit_kernel_models.py):
// measured rows read once, priced again for each trial of the coefficients.
#pragma once

#include <pybind11/pybind11.h>

namespace orrery {

void bind_kernel_fit(pybind11::module_& m);

}  // namespace orrery
