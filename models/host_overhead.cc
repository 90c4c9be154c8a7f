#include "models/host_overhead.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>

namespace orrery {

CriticalPath host_critical_path(const std::vector<std::vector<double>>& kernels,
                                const HostOverheads& ov) {
  CriticalPath p;
  double cpu = 0, gpu = 0;
  for (const auto& op : kernels) {
    cpu += ov.t1;
    if (op.empty()) {
      cpu += ov.t5;
      continue;
    }
    cpu += ov.t2;
    for (size_t k = 0; k < op.size(); ++k) {
      double start = std::max(gpu + ov.gap, cpu + ov.t4 / 2);
      p.kernel_start.push_back(start);
      gpu = start + op[k];
      cpu += ov.t4;
      if (k + 1 < op.size()) cpu += ov.t5;
    }
    cpu += ov.t3;
  }
  p.cpu_s = cpu;
  p.gpu_s = gpu;
  p.total_s = std::max(cpu, gpu);
  return p;
}

std::vector<int> add_launch_ops(ExecutionGraph& g, const std::vector<int>& kernels,
                                const HostOverheads& ov) {
  const int original = static_cast<int>(g.ops.size());
  std::map<int, std::vector<int>> by_device;  // device -> positions in `kernels`
  for (size_t i = 0; i < kernels.size(); ++i) {
    int k = kernels[i];
    if (k < 0 || k >= original) throw std::invalid_argument("add_launch_ops: bad op index");
    if (g.ops[k].kind != OpKind::kCompute)
      throw std::invalid_argument("add_launch_ops: op \"" + g.ops[k].name + "\" is a transfer");
    by_device[g.ops[k].device].push_back(static_cast<int>(i));
  }

  const double first = ov.t1 + ov.t2 + ov.t4 / 2;
  std::vector<int> launch_of(kernels.size(), -1);
  for (const auto& [device, positions] : by_device) {
    // The GPU gap is carried by the kernels; shifting this device's launches earlier by the
    // same amount keeps kernel start = max(GPU free + gap, launch done). Without a duration to
    // carry it (an unpriced kernel) the gap is dropped for the device.
    double shift = std::min(ov.gap, first);
    for (int pos : positions)
      if (g.ops[kernels[pos]].duration < 0) shift = 0;

    int prev = -1;
    for (size_t j = 0; j < positions.size(); ++j) {
      Op& kernel_ref = g.ops[kernels[positions[j]]];
      kernel_ref.duration += kernel_ref.duration >= 0 ? shift : 0;
      const std::string name = "launch:" + kernel_ref.name;
      // Appending may move the ops: kernel_ref is not used after this.
      const int idx = append_compute(g, name, device, {StreamClass::kHost, 0},
                                     j == 0 ? first - shift : ov.t1 + ov.t2 + ov.t3 + ov.t4,
                                     "launch", prev >= 0 ? std::vector<int>{prev} : std::vector<int>{});
      g.ops[kernels[positions[j]]].deps.push_back(idx);
      launch_of[positions[j]] = idx;
      prev = idx;
    }
    append_compute(g, "host_tail:" + g.devices[device].name, device, {StreamClass::kHost, 0},
                   ov.t4 / 2 + ov.t3 + shift, "launch", {prev});
  }
  return launch_of;
}

std::vector<double> synchronous_op_times(const ModelGraph& g, const std::vector<double>& seconds,
                                         const HostOverheads& ov) {
  if (seconds.size() != g.ops.size())
    throw std::invalid_argument("synchronous_op_times: " + std::to_string(seconds.size()) +
                                " times for " + std::to_string(g.ops.size()) + " ops");
  std::vector<double> out(seconds.size());
  for (size_t j = 0; j < seconds.size(); ++j) {
    double host = g.ops[j].phase == Phase::kForward    ? ov.forward
                  : g.ops[j].phase == Phase::kBackward ? ov.backward
                                                       : ov.optimizer;
    out[j] = std::max(0.0, seconds[j] + host);
  }
  if (!out.empty()) out[0] += ov.step;
  return out;
}

}  // namespace orrery
