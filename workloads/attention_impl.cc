#include "workloads/attention_impl.h"

#include <iterator>

#include "common/errors.h"

namespace orrery {
namespace {

struct Named {
  AttentionImpl impl;
  const char* name;
};
constexpr Named kNames[] = {{AttentionImpl::kAuto, "auto"},
                            {AttentionImpl::kFlash2, "flash2"},
                            {AttentionImpl::kFlash3, "flash3"},
                            {AttentionImpl::kCudnn, "cudnn"}};

}  // namespace

const char* attention_impl_name(AttentionImpl impl) {
  for (const Named& n : kNames)
    if (n.impl == impl) return n.name;
  return "unknown";
}

bool parse_attention_impl(const std::string& text, AttentionImpl* impl) {
  for (const Named& n : kNames)
    if (text == n.name) {
      *impl = n.impl;
      return true;
    }
  return false;
}

std::vector<std::string> attention_impl_choices() {
  std::vector<std::string> v;
  for (const Named& n : kNames) v.push_back(n.name);
  return v;
}

std::string attention_impl_names() {
  std::string s;
  for (size_t i = 0; i < std::size(kNames); ++i)
    s += std::string(i == 0 ? "" : i + 1 == std::size(kNames) ? " or " : ", ") + kNames[i].name;
  return s;
}

AttentionImpl attention_impl(const ModelOp& op) {
  const int64_t v = op_attr(op, "impl", 0);
  for (const Named& n : kNames)
    if (static_cast<int64_t>(n.impl) == v) return n.impl;
  throw InputError("op " + op.name + ": attr impl " + std::to_string(v) +
                   " names no attention kernel (0 auto, 1 flash2, 2 flash3, 3 cudnn)");
}

}  // namespace orrery
