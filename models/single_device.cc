#include "models/single_device.h"

#include "common/errors.h"
#include "models/host_overhead.h"

namespace orrery {

ExecutionGraph single_device_graph(const ModelGraph& g, const std::vector<double>& durations,
                                   const DeviceHosts& hosts, const SingleDeviceOptions& options) {
  if (durations.size() != g.ops.size())
    throw InputError("model \"" + g.name + "\": " + std::to_string(durations.size()) +
                     " durations for " + std::to_string(g.ops.size()) + " ops");
  ExecutionGraph out;
  Device d;
  d.name = hosts.name;
  d.host = hosts.host.empty() ? hosts.name : hosts.host;
  d.launch_host = hosts.launch_host.empty() ? d.host : hosts.launch_host;
  out.devices.push_back(d);

  const int n = static_cast<int>(g.ops.size());
  out.ops.reserve(options.host_overheads ? 2 * g.ops.size() + 1 : g.ops.size());
  std::vector<int> kernels;
  kernels.reserve(g.ops.size());
  for (int i = 0; i < n; ++i) {
    const ModelOp& m = g.ops[i];
    for (int dep : m.deps)
      if (dep < 0 || dep >= n)
        throw InputError("model \"" + g.name + "\": op \"" + m.name + "\" depends on op index " +
                         std::to_string(dep) + ", out of range");
    append_compute(out, m.name, 0, {StreamClass::kCompute, 0}, durations[i], phase_name(m.phase),
                   m.deps, m.flops, m.bytes);
    kernels.push_back(i);
  }
  if (options.host_overheads) add_launch_ops(out, kernels, options.overheads);
  return out;
}

}  // namespace orrery
