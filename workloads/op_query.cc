#include "workloads/op_query.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <sstream>

#include "common/errors.h"
#include "common/suggest.h"
#include "workloads/attention_impl.h"
#include "workloads/op_counts.h"

namespace orrery {
namespace {

// How a data name becomes an op-graph op.
enum class Form { kBmm, kLinear, kConv, kRow, kBinary, kScalar, kUnary, kAttention };

struct DataOp {
  const char* type;  // op-graph type
  Form form;
};

const std::map<std::string, DataOp>& data_ops() {
  static const std::map<std::string, DataOp> ops = {
      {"bmm", {"bmm", Form::kBmm}},
      {"linear", {"matmul", Form::kLinear}},
      {"conv", {"conv2d", Form::kConv}},
      {"softmax", {"softmax", Form::kRow}},
      {"ln", {"layernorm", Form::kRow}},
      {"add", {"add", Form::kBinary}},
      {"mul", {"mul", Form::kBinary}},
      {"div", {"div", Form::kBinary}},
      {"pow", {"pow", Form::kBinary}},
      {"addu", {"add", Form::kScalar}},
      {"mulu", {"mul", Form::kScalar}},
      {"divu", {"div", Form::kScalar}},
      {"powu", {"pow", Form::kScalar}},
      {"relu", {"relu", Form::kUnary}},
      {"gelu", {"gelu", Form::kUnary}},
      {"tanh", {"tanh", Form::kUnary}},
      {"attention", {"attention", Form::kAttention}},
      {"attention_bwd", {"attention_bwd", Form::kAttention}}};
  return ops;
}

std::vector<std::string> fields_of(Form f) {
  switch (f) {
    case Form::kBmm:
    case Form::kLinear:
      return {"B", "M", "N", "K"};
    case Form::kConv:
      return {"B", "in_channels", "out_channels", "kernel_size", "input_size", "stride", "padding"};
    case Form::kAttention:
      return {"B", "S", "S_kv", "H", "KV", "D", "causal", "window", "impl"};
    default:
      return {"B", "H"};
  }
}

// The form of `op` when it takes the data's fields: a data name, or an op-graph type with the
// same meaning ("matmul" with B, M, N, K is "linear").
const DataOp* data_form(const std::string& op, const std::map<std::string, std::string>& fields) {
  // An op-graph type given its shapes (in=...) is the op-graph op, even where a data name is the
  // same word (attention).
  if (fields.count("in") && is_known_op_type(op)) return nullptr;
  auto it = data_ops().find(op);
  if (it != data_ops().end()) return &it->second;
  if (fields.count("in")) return nullptr;
  for (const auto& [name, d] : data_ops())
    if (d.type == op && (d.form != Form::kScalar)) return &d;
  return nullptr;
}

int64_t integer(const std::map<std::string, std::string>& fields, const std::string& key,
                const std::string& where) {
  auto it = fields.find(key);
  if (it == fields.end()) throw InputError(where + ": " + key + " is required");
  const std::string& text = it->second;
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || v < 0)
    throw InputError(where + ": " + key + ": expected a non-negative integer, got \"" + text +
                     "\"");
  return v;
}

Shape parse_shape(const std::string& text, const std::string& where, const std::string& key) {
  Shape s;
  std::stringstream ss(text);
  for (std::string d; std::getline(ss, d, 'x');) {
    char* end = nullptr;
    errno = 0;
    long long v = std::strtoll(d.c_str(), &end, 10);
    if (d.empty() || *end != '\0' || errno == ERANGE || v < 1)
      throw InputError(where + ": " + key + ": expected dimensions such as 64x1024, got \"" + text +
                       "\"");
    s.push_back(v);
  }
  if (s.empty()) throw InputError(where + ": " + key + ": expected a shape such as 64x1024");
  return s;
}

ModelOp graph_op(const std::string& op, const std::map<std::string, std::string>& fields,
                 const std::string& where) {
  ModelOp m;
  m.type = op;
  auto in = fields.find("in");
  if (in == fields.end())
    throw InputError(where + ": " + op + " needs in=SHAPE[;SHAPE...] (and out=SHAPE where its " +
                     "type requires one; docs/op-graph-format.md)");
  std::stringstream ss(in->second);
  for (std::string t; std::getline(ss, t, ';');) m.inputs.push_back(parse_shape(t, where, "in"));
  if (auto out = fields.find("out"); out != fields.end())
    m.output = parse_shape(out->second, where, "out");
  for (const auto& [k, v] : fields)
    if (k != "in" && k != "out" && k != "op") m.attrs[k] = integer(fields, k, where);
  return m;
}

}  // namespace

std::vector<std::string> query_op_names() {
  std::vector<std::string> names;
  for (const auto& [name, d] : data_ops()) names.push_back(name);
  for (const auto& t : known_op_types())
    if (!data_ops().count(t)) names.push_back(t);
  return names;
}

std::vector<std::string> query_fields(const std::string& op) {
  auto it = data_ops().find(op);
  if (it != data_ops().end()) return fields_of(it->second.form);
  return {"in", "out"};
}

ModelOp query_op(const std::string& op, const std::map<std::string, std::string>& fields,
                 DType dtype, const std::string& where) {
  const DataOp* d = data_form(op, fields);
  if (!d && !is_known_op_type(op)) {
    throw InputError(where + ": unknown op \"" + op + "\"" + did_you_mean(op, query_op_names()) +
                     "; known: " + join_names(query_op_names()));
  }
  ModelOp m;
  if (!d) {
    m = graph_op(op, fields, where);
  } else {
    m.type = d->type;
    auto get = [&](const char* key) { return integer(fields, key, where); };
    switch (d->form) {
      case Form::kBmm:
        m.inputs = {{get("B"), get("M"), get("K")}, {get("B"), get("K"), get("N")}};
        m.output = {get("B"), get("M"), get("N")};
        break;
      case Form::kLinear:
        m.inputs = {{get("B"), get("M"), get("K")}, {get("K"), get("N")}};
        m.output = {get("B"), get("M"), get("N")};
        break;
      case Form::kConv: {
        const int64_t b = get("B"), c = get("in_channels"), k = get("out_channels");
        const int64_t r = get("kernel_size"), s = get("input_size"), stride = get("stride");
        const int64_t pad = get("padding");
        if (stride < 1) throw InputError(where + ": stride must be at least 1");
        const int64_t p = (s + 2 * pad - r) / stride + 1;
        if (s + 2 * pad < r || p < 1)
          throw InputError(where + ": kernel_size " + std::to_string(r) +
                           " is larger than the padded input (" + std::to_string(s + 2 * pad) +
                           ")");
        m.inputs = {{b, c, s, s}, {k, c, r, r}};
        m.output = {b, k, p, p};
        m.attrs = {{"stride_h", stride}, {"stride_w", stride}, {"pad_h", pad}, {"pad_w", pad}};
        break;
      }
      case Form::kAttention: {
        // S_kv defaults to S (self-attention), KV to H (no grouping), causal to 1 (a decoder's
        // training step), window to 0 (every key).
        auto get_or = [&](const char* key, int64_t fallback) {
          return fields.count(key) ? get(key) : fallback;
        };
        const int64_t b = get("B"), s = get("S"), h = get("H"), dim = get("D");
        const int64_t kv = get_or("KV", h), skv = get_or("S_kv", s);
        m.inputs = {{b, h, s, dim}, {b, kv, skv, dim}, {b, kv, skv, dim}};
        m.output = {b, h, s, dim};
        m.attrs = {{"causal", get_or("causal", 1)}, {"window", get_or("window", 0)}};
        if (auto it = fields.find("impl"); it != fields.end() && !it->second.empty()) {
          AttentionImpl impl;
          if (!parse_attention_impl(it->second, &impl))
            throw InputError(where + ": impl: expected " + attention_impl_names() + ", got \"" +
                             it->second + "\"");
          m.attrs["impl"] = static_cast<int64_t>(impl);
        }
        break;
      }
      case Form::kRow:
      case Form::kScalar:
      case Form::kUnary:
        m.inputs = {{get("B"), get("H")}};
        break;
      case Form::kBinary:
        m.inputs = {{get("B"), get("H")}, {get("B"), get("H")}};
        break;
    }
  }
  m.name = op;
  m.dtype = dtype;
  try {
    const OpCounts c = count_op(m);
    m.flops = c.flops;
    m.bytes = c.bytes;
  } catch (const InputError& e) {
    throw InputError(where + ": " + e.what());
  }
  return m;
}

}  // namespace orrery
