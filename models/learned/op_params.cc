#include "models/learned/op_params.h"

#include <algorithm>

#include "common/errors.h"

namespace orrery {
namespace {

// Names of the dimensions of each input, following workloads/op_counts.h's conventions, so a
// principal component reads like the formulas of the paper ("a.M*a.K*b.N").
struct TensorNames {
  std::string tensor;
  std::string dims;  // one letter per dimension
};

std::vector<TensorNames> known_names(const std::string& type) {
  if (type == "matmul") return {{"a", "MK"}, {"b", "KN"}};
  if (type == "bmm") return {{"a", "BMK"}, {"b", "BKN"}};
  if (type == "conv2d") return {{"x", "NCHW"}, {"w", "KCRS"}};
  if (type == "conv2d_bwd_data") return {{"dy", "NKPQ"}, {"w", "KCRS"}};
  if (type == "conv2d_bwd_filter") return {{"x", "NCHW"}, {"dy", "NKPQ"}};
  return {};
}

std::string dim_name(const std::vector<TensorNames>& names, size_t tensor, size_t dim) {
  if (tensor < names.size() && dim < names[tensor].dims.size())
    return names[tensor].tensor + "." + names[tensor].dims[dim];
  return "in" + std::to_string(tensor) + ".d" + std::to_string(dim);
}

}  // namespace

bool is_redundant_attr(const ModelOp& op, const std::string& name, int64_t value) {
  // Exporters may spell a convolution's kernel size out as attributes (kernel_h, kernel_w);
  // the weight's shape says it already.
  if (op.type != "conv2d" && op.type != "conv2d_bwd_data" && op.type != "conv2d_bwd_filter")
    return false;
  if (name != "kernel_h" && name != "kernel_w") return false;
  // The weight is the second input of conv2d and conv2d_bwd_data, the output of the filter
  // gradient.
  const Shape& w =
      op.type == "conv2d_bwd_filter" ? op.output : (op.inputs.size() > 1 ? op.inputs[1] : Shape{});
  if (w.size() != 4) return false;
  return value == w[name == "kernel_h" ? 2 : 3];
}

int64_t attr_default(const std::string& name) {
  if (name == "groups" || name.rfind("stride_", 0) == 0 || name.rfind("dilation_", 0) == 0)
    return 1;
  return 0;
}

OpSchema make_schema(const ModelOp& example, const std::vector<std::string>& attr_names) {
  OpSchema s;
  s.op = example.type;
  auto names = known_names(example.type);
  for (size_t t = 0; t < example.inputs.size(); ++t) {
    s.input_ranks.push_back(static_cast<int>(example.inputs[t].size()));
    for (size_t d = 0; d < example.inputs[t].size(); ++d)
      s.params.push_back({dim_name(names, t, d), ParamSource::kInputDim, static_cast<int>(t),
                          static_cast<int>(d), ""});
  }
  if (example.type == "conv2d_bwd_data") {  // TF's input_sizes: dx [N,C,H,W]
    s.params.push_back({"dx.H", ParamSource::kOutputDim, 0, 2, ""});
    s.params.push_back({"dx.W", ParamSource::kOutputDim, 0, 3, ""});
  } else if (example.type == "conv2d_bwd_filter") {  // TF's filter_sizes: dw [K,C,R,S]
    s.params.push_back({"dw.R", ParamSource::kOutputDim, 0, 2, ""});
    s.params.push_back({"dw.S", ParamSource::kOutputDim, 0, 3, ""});
  }
  std::vector<std::string> attrs = attr_names;
  std::sort(attrs.begin(), attrs.end());
  attrs.erase(std::unique(attrs.begin(), attrs.end()), attrs.end());
  for (const auto& a : attrs) s.params.push_back({a, ParamSource::kAttr, 0, 0, a});
  s.params.push_back({"dtype", ParamSource::kDType, 0, 0, ""});
  return s;
}

std::optional<std::vector<ParamValue>> extract_params(const OpSchema& schema, const ModelOp& op) {
  if (op.type != schema.op || op.inputs.size() != schema.input_ranks.size()) return std::nullopt;
  for (size_t t = 0; t < op.inputs.size(); ++t)
    if (static_cast<int>(op.inputs[t].size()) != schema.input_ranks[t]) return std::nullopt;
  // An attribute the model never saw must be at its default: otherwise the op is one the
  // model knows nothing about.
  for (const auto& [name, v] : op.attrs) {
    bool known = std::any_of(schema.params.begin(), schema.params.end(),
                             [&](const ParamDef& p) { return p.attr == name; });
    if (!known && v != attr_default(name) && !is_redundant_attr(op, name, v)) return std::nullopt;
  }
  std::vector<ParamValue> out;
  out.reserve(schema.params.size());
  for (const auto& p : schema.params) {
    ParamValue v;
    switch (p.source) {
      case ParamSource::kInputDim:
        v.value = static_cast<double>(op.inputs[p.tensor][p.dim]);
        break;
      case ParamSource::kOutputDim:
        if (static_cast<int>(op.output.size()) <= p.dim) return std::nullopt;
        v.value = static_cast<double>(op.output[p.dim]);
        break;
      case ParamSource::kAttr: {
        auto it = op.attrs.find(p.attr);
        v.value = static_cast<double>(it == op.attrs.end() ? attr_default(p.attr) : it->second);
        break;
      }
      case ParamSource::kDType:
        v.text = dtype_name(op.dtype);
        break;
    }
    if (p.is_dim() && !(v.value >= 1)) return std::nullopt;  // empty tensors take no time
    out.push_back(std::move(v));
  }
  return out;
}

ModelOp op_from_row(const ProfileRow& row) {
  auto bad = [&](const std::string& what) {
    return InputError((row.origin.empty() ? std::string("profile row") : row.origin) + ": " + what);
  };
  ModelOp op;
  op.name = row.op;
  op.type = row.op;
  if (!parse_dtype(row.dtype, &op.dtype)) throw bad("unknown dtype \"" + row.dtype + "\"");
  if (!parse_shapes_text(row.inputs, &op.inputs)) throw bad("malformed inputs " + row.inputs);
  if (!parse_shape_text(row.output, &op.output)) throw bad("malformed output " + row.output);
  if (!parse_attrs_text(row.attrs, &op.attrs)) throw bad("malformed attrs " + row.attrs);
  if (op.output.empty() && !op.inputs.empty()) op.output = op.inputs[0];
  return op;
}

std::string row_key(const ProfileRow& row) {
  return row.inputs + "|" + row.output + "|" + row.attrs + "|" + row.dtype;
}

}  // namespace orrery
