// Every platform preset's GPU model names a device spec: model workloads price their ops on it
// when a scenario names no device.
#include <gtest/gtest.h>

#include "platforms/device_spec.h"
#include "platforms/platform_spec.h"

namespace orrery {
namespace {

TEST(PresetDevices, EveryPresetGpuHasADeviceSpec) {
  for (const auto& name : platform_preset_names()) {
    PlatformSpec spec = parse_platform_spec(YAML::Load("{preset: " + name + "}"), "test");
    EXPECT_NO_THROW(device_spec(spec.server.gpu.name)) << name << ": " << spec.server.gpu.name;
    // The platform's GPU speed and the spec's FP32 peak describe the same chip.
    DeviceSpec dev = device_spec(spec.server.gpu.name);
    EXPECT_NEAR(spec.server.gpu.fp32, dev.fp32, 0.25 * dev.fp32) << name;
  }
}

}  // namespace
}  // namespace orrery
