#include "python/kernel_fit.h"

#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <vector>

#include "models/cost_model.h"
#include "models/cost_table.h"
#include "models/kernel_coefficients.h"
#include "models/kernel_model.h"

namespace py = pybind11;

namespace orrery {
namespace {

// A measured-kernel CSV read into ops (models/cost_table.h).
class KernelRows {
 public:
  KernelRows(const std::string& csv_text, const std::string& origin) {
    py::gil_scoped_release release;
    rows_ = read_op_rows(csv_text, origin, CostTableOptions());
  }

  size_t size() const { return rows_.ops.size(); }

  // Each row's device, as the built-in spec's name.
  std::vector<std::string> devices() const {
    std::vector<std::string> out;
    out.reserve(rows_.device.size());
    for (int d : rows_.device) out.push_back(rows_.devices[d].name);
    return out;
  }

  // Kernel seconds of every row under the coefficients in `yaml` (the file format of
  // models/kernel/coefficients.yaml); rows of devices in `skip` are priced 0.
  std::vector<double> predict(const std::string& yaml, const std::vector<std::string>& skip) const {
    CostModelOptions o;
    o.kernel =
        std::make_shared<KernelCoefficients>(parse_kernel_coefficients(yaml, "coefficients"));
    o.sustained_power = false;  // measured kernels were timed alone
    py::gil_scoped_release release;
    CostModel cost(o);
    std::vector<bool> skipped(rows_.devices.size(), false);
    for (size_t d = 0; d < rows_.devices.size(); ++d)
      for (const auto& s : skip) skipped[d] = skipped[d] || rows_.devices[d].name == s;
    std::vector<double> out(rows_.ops.size(), 0.0);
    for (size_t i = 0; i < rows_.ops.size(); ++i) {
      if (skipped[rows_.device[i]]) continue;
      auto k = cost.kernel_estimate(rows_.ops[i], rows_.devices[rows_.device[i]]);
      out[i] = k ? k->seconds : 0.0;
    }
    return out;
  }

  // Seconds of every row under the roofline (`cost_model: roofline`), the baseline.
  std::vector<double> roofline() const {
    CostModelOptions o;
    o.model = AnalyticModel::kRoofline;
    py::gil_scoped_release release;
    CostModel cost(o);
    std::vector<double> out(rows_.ops.size());
    for (size_t i = 0; i < rows_.ops.size(); ++i)
      out[i] = cost.analytic(rows_.ops[i], rows_.devices[rows_.device[i]]).seconds;
    return out;
  }

  // The kernel model's description of row `i` under the coefficients in `yaml`.
  std::string detail(size_t i, const std::string& yaml) const {
    CostModelOptions o;
    o.kernel =
        std::make_shared<KernelCoefficients>(parse_kernel_coefficients(yaml, "coefficients"));
    o.sustained_power = false;
    CostModel cost(o);
    auto k = cost.kernel_estimate(rows_.ops.at(i), rows_.devices[rows_.device.at(i)]);
    return k ? k->model + ": " + k->detail : "";
  }

 private:
  OpRows rows_;
};

}  // namespace

void bind_kernel_fit(py::module_& m) {
  py::class_<KernelRows>(m, "KernelRows")
      .def(py::init<const std::string&, const std::string&>(), py::arg("csv_text"),
           py::arg("origin"))
      .def("__len__", &KernelRows::size)
      .def("devices", &KernelRows::devices)
      .def("predict", &KernelRows::predict, py::arg("coefficients_yaml"),
           py::arg("skip_devices") = std::vector<std::string>())
      .def("roofline", &KernelRows::roofline)
      .def("detail", &KernelRows::detail, py::arg("row"), py::arg("coefficients_yaml"));
  m.def("shipped_kernel_coefficients",
        [] { return kernel_coefficients_yaml(shipped_kernel_coefficients()); });
}

}  // namespace orrery
