#include "workloads/attention_impl.h"

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

std::string attention_impl_names() { return "auto, flash2, flash3 or cudnn"; }

AttentionImpl attention_impl(const ModelOp& op) {
  const int64_t v = op_attr(op, "impl", 0);
  for (const Named& n : kNames)
    if (static_cast<int64_t>(n.impl) == v) return n.impl;
  throw InputError("op " + op.name + ": attr impl " + std::to_string(v) +
                   " names no attention kernel (0 auto, 1 flash2, 2 flash3, 3 cudnn)");
}

}  // namespace orrery
