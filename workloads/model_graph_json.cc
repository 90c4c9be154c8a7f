#include "workloads/model_graph_json.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>
#include <sstream>
#include <unordered_map>

#include "common/atomic_file.h"
#include "common/errors.h"
#include "common/input_file.h"
#include "common/json_fields.h"
#include "common/suggest.h"
#include "workloads/model_graph_check.h"
#include "workloads/op_counts.h"

namespace orrery {

namespace {

using nlohmann::json;

constexpr const char* kFormat = "orrery-model";
constexpr int kVersion = 1;

const auto& describe = describe_json;

// JsonFields for an object that must be one, plus tensor shapes.
class Fields : public JsonFields {
 public:
  Fields(const json& obj, std::string where, const std::string& origin)
      : JsonFields(obj, std::move(where), origin) {
    if (!obj.is_object()) fail("must be an object, got " + describe(obj));
  }

  Shape shape(const json& v, const std::string& what) const {
    if (!v.is_array()) fail(what + " must be an array of dimensions, got " + describe(v));
    Shape s;
    for (const json& d : v) {
      if (!d.is_number_integer() || d.get<int64_t>() < 0)
        fail(what + " dimensions must be integers >= 0, got " + describe(d));
      s.push_back(d.get<int64_t>());
    }
    return s;
  }
};

std::string op_where(size_t i, const std::string& name) {
  std::string where = "ops[" + std::to_string(i) + "]";
  return name.empty() ? where : where + " \"" + name + "\"";
}

ModelOp read_op(const json& j, size_t i, const std::string& origin,
                std::vector<std::string>* deps) {
  ModelOp op;
  {
    Fields unnamed(j, op_where(i, ""), origin);
    op.name = unnamed.required_text("name");
    if (op.name.empty()) unnamed.fail("\"name\" must not be empty");
  }
  Fields f(j, op_where(i, op.name), origin);
  f.only({"name", "type", "phase", "layer", "dtype", "inputs", "output", "attrs", "flops", "bytes",
          "params", "grads", "grad_dtype", "sparse_grad", "deps"});
  op.type = f.required_text("type");
  if (!is_known_op_type(op.type)) {
    std::string list;
    for (const auto& t : known_op_types()) list += (list.empty() ? "" : ", ") + t;
    f.fail("unknown op type \"" + op.type + "\"" + did_you_mean(op.type, known_op_types()) +
           " (expected one of: " + list + ")");
  }
  std::string s = f.text_or("phase", "forward");
  if (!parse_phase(s, &op.phase))
    f.fail("unknown phase \"" + s + "\" (expected forward, backward or optimizer)");
  op.layer = f.text_or("layer", "");
  for (auto [key, out] : {std::pair<const char*, DType*>{"dtype", &op.dtype},
                          std::pair<const char*, DType*>{"grad_dtype", &op.grad_dtype}}) {
    s = f.text_or(key, "fp32");
    if (!parse_dtype(s, out))
      f.fail("unknown " + std::string(key) + " \"" + s + "\" (expected " + dtype_names() + ")");
  }
  if (const json* v = f.find("inputs")) {
    if (!v->is_array()) f.fail("\"inputs\" must be an array of shapes, got " + describe(*v));
    for (size_t k = 0; k < v->size(); ++k)
      op.inputs.push_back(f.shape((*v)[k], "inputs[" + std::to_string(k) + "]"));
  }
  if (const json* v = f.find("output")) op.output = f.shape(*v, "\"output\"");
  if (const json* v = f.find("attrs")) {
    if (!v->is_object()) f.fail("\"attrs\" must be an object of integers, got " + describe(*v));
    for (const auto& a : v->items()) {
      if (!a.value().is_number_integer())
        f.fail("attrs \"" + a.key() + "\" must be an integer, got " + describe(a.value()));
      op.attrs[a.key()] = a.value().get<int64_t>();
    }
  }
  op.flops = f.amount("flops");
  op.bytes = f.amount("bytes");
  op.params = f.amount("params");
  op.grads = f.amount("grads");
  op.sparse_grad = f.flag("sparse_grad");
  if (const json* v = f.find("deps")) {
    if (!v->is_array()) f.fail("\"deps\" must be an array of op names, got " + describe(*v));
    for (const json& d : *v) {
      if (!d.is_string()) f.fail("\"deps\" entries must be op names (strings), got " + describe(d));
      deps->push_back(d.get<std::string>());
    }
  }
  return op;
}

// nlohmann keeps the last of duplicate keys silently; a duplicate is almost always a mistake.
json parse_rejecting_duplicates(const std::string& text, const std::string& origin) {
  std::vector<std::set<std::string>> keys;
  json::parser_callback_t cb = [&](int, json::parse_event_t event, json& parsed) {
    using E = json::parse_event_t;
    if (event == E::object_start) keys.emplace_back();
    if (event == E::object_end) keys.pop_back();
    if (event == E::key && !keys.back().insert(parsed.get<std::string>()).second)
      throw InputError(origin + ": duplicate key \"" + parsed.get<std::string>() + "\"");
    return true;
  };
  try {
    return json::parse(text, cb);
  } catch (const json::parse_error& e) {
    const size_t pos = e.byte == 0 ? 0 : std::min<size_t>(e.byte - 1, text.size());
    const size_t line = 1 + std::count(text.begin(), text.begin() + pos, '\n');
    const size_t nl = pos == 0 ? std::string::npos : text.rfind('\n', pos - 1);
    const size_t col = nl == std::string::npos ? pos + 1 : pos - nl;
    std::string what = e.what();
    size_t at = what.find("syntax error");
    throw InputError(origin + ": line " + std::to_string(line) + ", column " + std::to_string(col) +
                     ": invalid JSON: " + (at == std::string::npos ? what : what.substr(at)));
  } catch (const json::exception& e) {
    // Not a syntax error but still the file's: a number too large for a double (1e400).
    throw InputError(origin + ": invalid JSON: " + e.what());
  }
}

}  // namespace

bool looks_like_model_graph_json(const std::string& text) {
  size_t at = text.find("\"format\"");
  return at != std::string::npos && at < 200 &&
         text.find(std::string("\"") + kFormat + "\"", at) < at + 40;
}

ModelGraph parse_model_graph_json(const std::string& text, const std::string& origin) {
  json root = parse_rejecting_duplicates(text, origin);
  Fields top(root, "", origin);
  top.only({"format", "version", "name", "batch", "hyper", "ops"});
  std::string format = top.required_text("format");
  if (format != kFormat) top.fail("\"format\" is \"" + format + "\", expected \"orrery-model\"");
  const json* version = top.find("version");
  if (version == nullptr) top.fail("missing \"version\": 1");
  if (!version->is_number_integer() || version->get<int64_t>() != kVersion)
    top.fail("unsupported \"version\" " + describe(*version) + " (this Orrery reads version 1)");

  ModelGraph g;
  g.name = top.required_text("name");
  g.batch = top.integer("batch", 1, 1);
  if (const json* h = top.find("hyper")) {
    if (!h->is_object()) top.fail("\"hyper\" must be an object, got " + describe(*h));
    for (const auto& kv : h->items()) {
      const json& v = kv.value();
      if (v.is_structured() || v.is_null())
        top.fail("hyper \"" + kv.key() + "\" must be a string, number or boolean");
      g.hyper[kv.key()] = v.is_string() ? v.get<std::string>() : v.dump();
    }
  }
  const json* ops = top.find("ops");
  if (ops == nullptr) top.fail("missing required key \"ops\"");
  if (!ops->is_array()) top.fail("\"ops\" must be an array, got " + describe(*ops));

  std::vector<std::vector<std::string>> deps(ops->size());
  g.ops.reserve(ops->size());
  for (size_t i = 0; i < ops->size(); ++i) g.ops.push_back(read_op((*ops)[i], i, origin, &deps[i]));
  std::unordered_map<std::string, int> index;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    if (!index.emplace(g.ops[i].name, static_cast<int>(i)).second)
      throw InputError(origin + ": " + op_where(i, g.ops[i].name) + ": duplicate op name");
  }
  for (size_t i = 0; i < g.ops.size(); ++i) {
    for (const auto& d : deps[i]) {
      auto it = index.find(d);
      if (it == index.end())
        throw InputError(origin + ": " + op_where(i, g.ops[i].name) + ": unknown dependency \"" +
                         d + "\" (expected an op name)");
      g.ops[i].deps.push_back(it->second);
    }
  }
  check_model_graph(g, origin);
  try {
    fill_op_counts(g);
  } catch (const InputError& e) {
    throw InputError(origin + ": " + e.what());
  }
  return g;
}

ModelGraph load_model_graph_json(const std::string& path) {
  return parse_model_graph_json(read_input_file(path, "orrery-model JSON file"), path);
}

void write_model_graph_json(const ModelGraph& g, std::ostream& out) {
  using nlohmann::ordered_json;
  ordered_json hyper = ordered_json::object();
  for (const auto& [k, v] : g.hyper) hyper[k] = v;
  out << "{\n  \"format\": \"" << kFormat << "\",\n  \"version\": " << kVersion
      << ",\n  \"name\": " << ordered_json(g.name).dump() << ",\n  \"batch\": " << g.batch
      << ",\n  \"hyper\": " << hyper.dump() << ",\n  \"ops\": [";
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const ModelOp& op = g.ops[i];
    ordered_json j;
    j["name"] = op.name;
    j["type"] = op.type;
    if (op.phase != Phase::kForward) j["phase"] = phase_name(op.phase);
    if (!op.layer.empty()) j["layer"] = op.layer;
    if (op.dtype != DType::kFP32) j["dtype"] = dtype_name(op.dtype);
    if (!op.inputs.empty()) j["inputs"] = op.inputs;
    if (!op.output.empty()) j["output"] = op.output;
    if (!op.attrs.empty()) {
      ordered_json a = ordered_json::object();
      for (const auto& [k, v] : op.attrs) a[k] = v;
      j["attrs"] = a;
    }
    const std::pair<const char*, double> amounts[] = {
        {"flops", op.flops}, {"bytes", op.bytes}, {"params", op.params}, {"grads", op.grads}};
    for (const auto& [key, v] : amounts)
      if (v != 0) j[key] = v;
    if (op.grad_dtype != DType::kFP32) j["grad_dtype"] = dtype_name(op.grad_dtype);
    if (op.sparse_grad) j["sparse_grad"] = true;
    if (!op.deps.empty()) {
      ordered_json d = ordered_json::array();
      for (int dep : op.deps) d.push_back(g.ops[dep].name);
      j["deps"] = d;
    }
    out << (i ? ",\n    " : "\n    ") << j.dump();
  }
  out << (g.ops.empty() ? "]\n}\n" : "\n  ]\n}\n");
}

void write_model_graph_json(const ModelGraph& g, const std::string& path) {
  write_atomically(path, [&](const std::string& tmp) {
    std::ofstream out(tmp, std::ios::binary);
    if (!out) throw std::runtime_error("cannot create " + tmp + ": " + std::strerror(errno));
    write_model_graph_json(g, out);
    out.close();
    if (!out) throw std::runtime_error("write failed");
  });
}

}  // namespace orrery
