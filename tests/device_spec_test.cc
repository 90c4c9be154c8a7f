// Device specs: the built-in data files, name lookup, and scenario overrides.
#include "platforms/device_spec.h"

#include <gtest/gtest.h>

#include "common/errors.h"
#include "common/yaml_reader.h"

namespace orrery {
namespace {

TEST(DeviceSpec, ShipsTheDevicesTheIssueNames) {
  auto names = device_spec_names();
  for (const char* n :
       {"P100-SXM2", "P100-PCIe", "V100-SXM2", "V100-PCIe", "TITAN-Xp", "RTX-2080-Ti", "T4",
        "A100-SXM4-40GB", "A100-SXM4-80GB", "H100-SXM5", "H200-SXM", "PAI-GPU"})
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
  for (const auto& n : names) {
    DeviceSpec d = device_spec(n);
    EXPECT_FALSE(d.sources.empty()) << n;
    EXPECT_GT(d.fp32, 0) << n;
    EXPECT_GT(d.mem_bw, 0) << n;
    EXPECT_GT(d.sms, 0) << n;
    EXPECT_GT(d.l2_bytes, 0) << n;
    EXPECT_GT(d.mem_bytes, 0) << n;
    EXPECT_TRUE(d.overridden.empty()) << n;
  }
}

TEST(DeviceSpec, V100Numbers) {
  DeviceSpec d = device_spec("V100-SXM2");
  EXPECT_DOUBLE_EQ(d.fp32, 15.7e12);
  EXPECT_DOUBLE_EQ(d.fp16, 31.4e12);
  EXPECT_DOUBLE_EQ(d.fp16_tc, 125e12);
  EXPECT_DOUBLE_EQ(d.mem_bw, 900e9);
  EXPECT_DOUBLE_EQ(d.l2_bw, 2847e9);
  EXPECT_EQ(d.sms, 80);
  EXPECT_DOUBLE_EQ(d.l2_bytes, 6.0 * 1048576);
  EXPECT_DOUBLE_EQ(d.mem_bytes, 16.0 * 1073741824);
  EXPECT_TRUE(d.tensor_cores);
  // Host overhead defaults of the DLRM performance model: T1 8 us, T4 10 us.
  EXPECT_DOUBLE_EQ(d.host.t1, 8e-6);
  EXPECT_DOUBLE_EQ(d.host.t4, 10e-6);
}

TEST(DeviceSpec, PeakPerPrecision) {
  DeviceSpec v = device_spec("V100-SXM2");
  EXPECT_DOUBLE_EQ(v.peak_flops(DType::kFP16, true), 125e12);
  EXPECT_DOUBLE_EQ(v.peak_flops(DType::kFP16, false), 31.4e12);
  EXPECT_DOUBLE_EQ(v.peak_flops(DType::kBF16, true), 15.7e12);  // no bf16 on Volta
  EXPECT_DOUBLE_EQ(v.peak_flops(DType::kTF32, true), 15.7e12);  // no TF32 on Volta
  DeviceSpec a = device_spec("A100-SXM4-40GB");
  EXPECT_DOUBLE_EQ(a.peak_flops(DType::kTF32, true), 156e12);
  EXPECT_DOUBLE_EQ(a.peak_flops(DType::kBF16, true), 312e12);
  EXPECT_DOUBLE_EQ(a.peak_flops(DType::kBF16, false), 39e12);
  // GP102 runs FP16 at 1/64 of FP32.
  EXPECT_DOUBLE_EQ(device_spec("TITAN-Xp").peak_flops(DType::kFP16, true), 0.19e12);
  EXPECT_DOUBLE_EQ(device_spec("P100-SXM2").peak_flops(DType::kFP16, true), 21.2e12);
}

TEST(DeviceSpec, PaiGpuIsTableI) {
  DeviceSpec p = device_spec("PAI-GPU");
  EXPECT_DOUBLE_EQ(p.fp32, 11e12);
  EXPECT_DOUBLE_EQ(p.mem_bw, 1e12);
  EXPECT_FALSE(p.tensor_cores);
}

TEST(DeviceSpec, L2BandwidthEstimatedWhenNotMeasured) {
  DeviceSpec t4 = device_spec("T4");
  EXPECT_DOUBLE_EQ(t4.l2_bw, 0);
  EXPECT_DOUBLE_EQ(t4.l2_bandwidth(), 2.5 * 320e9);
  EXPECT_DOUBLE_EQ(device_spec("V100-SXM2").l2_bandwidth(), 2847e9);
}

TEST(DeviceSpec, AliasesAndCaseInsensitiveNames) {
  EXPECT_EQ(device_spec("v100").name, "V100-SXM2");
  EXPECT_EQ(device_spec("A100").name, "A100-SXM4-40GB");
  EXPECT_EQ(device_spec("h200").name, "H200-SXM");
  EXPECT_EQ(device_spec("P100").name, "P100-PCIe");
}

TEST(DeviceSpec, UnknownNameListsKnownOnes) {
  try {
    device_spec("V1000");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("V1000"), std::string::npos);
    EXPECT_NE(m.find("V100-SXM2"), std::string::npos);
    EXPECT_NE(m.find("H100-SXM5"), std::string::npos);
  }
}

TEST(DeviceSpec, ScenarioOverridesAField) {
  YAML::Node n = load_yaml_text("device: {model: V100-SXM2, fp32: 20TFLOP/s}\n", "s.yaml");
  DeviceSpec d = parse_device_spec(n["device"], "s.yaml");
  EXPECT_EQ(d.name, "V100-SXM2");
  EXPECT_DOUBLE_EQ(d.fp32, 20e12);
  EXPECT_DOUBLE_EQ(d.mem_bw, 900e9);  // untouched fields keep the spec's values
  ASSERT_EQ(d.overridden.size(), 1u);
  EXPECT_EQ(d.overridden[0], "fp32");
  EXPECT_TRUE(d.kernel_speed_overridden());
}

TEST(DeviceSpec, HostOverheadOverrideDoesNotChangeKernelSpeed) {
  YAML::Node n =
      load_yaml_text("device: {model: T4, host_overheads: {t1: 5us, gap: 0s}}\n", "s.yaml");
  DeviceSpec d = parse_device_spec(n["device"], "s.yaml");
  EXPECT_DOUBLE_EQ(d.host.t1, 5e-6);
  EXPECT_DOUBLE_EQ(d.host.gap, 0);
  EXPECT_DOUBLE_EQ(d.host.t4, 10e-6);
  EXPECT_FALSE(d.kernel_speed_overridden());
}

TEST(DeviceSpec, ScalarNamesASpec) {
  YAML::Node n = load_yaml_text("device: H100\n", "s.yaml");
  EXPECT_EQ(parse_device_spec(n["device"], "s.yaml").name, "H100-SXM5");
}

TEST(DeviceSpec, StrictKeysAndValuesNameTheLine) {
  auto err = [](const std::string& text) {
    try {
      YAML::Node n = load_yaml_text(text, "s.yaml");
      parse_device_spec(n["device"], "s.yaml");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  std::string unknown = err("x: 1\ndevice: {model: V100, fp33: 1TFLOP/s}\n");
  EXPECT_NE(unknown.find("s.yaml:2"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("device.fp33"), std::string::npos) << unknown;
  std::string unit = err("device: {model: V100, mem_bw: fast}\n");
  EXPECT_NE(unit.find("device.mem_bw"), std::string::npos) << unit;
  std::string model = err("device: {fp32: 1TFLOP/s}\n");
  EXPECT_NE(model.find("device.model"), std::string::npos) << model;
  std::string bad_name = err("device: {model: V1000}\n");
  EXPECT_NE(bad_name.find("V100-SXM2"), std::string::npos) << bad_name;
  std::string negative = err("device: {model: V100, sms: 0}\n");
  EXPECT_NE(negative.find("device.sms"), std::string::npos) << negative;
}

TEST(DeviceSpec, SpecFilesMustCiteSources) {
  EXPECT_THROW(parse_device_spec_file("fp32: 1TFLOP/s\nmem_bw: 1GB/s\nsms: 1\nmem_size: 1GB\n", "X",
                                      "x.yaml"),
               InputError);
  DeviceSpec d = parse_device_spec_file(
      "sources: [me]\nfp32: 1TFLOP/s\nmem_bw: 1GB/s\nsms: 1\nmem_size: 1GB\n", "X", "x.yaml");
  EXPECT_EQ(d.name, "X");
  EXPECT_DOUBLE_EQ(d.fp32, 1e12);
}

}  // namespace
}  // namespace orrery
