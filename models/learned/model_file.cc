#include "models/learned/model_file.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <type_traits>

#include "common/atomic_file.h"
#include "common/errors.h"
#include "common/input_file.h"
#include "common/units.h"

namespace orrery {
namespace {

using nlohmann::json;

constexpr const char* kFormat = "orrery-learned-estimator";
constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string doubles_to_b64(const std::vector<double>& v) {
  std::string bytes(v.size() * 8, '\0');
  for (size_t i = 0; i < v.size(); ++i) {
    uint64_t bits;
    std::memcpy(&bits, &v[i], 8);
    for (int b = 0; b < 8; ++b) bytes[8 * i + b] = static_cast<char>((bits >> (8 * b)) & 0xff);
  }
  std::string out;
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t n = static_cast<unsigned char>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) n |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    if (i + 2 < bytes.size()) n |= static_cast<unsigned char>(bytes[i + 2]);
    out += kB64[(n >> 18) & 63];
    out += kB64[(n >> 12) & 63];
    out += i + 1 < bytes.size() ? kB64[(n >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? kB64[n & 63] : '=';
  }
  return out;
}

bool b64_to_doubles(const std::string& s, std::vector<double>* out) {
  int val[256];
  std::fill(val, val + 256, -1);
  for (int i = 0; i < 64; ++i) val[static_cast<unsigned char>(kB64[i])] = i;
  if (s.size() % 4) return false;
  std::string bytes;
  for (size_t i = 0; i < s.size(); i += 4) {
    uint32_t n = 0;
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      char c = s[i + k];
      if (c == '=') {
        ++pad;
        n <<= 6;
        continue;
      }
      int d = val[static_cast<unsigned char>(c)];
      if (d < 0 || pad) return false;
      n = (n << 6) | static_cast<uint32_t>(d);
    }
    bytes += static_cast<char>((n >> 16) & 0xff);
    if (pad < 2) bytes += static_cast<char>((n >> 8) & 0xff);
    if (pad < 1) bytes += static_cast<char>(n & 0xff);
  }
  if (bytes.size() % 8) return false;
  out->resize(bytes.size() / 8);
  for (size_t i = 0; i < out->size(); ++i) {
    uint64_t bits = 0;
    for (int b = 0; b < 8; ++b)
      bits |= uint64_t(static_cast<unsigned char>(bytes[8 * i + b])) << (8 * b);
    std::memcpy(&(*out)[i], &bits, 8);
  }
  return true;
}

const char* source_name(ParamSource s) {
  switch (s) {
    case ParamSource::kInputDim:
      return "input_dim";
    case ParamSource::kOutputDim:
      return "output_dim";
    case ParamSource::kAttr:
      return "attr";
    case ParamSource::kDType:
      return "dtype";
  }
  return "?";
}

json hyper_json(const TrainOptions& h) {
  return {{"lr", h.lr},
          {"batch", h.batch},
          {"max_epochs", h.max_epochs},
          {"patience", h.patience},
          {"decay_after", h.decay_after},
          {"seed", h.seed}};
}

json net_json(const ScaledNet& n) {
  return {{"layers", n.net.layers()},
          {"neurons", n.net.neurons()},
          {"inputs", n.net.inputs()},
          {"x_mean", n.x_mean},
          {"x_scale", n.x_scale},
          {"y_mean", n.y_mean},
          {"y_scale", n.y_scale},
          {"hyper", hyper_json(n.hyper)},
          {"validation_error", n.val_error},
          {"test_error", n.test_error},
          {"weights_f64le_base64", doubles_to_b64(n.net.params())}};
}

json candidate_json(const Candidate& c, const std::vector<ParamDef>& params) {
  json lin = json::array(), inv = json::array();
  for (int i : c.linear) lin.push_back(params[i].name);
  for (int i : c.inverse) inv.push_back(params[i].name);
  return {{"text", candidate_text(c, params)}, {"linear", lin}, {"inverse", inv}};
}

json op_json(const OpModel& m) {
  json params = json::array();
  for (size_t i = 0; i < m.schema.params.size(); ++i) {
    const ParamDef& d = m.schema.params[i];
    json p = {{"name", d.name},
              {"source", source_name(d.source)},
              {"kind", param_kind_name(m.params[i].kind)},
              {"distinct", m.params[i].distinct}};
    if (d.is_dim()) p["tensor"] = d.tensor, p["dim"] = d.dim;
    if (d.source == ParamSource::kAttr) p["attr"] = d.attr;
    params.push_back(p);
  }
  json search = json::array();
  for (const auto& t : m.pc_search)
    search.push_back({{"pc", candidate_text(t.candidate, m.schema.params)},
                      {"validation_error", t.val_error},
                      {"full", t.full}});
  json groups = json::array();
  std::vector<int> fp = m.feature_params();
  for (const auto& g : m.groups) {
    json mode = json::object();
    size_t k = 0;
    for (size_t i = 0; i < m.params.size(); ++i)
      if (m.params[i].kind == ParamKind::kMode) mode[m.schema.params[i].name] = g.mode[k++];
    json range = json::object();
    for (size_t f = 0; f < fp.size(); ++f) range[m.schema.params[fp[f]].name] = {g.lo[f], g.hi[f]};
    json arch = json::array();
    for (const auto& a : g.search)
      arch.push_back({{"layers", a.layers},
                      {"neurons", a.neurons},
                      {"validation_error", a.val_error},
                      {"epochs", a.epochs}});
    groups.push_back(
        {{"mode", mode},
         {"rows", {{"train", g.train_rows}, {"validation", g.val_rows}, {"test", g.test_rows}}},
         {"range", range},
         {"model", net_json(g.model)},
         {"no_pc", net_json(g.no_pc)},
         {"architecture_search", arch}});
  }
  json forms = json::array();
  for (const auto& f : m.input_forms)
    forms.push_back({{"inputs", f.log_inputs ? "log" : "linear"},
                     {"principal_component", candidate_text(f.pc, m.schema.params)},
                     {"validation_error", f.val_error},
                     {"no_pc_validation_error", f.no_pc_val_error}});
  return {{"op", m.op},
          {"device", m.device},
          {"input_ranks", m.schema.input_ranks},
          {"rows", m.rows},
          {"skipped_rows", m.skipped_rows},
          {"inputs", m.log_inputs ? "log" : "linear"},
          {"params", params},
          {"principal_component", candidate_json(m.pc, m.schema.params)},
          {"pc_search", search},
          {"input_forms", forms},
          {"groups", groups},
          {"held_out", m.held_out}};
}

// Reading: every access goes through here so errors name the file and the item.
class Reader {
 public:
  explicit Reader(std::string origin) : origin_(std::move(origin)) {}
  [[noreturn]] void fail(const std::string& item, const std::string& what) const {
    throw InputError(origin_ + ": " + item + ": " + what);
  }
  const json& at(const json& j, const std::string& key, const std::string& item) const {
    if (!j.is_object() || !j.contains(key)) fail(item, "missing \"" + key + "\"");
    return j.at(key);
  }
  template <typename T>
  T get(const json& j, const std::string& key, const std::string& item) const {
    const json& v = at(j, key, item);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      // nlohmann's get<int> wraps (4294967297 becomes 1) and truncates 1.5: check first.
      if (!v.is_number_integer())
        fail(item + "." + key, std::string("expected an integer, got ") + v.type_name());
      const bool fits =
          v.is_number_unsigned()
              ? v.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<T>::max())
              : std::is_signed_v<T> &&
                    v.get<int64_t>() >= static_cast<int64_t>(std::numeric_limits<T>::min());
      if (!fits)
        fail(item + "." + key, v.dump() + " is out of range (" +
                                   std::to_string(std::numeric_limits<T>::min()) + " to " +
                                   std::to_string(std::numeric_limits<T>::max()) + ")");
      return static_cast<T>(v.is_number_unsigned() ? static_cast<T>(v.get<uint64_t>())
                                                   : static_cast<T>(v.get<int64_t>()));
    }
    try {
      return v.get<T>();
    } catch (const json::exception& e) {
      fail(item + "." + key, e.what());
    }
  }

  ScaledNet net(const json& j, const std::string& item) const {
    ScaledNet n;
    int inputs = get<int>(j, "inputs", item), layers = get<int>(j, "layers", item),
        neurons = get<int>(j, "neurons", item);
    if (inputs < 1 || layers < 1 || neurons < 1)
      fail(item, "inputs, layers and neurons must be positive");
    std::vector<double> w;
    if (!b64_to_doubles(get<std::string>(j, "weights_f64le_base64", item), &w))
      fail(item, "weights_f64le_base64 is not base64 of doubles");
    // The shape must match the weights the file holds before a net of that shape is allocated:
    // a damaged "neurons" must not ask for terabytes. Counted as Mlp lays them out.
    const double in = inputs, wide = neurons;
    const double want = in * wide + wide + (layers - 1.0) * (wide * wide + wide) + wide + 1.0;
    if (want != static_cast<double>(w.size()))
      fail(item, "has " + std::to_string(w.size()) + " weights, a net of " +
                     std::to_string(inputs) + " inputs, " + std::to_string(layers) + " layers of " +
                     std::to_string(neurons) + " neurons needs " + format_exact(want));
    n.net = Mlp(inputs, layers, neurons);
    if (w.size() != n.net.params().size())
      fail(item, "has " + std::to_string(w.size()) + " weights, its shape needs " +
                     std::to_string(n.net.params().size()));
    n.net.params() = std::move(w);
    n.x_mean = get<std::vector<double>>(j, "x_mean", item);
    n.x_scale = get<std::vector<double>>(j, "x_scale", item);
    if (n.x_mean.size() != static_cast<size_t>(inputs) || n.x_scale.size() != n.x_mean.size())
      fail(item, "x_mean and x_scale need one value per input");
    n.y_mean = get<double>(j, "y_mean", item);
    n.y_scale = get<double>(j, "y_scale", item);
    const json& h = at(j, "hyper", item);
    n.hyper.lr = get<double>(h, "lr", item + ".hyper");
    n.hyper.batch = get<int>(h, "batch", item + ".hyper");
    n.hyper.max_epochs = get<int>(h, "max_epochs", item + ".hyper");
    n.hyper.patience = get<int>(h, "patience", item + ".hyper");
    n.hyper.decay_after = get<int>(h, "decay_after", item + ".hyper");
    n.hyper.seed = get<uint64_t>(h, "seed", item + ".hyper");
    n.val_error = get<double>(j, "validation_error", item);
    n.test_error = get<double>(j, "test_error", item);
    return n;
  }

  int param_index(const OpModel& m, const std::string& name, const std::string& item) const {
    for (size_t i = 0; i < m.schema.params.size(); ++i)
      if (m.schema.params[i].name == name) return static_cast<int>(i);
    fail(item, "unknown parameter \"" + name + "\"");
  }

  Candidate candidate(const OpModel& m, const json& j, const std::string& item) const {
    Candidate c;
    for (const auto& n : get<std::vector<std::string>>(j, "linear", item))
      c.linear.push_back(param_index(m, n, item));
    for (const auto& n : get<std::vector<std::string>>(j, "inverse", item))
      c.inverse.push_back(param_index(m, n, item));
    return c;
  }

  // The inverse of candidate_text: "a*b/c", "1/c", "1".
  Candidate candidate_from_text(const OpModel& m, const std::string& text,
                                const std::string& item) const {
    Candidate c;
    size_t pos = 0;
    bool inverse = false;
    while (pos <= text.size()) {
      size_t end = text.find_first_of("*/", pos);
      if (end == std::string::npos) end = text.size();
      std::string name = text.substr(pos, end - pos);
      if (!(name == "1" && !inverse && c.linear.empty()))
        (inverse ? c.inverse : c.linear).push_back(param_index(m, name, item));
      if (end < text.size() && text[end] == '/') inverse = true;
      pos = end + 1;
    }
    std::sort(c.linear.begin(), c.linear.end());
    std::sort(c.inverse.begin(), c.inverse.end());
    return c;
  }

  OpModel op(const json& j, const std::string& item0) const {
    OpModel m;
    m.op = get<std::string>(j, "op", item0);
    const std::string item = item0 + " (" + m.op + ")";
    m.device = get<std::string>(j, "device", item);
    m.schema.op = m.op;
    m.schema.input_ranks = get<std::vector<int>>(j, "input_ranks", item);
    m.rows = get<size_t>(j, "rows", item);
    m.skipped_rows = get<size_t>(j, "skipped_rows", item);
    std::string inputs = get<std::string>(j, "inputs", item);
    if (inputs != "log" && inputs != "linear") fail(item + ".inputs", "must be log or linear");
    m.log_inputs = inputs == "log";
    const json& params = at(j, "params", item);
    if (!params.is_array()) fail(item + ".params", "expected a list");
    for (size_t i = 0; i < params.size(); ++i) {
      std::string pi = item + ".params[" + std::to_string(i) + "]";
      const json& p = params[i];
      ParamDef d;
      d.name = get<std::string>(p, "name", pi);
      std::string src = get<std::string>(p, "source", pi);
      if (src == "input_dim" || src == "output_dim") {
        d.source = src == "input_dim" ? ParamSource::kInputDim : ParamSource::kOutputDim;
        d.tensor = get<int>(p, "tensor", pi);
        d.dim = get<int>(p, "dim", pi);
        if (d.source == ParamSource::kInputDim &&
            (d.tensor < 0 || d.tensor >= static_cast<int>(m.schema.input_ranks.size()) ||
             d.dim < 0 || d.dim >= m.schema.input_ranks[d.tensor]))
          fail(pi, "tensor/dim outside input_ranks");
        if (d.dim < 0) fail(pi, "negative dim");
      } else if (src == "attr") {
        d.source = ParamSource::kAttr;
        d.attr = get<std::string>(p, "attr", pi);
      } else if (src == "dtype") {
        d.source = ParamSource::kDType;
      } else {
        fail(pi, "source must be input_dim, output_dim, attr or dtype, not \"" + src + "\"");
      }
      ParamInfo info;
      if (!parse_param_kind(get<std::string>(p, "kind", pi), &info.kind))
        fail(pi, "kind must be linear, inverse, null or mode");
      info.distinct = get<size_t>(p, "distinct", pi);
      m.schema.params.push_back(d);
      m.params.push_back(info);
    }
    m.pc = candidate(m, at(j, "principal_component", item), item + ".principal_component");
    const json& search = at(j, "pc_search", item);
    for (size_t i = 0; i < search.size(); ++i) {
      std::string si = item + ".pc_search[" + std::to_string(i) + "]";
      m.pc_search.push_back({candidate_from_text(m, get<std::string>(search[i], "pc", si), si),
                             get<double>(search[i], "validation_error", si),
                             get<bool>(search[i], "full", si)});
    }
    const json& forms = at(j, "input_forms", item);
    for (size_t i = 0; i < forms.size(); ++i) {
      std::string fi = item + ".input_forms[" + std::to_string(i) + "]";
      std::string in = get<std::string>(forms[i], "inputs", fi);
      if (in != "log" && in != "linear") fail(fi + ".inputs", "must be log or linear");
      m.input_forms.push_back(
          {in == "log",
           candidate_from_text(m, get<std::string>(forms[i], "principal_component", fi), fi),
           get<double>(forms[i], "validation_error", fi),
           get<double>(forms[i], "no_pc_validation_error", fi)});
    }
    size_t modes = 0;
    for (const auto& p : m.params) modes += p.kind == ParamKind::kMode;
    const size_t features = m.feature_params().size();
    const json& groups = at(j, "groups", item);
    if (!groups.is_array()) fail(item + ".groups", "expected a list");
    for (size_t gi = 0; gi < groups.size(); ++gi) {
      std::string g_item = item + ".groups[" + std::to_string(gi) + "]";
      const json& gj = groups[gi];
      ModeGroup g;
      const json& mode = at(gj, "mode", g_item);
      for (size_t i = 0; i < m.params.size(); ++i)
        if (m.params[i].kind == ParamKind::kMode)
          g.mode.push_back(get<std::string>(mode, m.schema.params[i].name, g_item + ".mode"));
      if (g.mode.size() != modes || mode.size() != modes)
        fail(g_item + ".mode", "needs one value per mode parameter");
      const json& rows = at(gj, "rows", g_item);
      g.train_rows = get<size_t>(rows, "train", g_item + ".rows");
      g.val_rows = get<size_t>(rows, "validation", g_item + ".rows");
      g.test_rows = get<size_t>(rows, "test", g_item + ".rows");
      const json& range = at(gj, "range", g_item);
      for (int f : m.feature_params()) {
        auto r = get<std::vector<double>>(range, m.schema.params[f].name, g_item + ".range");
        if (r.size() != 2) fail(g_item + ".range", "expected [low, high]");
        g.lo.push_back(r[0]);
        g.hi.push_back(r[1]);
      }
      g.model = net(at(gj, "model", g_item), g_item + ".model");
      g.no_pc = net(at(gj, "no_pc", g_item), g_item + ".no_pc");
      if (g.model.net.inputs() != static_cast<int>(features + 1) ||
          g.no_pc.net.inputs() != static_cast<int>(features))
        fail(g_item, "network inputs do not match the op's " + std::to_string(features) +
                         " feature parameters (+1 for the principal component)");
      const json& arch = at(gj, "architecture_search", g_item);
      for (size_t a = 0; a < arch.size(); ++a) {
        std::string ai = g_item + ".architecture_search[" + std::to_string(a) + "]";
        g.search.push_back({get<int>(arch[a], "layers", ai), get<int>(arch[a], "neurons", ai),
                            get<double>(arch[a], "validation_error", ai),
                            get<int>(arch[a], "epochs", ai)});
      }
      m.groups.push_back(std::move(g));
    }
    m.held_out = get<std::vector<std::string>>(j, "held_out", item);
    return m;
  }

 private:
  std::string origin_;
};

}  // namespace

std::string learned_model_to_json(const LearnedModel& model) {
  json sources = json::array();
  for (const auto& s : model.sources)
    sources.push_back(
        {{"path", s.path}, {"sha256", s.sha256}, {"rows", s.rows}, {"header", s.header}});
  json ops = json::array();
  for (const auto& m : model.ops) ops.push_back(op_json(m));
  json j = {{"format", kFormat},
            {"format_version", kLearnedModelFormatVersion},
            {"method",
             "Tianshu MLP with a principal-component feature "
             "(\"Tianshu: Towards Accurate Measuring, Modeling and Simulation of Deep Neural "
             "Networks\" (Huang, Xu, Guan) section 3.2)"},
            {"training",
             {{"command", model.command},
              {"seed", model.seed},
              {"budget_s", model.budget_s},
              {"test_fraction", model.test_fraction},
              {"validation_fraction", model.val_fraction},
              {"sources", sources}}},
            {"ops", ops}};
  return j.dump(1) + "\n";
}

namespace {
LearnedModel parse_learned_model(const std::string& text, const std::string& origin);
}  // namespace

LearnedModel learned_model_from_json(const std::string& text, const std::string& origin) {
  // Every access is checked where it names the item; anything that still slips through (a
  // list where an object belongs, a number out of range) is the file's fault too.
  try {
    return parse_learned_model(text, origin);
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    throw InputError(origin + ": not a valid learned-estimator file: " + e.what());
  }
}

namespace {

LearnedModel parse_learned_model(const std::string& text, const std::string& origin) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw InputError(origin + ": not JSON: " + e.what());
  }
  Reader r(origin);
  if (!j.is_object() || !j.contains("format") || j["format"] != kFormat)
    r.fail("format", std::string("not an Orrery learned-estimator file (format \"") + kFormat +
                         "\" expected)");
  int version = r.get<int>(j, "format_version", "file");
  if (version != kLearnedModelFormatVersion)
    r.fail("format_version", "version " + std::to_string(version) + " is not supported (" +
                                 std::to_string(kLearnedModelFormatVersion) + " is)");
  LearnedModel m;
  const json& t = r.at(j, "training", "file");
  m.command = r.get<std::string>(t, "command", "training");
  m.seed = r.get<uint64_t>(t, "seed", "training");
  m.budget_s = r.get<double>(t, "budget_s", "training");
  m.test_fraction = r.get<double>(t, "test_fraction", "training");
  m.val_fraction = r.get<double>(t, "validation_fraction", "training");
  const json& sources = r.at(t, "sources", "training");
  for (size_t i = 0; i < sources.size(); ++i) {
    std::string item = "training.sources[" + std::to_string(i) + "]";
    m.sources.push_back({r.get<std::string>(sources[i], "path", item),
                         r.get<std::string>(sources[i], "sha256", item),
                         r.get<size_t>(sources[i], "rows", item),
                         r.get<std::vector<std::string>>(sources[i], "header", item)});
  }
  const json& ops = r.at(j, "ops", "file");
  if (!ops.is_array()) r.fail("ops", "expected a list");
  for (size_t i = 0; i < ops.size(); ++i) {
    m.ops.push_back(r.op(ops[i], "ops[" + std::to_string(i) + "]"));
  }
  return m;
}

}  // namespace

void write_learned_model(const std::string& path, const LearnedModel& model) {
  const std::string text = learned_model_to_json(model);
  write_atomically(path, [&](const std::string& tmp) {
    std::ofstream out(tmp, std::ios::binary);
    if (!out) throw std::runtime_error("cannot create " + tmp + ": " + std::strerror(errno));
    out << text;
    out.close();
    if (!out) throw std::runtime_error("write failed");
  });
}

LearnedModel read_learned_model(const std::string& path) {
  return learned_model_from_json(read_input_file(path, "learned-estimator model file"), path);
}

}  // namespace orrery
