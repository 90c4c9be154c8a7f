#include "platforms/device_spec.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include "common/embedded_data.h"
#include "common/errors.h"
#include "common/input_limits.h"
#include "common/named_set.h"
#include "common/suggest.h"
#include "common/units.h"
#include "common/yaml_reader.h"

namespace orrery {
namespace {

// Keys that change how fast kernels run (as opposed to labels or host overheads).
const char* const kSpeedKeys[] = {"fp32",    "fp16",         "bf16",    "tf32_tc",
                                  "fp16_tc", "bf16_tc",      "int8_tc", "fp8_tc",
                                  "fp4_tc",  "mem_bw",       "l2_bw",   "sms",
                                  "l2_size", "tensor_cores", "clock",   "fp32_cores_per_sm",
                                  "memory",  "process_nm",   "sfu",     "compute_capability"};

// Within the accepted range (common/input_limits.h); 0 keeps its meaning ("same as fp32",
// "estimate it") where `zero_ok`. A 1e-300 flop/s device would make every op last forever.
void in_range(const YamlMap& m, const std::string& key, double v, const Range& r,
              bool zero_ok = true) {
  if (!(zero_ok && v == 0) && !r.contains(v)) m.fail(key, out_of_range(v, r));
}

void read_rate(const YamlMap& m, const char* key, double* v, std::vector<std::string>* seen) {
  if (!m.has(key)) return;
  *v = m.flops(key, *v);
  in_range(m, key, *v, limits::kFlopRate);
  seen->push_back(key);
}

void read_host(const YamlMap& m, HostOverheads* h, std::vector<std::string>* seen) {
  struct Field {
    const char* key;
    double* v;
  };
  for (Field f : {Field{"t1", &h->t1}, Field{"t2", &h->t2}, Field{"t3", &h->t3},
                  Field{"t4", &h->t4}, Field{"t5", &h->t5}, Field{"gap", &h->gap}}) {
    if (!m.has(f.key)) continue;
    *f.v = m.time(f.key, *f.v);
    in_range(m, f.key, *f.v, limits::kLatency);
    seen->push_back(std::string("host_overheads.") + f.key);
  }
  if (m.has("synchronous")) {
    h->synchronous = m.boolean("synchronous", h->synchronous);
    seen->push_back("host_overheads.synchronous");
  }
  // Per-op framework times of synchronous devices may be negative (see HostOverheads).
  for (Field f : {Field{"forward", &h->forward}, Field{"backward", &h->backward},
                  Field{"optimizer", &h->optimizer}, Field{"step", &h->step}}) {
    if (!m.has(f.key)) continue;
    *f.v = std::string(f.key) == "step" ? m.time(f.key, *f.v) : m.signed_time(f.key, *f.v);
    in_range(m, f.key, std::fabs(*f.v), limits::kLatency);
    seen->push_back(std::string("host_overheads.") + f.key);
  }
  m.reject_unknown_keys();
}

// Reads every field present in `m` into `d`, recording the keys it saw. A spec file may also
// carry its labels (description, aliases, sources); an override may only change values.
void read_fields(const YamlMap& m, DeviceSpec* d, bool spec_file, std::vector<std::string>* seen) {
  if (spec_file) {
    d->description = m.str("description", d->description);
    if (m.has("aliases")) d->aliases = m.str_list("aliases");
    if (m.has("sources")) d->sources = m.str_list("sources");
  }
  read_rate(m, "fp32", &d->fp32, seen);
  read_rate(m, "fp16", &d->fp16, seen);
  read_rate(m, "bf16", &d->bf16, seen);
  read_rate(m, "tf32_tc", &d->tf32_tc, seen);
  read_rate(m, "fp16_tc", &d->fp16_tc, seen);
  read_rate(m, "bf16_tc", &d->bf16_tc, seen);
  read_rate(m, "int8_tc", &d->int8_tc, seen);
  read_rate(m, "fp8_tc", &d->fp8_tc, seen);
  read_rate(m, "fp4_tc", &d->fp4_tc, seen);
  read_rate(m, "sfu", &d->sfu, seen);
  for (auto [key, v] : {std::pair<const char*, double*>{"mem_bw", &d->mem_bw},
                        std::pair<const char*, double*>{"l2_bw", &d->l2_bw}}) {
    if (!m.has(key)) continue;
    *v = m.bandwidth(key, *v);
    in_range(m, key, *v, limits::kBandwidth);
    seen->push_back(key);
  }
  for (auto [key, v] : {std::pair<const char*, double*>{"l2_size", &d->l2_bytes},
                        std::pair<const char*, double*>{"mem_size", &d->mem_bytes}}) {
    if (!m.has(key)) continue;
    *v = m.size(key, *v);
    in_range(m, key, *v, limits::kBytes);
    seen->push_back(key);
  }
  if (m.has("sms")) {
    d->sms = m.integer("sms", d->sms);
    if (d->sms < 1) m.fail("sms", "must be at least 1");
    in_range(m, "sms", d->sms, limits::kSms);
    seen->push_back("sms");
  }
  if (m.has("tensor_cores")) {
    d->tensor_cores = m.boolean("tensor_cores", d->tensor_cores);
    seen->push_back("tensor_cores");
  }
  if (m.has("clock")) {
    d->clock = m.frequency("clock", d->clock, limits::kClockHz);
    seen->push_back("clock");
  }
  if (m.has("fp32_cores_per_sm")) {
    d->fp32_cores_per_sm = m.integer("fp32_cores_per_sm", d->fp32_cores_per_sm, 1, 4096);
    seen->push_back("fp32_cores_per_sm");
  }
  if (m.has("tdp_w")) {
    d->tdp_w = m.number("tdp_w", d->tdp_w, limits::kPowerWatts);
    seen->push_back("tdp_w");
  }
  if (m.has("memory")) {
    d->memory = m.str("memory", d->memory);
    std::string up = d->memory;
    for (char& c : up) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (up.rfind("HBM", 0) != 0 && up.rfind("GDDR", 0) != 0 && up.rfind("LPDDR", 0) != 0)
      m.fail("memory", "must name a DRAM type: HBM2, HBM2e, HBM3, HBM3e, GDDR5, GDDR6, LPDDR5...");
    d->memory = up;
    for (size_t i = 0; i < up.size(); ++i)  // keep the lower-case "e" of HBM2e / HBM3e
      if (up[i] == 'E' && i > 0 && std::isdigit(static_cast<unsigned char>(up[i - 1])))
        d->memory[i] = 'e';
    seen->push_back("memory");
  }
  if (m.has("process_nm")) {
    d->process_nm = m.number("process_nm", d->process_nm, limits::kProcessNm);
    seen->push_back("process_nm");
  }
  if (m.has("compute_capability")) {
    d->compute_capability =
        m.number("compute_capability", d->compute_capability, limits::kComputeCapability);
    seen->push_back("compute_capability");
  }
  if (m.has("host_overheads")) read_host(m.map("host_overheads"), &d->host, seen);
}

void check_complete(const YamlMap& m, const DeviceSpec& d) {
  if (d.fp32 <= 0) m.fail("fp32", "is required and must be positive");
  if (d.mem_bw <= 0) m.fail("mem_bw", "is required and must be positive");
  if (d.sms < 1) m.fail("sms", "is required (streaming multiprocessors, at least 1)");
  if (d.mem_bytes <= 0) m.fail("mem_size", "is required and must be positive");
  if (d.tensor_cores && d.fp16_tc <= 0 && d.bf16_tc <= 0 && d.tf32_tc <= 0 && d.int8_tc <= 0)
    m.fail("tensor_cores", "is true but no Tensor Core rate (fp16_tc, bf16_tc, tf32_tc, int8_tc)");
}

const NamedSet<DeviceSpec>& registry() {
  static const NamedSet<DeviceSpec> reg = [] {
    NamedSet<DeviceSpec> r("device", "platforms/devices");
    for (const auto& [stem, text] : embedded_files("device_specs")) {
      DeviceSpec d = parse_device_spec_file(text, stem, "platforms/devices/" + stem + ".yaml");
      const std::vector<std::string> aliases = d.aliases;
      r.add(stem, std::move(d), aliases);
    }
    return r;
  }();
  return reg;
}

std::string known_list() {
  std::string s;
  for (const auto& n : device_spec_names()) s += (s.empty() ? "" : ", ") + n;
  return s;
}

}  // namespace

double DeviceSpec::peak_flops(DType t, bool tensor_core) const {
  auto or_fp32 = [this](double v) { return v > 0 ? v : fp32; };
  bool tc = tensor_core && has_tensor_core_path(t);
  switch (t) {
    case DType::kFP16:
      return tc ? fp16_tc : or_fp32(fp16);
    case DType::kBF16:
      return tc ? bf16_tc : or_fp32(bf16);
    case DType::kTF32:
      return tc ? tf32_tc : fp32;
    case DType::kINT8:
      return tc ? int8_tc : fp32;
    case DType::kFP8:
      // No FP8 Tensor Cores: the GEMM runs in bf16 (or fp16) after all.
      return tc ? fp8_tc : peak_flops(bf16_tc > 0 ? DType::kBF16 : DType::kFP16, tensor_core);
    case DType::kFP4:
      // No FP4 Tensor Cores: dequantized and multiplied in FP8 where it can be, else bf16.
      return tc ? fp4_tc : peak_flops(DType::kFP8, tensor_core);
    default:
      return fp32;
  }
}

bool DeviceSpec::has_tensor_core_path(DType t) const {
  if (!tensor_cores) return false;
  switch (t) {
    case DType::kFP16:
      return fp16_tc > 0;
    case DType::kBF16:
      return bf16_tc > 0;
    case DType::kTF32:
      return tf32_tc > 0;
    case DType::kINT8:
      return int8_tc > 0;
    case DType::kFP8:
      return fp8_tc > 0;
    case DType::kFP4:
      return fp4_tc > 0;
    default:
      return false;
  }
}

double DeviceSpec::special_function_rate() const {
  if (sfu > 0) return sfu;
  // 16 special-function lanes per SM against fp32_cores_per_sm FMA lanes (two flops each).
  const int cores = fp32_cores_per_sm > 0 ? fp32_cores_per_sm : 128;
  return fp32 * 16.0 / (2.0 * cores);
}

double DeviceSpec::l2_bandwidth() const { return l2_bw > 0 ? l2_bw : kL2BandwidthRatio * mem_bw; }

bool DeviceSpec::kernel_speed_overridden() const {
  for (const auto& k : overridden)
    for (const char* s : kSpeedKeys)
      if (k == s) return true;
  return false;
}

std::vector<std::string> device_spec_names() { return registry().names(); }

DeviceSpec device_spec(const std::string& name) { return registry().get(name); }

DeviceSpec parse_device_spec_file(const std::string& yaml_text, const std::string& name,
                                  const std::string& origin) {
  YAML::Node root = load_yaml_text(yaml_text, origin);
  YamlMap m(root, origin);
  DeviceSpec d;
  d.name = name;
  std::vector<std::string> seen;
  read_fields(m, &d, true, &seen);
  if (d.sources.empty()) m.fail("sources", "is required: say where the numbers come from");
  check_complete(m, d);
  m.reject_unknown_keys();
  return d;
}

DeviceSpec parse_device_spec(const YAML::Node& node, const std::string& origin,
                             const std::string& key_path, const DeviceSpec& base) {
  if (node && node.IsScalar()) {
    try {
      return device_spec(node.Scalar());
    } catch (const InputError& e) {
      throw InputError(origin + ":" + std::to_string(node.Mark().line + 1) + ": " + key_path +
                       ": " + e.what());
    }
  }
  YamlMap m(node, origin, key_path);
  DeviceSpec named = base;
  if (m.has("model")) {
    try {
      named = device_spec(m.required_str("model"));
    } catch (const InputError& e) {
      m.fail("model", e.what());
    }
  } else if (base.name.empty()) {
    m.fail("model", "is required (one of: " + known_list() + ")");
  }
  DeviceSpec d = named;
  std::vector<std::string> seen;
  read_fields(m, &d, false, &seen);
  if (m.has("flops")) {
    // A platform's "faster GPU": every compute peak scales with fp32 (PAI, Table III).
    const double flops = m.flops("flops", d.fp32);
    in_range(m, "flops", flops, limits::kFlopRate);
    if (!(flops > 0)) m.fail("flops", "must be positive");
    if (m.has("fp32")) m.fail("flops", "and fp32 both set the fp32 rate: give one");
    d = with_platform_rates(d, flops, 0, 0);
  }
  check_complete(m, d);
  m.reject_unknown_keys();
  d.overridden = changed_fields(device_spec(d.name), d);
  return d;
}

const DeviceSpec& default_gpu() {
  static const DeviceSpec v100 = device_spec("V100-SXM2");
  return v100;
}

std::string device_label(const DeviceSpec& d) {
  std::string s = d.name;
  for (size_t i = 0; i < d.overridden.size(); ++i)
    s += (i == 0 ? " with " : ", ") + d.overridden[i];
  if (!d.overridden.empty()) s += " changed";
  return s;
}

std::string device_field_text(const DeviceSpec& d, const std::string& key) {
  const struct {
    const char* key;
    double value;
    const char* unit;
  } fields[] = {{"flops", d.fp32, "flops"},
                {"fp32", d.fp32, "flops"},
                {"fp16", d.fp16, "flops"},
                {"bf16", d.bf16, "flops"},
                {"tf32_tc", d.tf32_tc, "flops"},
                {"fp16_tc", d.fp16_tc, "flops"},
                {"bf16_tc", d.bf16_tc, "flops"},
                {"int8_tc", d.int8_tc, "flops"},
                {"fp8_tc", d.fp8_tc, "flops"},
                {"fp4_tc", d.fp4_tc, "flops"},
                {"sfu", d.special_function_rate(), "flops"},
                {"mem_bw", d.mem_bw, "Bps"},
                {"l2_bw", d.l2_bw, "Bps"},
                {"l2_size", d.l2_bytes, "B"},
                {"mem_size", d.mem_bytes, "B"},
                {"sms", 1.0 * d.sms, ""},
                {"clock", d.clock, "Hz"},
                {"fp32_cores_per_sm", 1.0 * d.fp32_cores_per_sm, ""},
                {"tdp_w", d.tdp_w, ""},
                {"process_nm", d.process_nm, ""},
                {"compute_capability", d.compute_capability, ""}};
  for (const auto& f : fields)
    if (key == f.key) return format_exact(f.value) + f.unit;
  return "";
}

std::vector<std::string> changed_fields(const DeviceSpec& shipped, const DeviceSpec& d) {
  auto differs = [](double a, double b) { return std::fabs(a - b) > 1e-9 * std::max(a, b); };
  std::vector<std::string> out;
  const struct {
    const char* key;
    double a, b;
  } fields[] = {{"fp32", shipped.fp32, d.fp32},
                {"fp16", shipped.fp16, d.fp16},
                {"bf16", shipped.bf16, d.bf16},
                {"tf32_tc", shipped.tf32_tc, d.tf32_tc},
                {"fp16_tc", shipped.fp16_tc, d.fp16_tc},
                {"bf16_tc", shipped.bf16_tc, d.bf16_tc},
                {"int8_tc", shipped.int8_tc, d.int8_tc},
                {"fp8_tc", shipped.fp8_tc, d.fp8_tc},
                {"fp4_tc", shipped.fp4_tc, d.fp4_tc},
                {"sfu", shipped.sfu, d.sfu},
                {"mem_bw", shipped.mem_bw, d.mem_bw},
                {"l2_bw", shipped.l2_bw, d.l2_bw},
                {"sms", 1.0 * shipped.sms, 1.0 * d.sms},
                {"l2_size", shipped.l2_bytes, d.l2_bytes},
                {"mem_size", shipped.mem_bytes, d.mem_bytes},
                {"clock", shipped.clock, d.clock},
                {"fp32_cores_per_sm", 1.0 * shipped.fp32_cores_per_sm, 1.0 * d.fp32_cores_per_sm},
                {"tdp_w", shipped.tdp_w, d.tdp_w},
                {"process_nm", shipped.process_nm, d.process_nm},
                {"compute_capability", shipped.compute_capability, d.compute_capability}};
  for (const auto& f : fields)
    if (differs(f.a, f.b)) out.push_back(f.key);
  if (shipped.memory != d.memory) out.push_back("memory");
  if (shipped.tensor_cores != d.tensor_cores) out.push_back("tensor_cores");
  const HostOverheads &h0 = shipped.host, &h1 = d.host;
  if (differs(h0.t1, h1.t1) || differs(h0.t2, h1.t2) || differs(h0.t3, h1.t3) ||
      differs(h0.t4, h1.t4) || differs(h0.t5, h1.t5) || differs(h0.gap, h1.gap) ||
      h0.synchronous != h1.synchronous || differs(h0.forward, h1.forward) ||
      differs(h0.backward, h1.backward) || differs(h0.optimizer, h1.optimizer) ||
      differs(h0.step, h1.step))
    out.push_back("host_overheads");
  return out;
}

DeviceSpec with_platform_rates(DeviceSpec spec, double fp32, double mem_bw, int sms) {
  auto changed = [](double a, double b) { return std::fabs(a - b) > 1e-9 * std::max(a, b); };
  if (fp32 > 0 && spec.fp32 > 0 && changed(fp32, spec.fp32)) {
    const double k = fp32 / spec.fp32;
    for (double* rate : {&spec.fp32, &spec.fp16, &spec.bf16, &spec.tf32_tc, &spec.fp16_tc,
                         &spec.bf16_tc, &spec.int8_tc, &spec.fp8_tc, &spec.fp4_tc, &spec.sfu})
      *rate *= k;
    spec.overridden.push_back("fp32");
  }
  if (mem_bw > 0 && changed(mem_bw, spec.mem_bw)) {
    spec.mem_bw = mem_bw;
    spec.overridden.push_back("mem_bw");
  }
  if (sms > 0 && sms != spec.sms) {
    spec.sms = sms;
    spec.overridden.push_back("sms");
  }
  return spec;
}

}  // namespace orrery
