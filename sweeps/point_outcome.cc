#include "sweeps/point_outcome.h"

#include <cstring>
#include <stdexcept>

namespace orrery {
namespace {

constexpr uint32_t kMagic = 0x4f535033;  // "OSP3": with the infeasible flag and metrics

template <typename T>
void put(std::string* out, const T& v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof v);
}

void put_str(std::string* out, const std::string& s) {
  put<uint64_t>(out, s.size());
  *out += s;
}

template <typename T>
T take(const std::string& in, size_t* pos) {
  if (*pos + sizeof(T) > in.size()) throw std::runtime_error("truncated sweep point outcome");
  T v;
  std::memcpy(&v, in.data() + *pos, sizeof v);
  *pos += sizeof v;
  return v;
}

std::string take_str(const std::string& in, size_t* pos) {
  auto n = take<uint64_t>(in, pos);
  if (n > in.size() - *pos) throw std::runtime_error("truncated sweep point outcome");
  std::string s = in.substr(*pos, n);
  *pos += n;
  return s;
}

}  // namespace

std::string serialize_outcome(const PointOutcome& o) {
  std::string out;
  put(&out, kMagic);
  put(&out, o.index);
  put(&out, o.hash);
  put<uint8_t>(&out, o.ok ? 1 : 0);
  put<uint8_t>(&out, o.infeasible ? 1 : 0);
  put_str(&out, o.error);
  put_str(&out, o.result_bytes);
  put<uint64_t>(&out, o.metrics.size());
  for (const auto& [name, value] : o.metrics) {
    put_str(&out, name);
    put(&out, value);
  }
  return out;
}

PointOutcome deserialize_outcome(const std::string& bytes) {
  size_t pos = 0;
  if (take<uint32_t>(bytes, &pos) != kMagic)
    throw std::runtime_error("not a sweep point outcome (bad magic)");
  PointOutcome o;
  o.index = take<int64_t>(bytes, &pos);
  o.hash = take<uint64_t>(bytes, &pos);
  o.ok = take<uint8_t>(bytes, &pos) != 0;
  o.infeasible = take<uint8_t>(bytes, &pos) != 0;
  o.error = take_str(bytes, &pos);
  o.result_bytes = take_str(bytes, &pos);
  const auto metrics = take<uint64_t>(bytes, &pos);
  if (metrics > bytes.size()) throw std::runtime_error("truncated sweep point outcome");
  for (uint64_t i = 0; i < metrics; ++i) {
    std::string name = take_str(bytes, &pos);
    o.metrics.emplace_back(std::move(name), take<double>(bytes, &pos));
  }
  if (pos != bytes.size()) throw std::runtime_error("trailing bytes after sweep point outcome");
  return o;
}

}  // namespace orrery
