// The parameters of an op, as Tianshu's estimator sees them (Tianshu section
// 3.2: "a series of input parameters of an operation, including the input tensors' shapes and
// other parameters"): every dimension of every input tensor, the op's integer attributes and
// its data type. matmul therefore has five (a.M, a.K, b.K, b.N, dtype), as in the paper.
//
// The two convolution backward ops also take the spatial size of the tensor they produce
// (dx.H, dx.W; dw.R, dw.S), as TensorFlow's Conv2DBackpropInput and Conv2DBackpropFilter take
// input_sizes and filter_sizes: their inputs alone do not determine it (a stride-2 convolution
// maps two input heights to one output height; the filter gradient's inputs never name R, S).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/profile_db.h"
#include "workloads/model_graph.h"

namespace orrery {

enum class ParamSource : unsigned char { kInputDim, kOutputDim, kAttr, kDType };

struct ParamDef {
  std::string name;  // "a.M", "x.C", "in0.d1", "stride_h", "dtype"
  ParamSource source = ParamSource::kInputDim;
  int tensor = 0;    // input index (kInputDim)
  int dim = 0;       // dimension index (kInputDim, kOutputDim)
  std::string attr;  // attribute name (kAttr)
  bool is_string() const { return source == ParamSource::kDType; }
  bool is_dim() const {
    return source == ParamSource::kInputDim || source == ParamSource::kOutputDim;
  }
};

// The parameter list of an op type: input ranks fixed, attributes the union of those seen.
struct OpSchema {
  std::string op;
  std::vector<int> input_ranks;
  std::vector<ParamDef> params;
};

// One op instance's parameter values, in schema order; strings (dtype) in `text`, numbers in
// `value` (the other member is unused).
struct ParamValue {
  double value = 0.0;
  std::string text;
};

// The default value of an attribute a row leaves out (models/profile_db.h drops groups,
// stride_*, dilation_* equal to 1 and pad_* equal to 0; any other missing attribute is 0).
int64_t attr_default(const std::string& name);

// An attribute that repeats what the shapes say (a convolution's kernel_h/kernel_w equal to
// its weight's R/S): ignored, whether or not the training rows had it.
bool is_redundant_attr(const ModelOp& op, const std::string& name, int64_t value);

// The schema of `type` for ops shaped like `example`, with the attributes `attr_names`.
OpSchema make_schema(const ModelOp& example, const std::vector<std::string>& attr_names);

// The op's values under `schema`, or nothing when the op does not fit it (other input ranks,
// another type, an attribute the schema lacks set to a non-default value, a zero dimension).
std::optional<std::vector<ParamValue>> extract_params(const OpSchema& schema, const ModelOp& op);

// A profile row as the op it measured (shapes, attrs and dtype parsed; InputError naming the
// row's origin when they are malformed).
ModelOp op_from_row(const ProfileRow& row);

// The identity of a row within its op and device: "inputs|output|attrs|dtype" in canonical
// text, used to record which rows a model held out.
std::string row_key(const ProfileRow& row);

}  // namespace orrery
