// Device specs: the built-in data files, name lookup, and scenario overrides.
#include "platforms/device_spec.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "common/errors.h"
#include "common/yaml_reader.h"
#include "tests/test_util.h"

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

TEST(DeviceSpec, ShipsTheGpusOfTheKernelDataAndNewer) {
  for (const char* n : {"P4", "V100-PCIe-32GB", "A100-PCIe-40GB", "A100-PCIe-80GB", "L4", "L40S",
                        "H100-PCIe", "B200", "RTX-PRO-6000-Server"}) {
    DeviceSpec d = device_spec(n);
    EXPECT_EQ(d.name, n);
    EXPECT_FALSE(d.sources.empty()) << n;
    EXPECT_GT(d.tdp_w, 0) << n;
  }
  // Dense Tensor Core rates are half the datasheets' sparse ones (L4: 485 TOPS INT8 sparse).
  EXPECT_DOUBLE_EQ(device_spec("L4").int8_tc, 242.5e12);
  EXPECT_DOUBLE_EQ(device_spec("H100-PCIe").fp16_tc, 756.5e12);
  EXPECT_DOUBLE_EQ(device_spec("B200").bf16_tc, 2250e12);
  // The Tesla P4 has no Tensor Cores; its FP16 runs at 1/64 of FP32 (5.5 / 64 = 0.086).
  DeviceSpec p4 = device_spec("P4");
  EXPECT_FALSE(p4.tensor_cores);
  EXPECT_DOUBLE_EQ(p4.peak_flops(DType::kFP16, true), 0.086e12);
  EXPECT_DOUBLE_EQ(device_spec("A100-PCIe-80GB").mem_bw, 1935e9);
  EXPECT_DOUBLE_EQ(device_spec("V100-PCIe-32GB").mem_bytes, 32.0 * 1073741824);
}

// The published FP32 peak is one FMA (2 flop) per FP32 core per cycle at the boost clock:
// fp32 = 2 x clock x sms x fp32_cores_per_sm. A100: 2 x 1410 MHz x 108 x 64 = 19.49 TFLOP/s,
// the whitepaper's 19.5. Datasheets round (P4: 5.44 computed, 5.5 printed), hence 2%.
TEST(DeviceSpec, Fp32IsThePeakOfClockSmsAndCores) {
  int checked = 0;
  for (const auto& n : device_spec_names()) {
    DeviceSpec d = device_spec(n);
    if (d.clock <= 0 || d.fp32_cores_per_sm <= 0) continue;
    const double peak = 2.0 * d.clock * d.sms * d.fp32_cores_per_sm;
    EXPECT_NEAR(d.fp32 / peak, 1.0, 0.02) << n << ": fp32 " << d.fp32 << ", formula " << peak;
    ++checked;
  }
  EXPECT_GE(checked, 15);
  DeviceSpec a = device_spec("A100-PCIe-40GB");
  EXPECT_DOUBLE_EQ(a.clock, 1410e6);
  EXPECT_EQ(a.fp32_cores_per_sm, 64);
  EXPECT_DOUBLE_EQ(a.tdp_w, 250);
}

// The five GPUs of the shared kernel data (shared/data/gpu-kernels/device_configs/*.json, read
// in place) agree with their specs, but where NVIDIA's datasheets and the data's configs differ
// the spec keeps the datasheet, and each such difference is listed here with its reason: a
// difference that disappears, or a new one, fails the test.
TEST(DeviceSpec, AgreesWithTheSharedKernelDataConfigs) {
  const std::map<std::string, std::set<std::string>> datasheet_differs = {
      // 1303 MHz, 9.3 TFLOP/s in the datasheet; the data: 1380 MHz and 9519 GFLOP/s (= 1328 MHz).
      {"P100-PCIe", {"clock", "fp32"}},
      // 20 SMs x 128 cores at 1063 MHz (5.5 TFLOP/s); the data: 40 x 64 at 1113 MHz (5.7).
      {"P4", {"sms", "clock", "fp32"}},
      // 1380 MHz published; the data: 1370 MHz.
      {"V100-PCIe-32GB", {"clock"}},
  };
  const std::string dir = testing::shared_path("data/gpu-kernels/device_configs");
  if (!std::filesystem::is_directory(dir)) GTEST_SKIP() << dir << " is not there";
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".json") continue;
    ++files;
    YAML::Node c = load_yaml_file(entry.path().string());  // JSON is YAML
    const std::string device = c["Device"].as<std::string>();
    // The name the data uses ("Tesla P4", "NVIDIA A100-PCIE-40GB") and the file's stem
    // ("Tesla_P4") both name the spec.
    DeviceSpec d = device_spec(device);
    EXPECT_EQ(device_spec(entry.path().stem().string()).name, d.name);
    EXPECT_FALSE(d.sources.empty()) << d.name;
    const std::set<std::string> expected =
        datasheet_differs.count(d.name) ? datasheet_differs.at(d.name) : std::set<std::string>{};
    std::set<std::string> differs;
    if (d.sms != c["Num_Sm"].as<int>()) differs.insert("sms");
    if (d.clock != c["Freq"].as<double>() * 1e6) differs.insert("clock");
    if (std::fabs(d.mem_bw / (c["Mem_Bw"].as<double>() * 1e9) - 1) > 0.01) differs.insert("mem_bw");
    if (std::fabs(d.fp32 / (c["SingleFLOPs"].as<double>() * 1e9) - 1) > 0.02)
      differs.insert("fp32");
    EXPECT_EQ(differs, expected) << device << " (" << d.name << ")";
    // Whatever the SM layout, the FP32 core count is the same (P4: 20 x 128 = 40 x 64).
    EXPECT_EQ(d.sms * d.fp32_cores_per_sm, c["Num_Sm"].as<int>() * c["Core_Per_SM"].as<int>())
        << device;
    EXPECT_NEAR(d.l2_bytes / 1048576.0, c["L2Cache"].as<double>(), 0.5) << device;
  }
  EXPECT_EQ(files, 5);
  // The convolution rows ran on an A100 80GB PCIe (shared/data/gpu-kernels/README.md).
  EXPECT_EQ(device_spec("NVIDIA A100 80GB PCIe").name, "A100-PCIe-80GB");
}

TEST(DeviceSpec, NamesIgnoreCaseSpacesAndUnderscores) {
  EXPECT_EQ(device_spec("Tesla P4").name, "P4");
  EXPECT_EQ(device_spec("tesla_p4").name, "P4");
  EXPECT_EQ(device_spec("Tesla T4").name, "T4");
  EXPECT_EQ(device_spec("Tesla P100-PCIE-16GB").name, "P100-PCIe");
  EXPECT_EQ(device_spec("Tesla V100-PCIE-32GB").name, "V100-PCIe-32GB");
  EXPECT_EQ(device_spec("NVIDIA A100-PCIE-40GB").name, "A100-PCIe-40GB");
  EXPECT_EQ(device_spec("NVIDIA L4").name, "L4");
}

// The Ada L40S of the measured Tensor Core data (shared/data/tc-kernels): its datasheet's
// rates with 2:4 sparsity halved (733 TFLOP/s FP16 -> 366.5), FP8 but no FP4 Tensor Cores, and
// FP16 on CUDA cores at the FP32 rate.
TEST(DeviceSpec, L40sIsItsDatasheetHalved) {
  const DeviceSpec d = device_spec("L40S");
  EXPECT_DOUBLE_EQ(d.fp32, 91.6e12);
  EXPECT_DOUBLE_EQ(d.tf32_tc, 183e12);
  EXPECT_DOUBLE_EQ(d.fp16_tc, 366.5e12);
  EXPECT_DOUBLE_EQ(d.bf16_tc, 366.5e12);
  EXPECT_DOUBLE_EQ(d.int8_tc, 733e12);
  EXPECT_DOUBLE_EQ(d.fp8_tc, 733e12);
  EXPECT_DOUBLE_EQ(d.fp4_tc, 0);
  EXPECT_DOUBLE_EQ(d.mem_bw, 864e9);
  EXPECT_EQ(d.sms, 142);
  EXPECT_DOUBLE_EQ(d.l2_bytes, 96.0 * 1048576);
  EXPECT_DOUBLE_EQ(d.mem_bytes, 48.0 * 1073741824);
  EXPECT_DOUBLE_EQ(d.clock, 2520e6);
  EXPECT_EQ(d.fp32_cores_per_sm, 128);
  EXPECT_DOUBLE_EQ(d.tdp_w, 350);
  EXPECT_EQ(d.memory, "GDDR6");
  EXPECT_DOUBLE_EQ(d.process_nm, 4);
  EXPECT_DOUBLE_EQ(d.peak_flops(DType::kFP16, false), d.fp32);
  EXPECT_TRUE(d.has_tensor_core_path(DType::kFP8));
  EXPECT_FALSE(d.blackwell_tensor_cores());
  // 2 x 2520 MHz x 142 SMs x 128 cores = 91.6 TFLOP/s, the datasheet's FP32 rate.
  EXPECT_NEAR(2.0 * d.clock * d.sms * d.fp32_cores_per_sm / d.fp32, 1.0, 0.001);
}

// The RTX PRO 6000 Blackwell Server Edition: its datasheet's sparse rates halved (4 PFLOP/s FP4
// -> 2000 TFLOP/s), FP4 Tensor Cores, so Blackwell's (DeviceSpec::blackwell_tensor_cores).
TEST(DeviceSpec, RtxPro6000ServerIsItsDatasheetHalved) {
  const DeviceSpec d = device_spec("RTX-PRO-6000-Server");
  EXPECT_DOUBLE_EQ(d.fp32, 120e12);
  EXPECT_DOUBLE_EQ(d.tf32_tc, 250e12);
  EXPECT_DOUBLE_EQ(d.fp16_tc, 500e12);
  EXPECT_DOUBLE_EQ(d.bf16_tc, 500e12);
  EXPECT_DOUBLE_EQ(d.int8_tc, 1000e12);
  EXPECT_DOUBLE_EQ(d.fp8_tc, 1000e12);
  EXPECT_DOUBLE_EQ(d.fp4_tc, 2000e12);
  EXPECT_DOUBLE_EQ(d.mem_bw, 1597e9);
  EXPECT_EQ(d.sms, 188);
  EXPECT_DOUBLE_EQ(d.l2_bytes, 128.0 * 1048576);
  EXPECT_DOUBLE_EQ(d.mem_bytes, 96.0 * 1073741824);
  EXPECT_DOUBLE_EQ(d.clock, 2493e6);
  EXPECT_EQ(d.fp32_cores_per_sm, 128);
  EXPECT_DOUBLE_EQ(d.tdp_w, 600);
  EXPECT_EQ(d.memory, "GDDR7");
  EXPECT_FALSE(d.hbm());
  EXPECT_DOUBLE_EQ(d.peak_flops(DType::kFP4, true), 2000e12);
  EXPECT_TRUE(d.blackwell_tensor_cores());
  // 2 x 2493 MHz x 188 SMs x 128 cores = 120.0 TFLOP/s.
  EXPECT_NEAR(2.0 * d.clock * d.sms * d.fp32_cores_per_sm / d.fp32, 1.0, 0.001);
  // The 32 GB V100 SXM2 is the 16 GB part with twice the memory.
  const DeviceSpec v32 = device_spec("V100-SXM2-32GB"), v16 = device_spec("V100-SXM2");
  EXPECT_DOUBLE_EQ(v32.mem_bytes, 32.0 * 1073741824);
  EXPECT_EQ(changed_fields(v16, v32), (std::vector<std::string>{"mem_size"}));
}

// What torch.cuda.get_device_name() (and nvidia-smi) print names a spec, spelled as printed.
TEST(DeviceSpec, PyTorchDeviceNamesAreAliases) {
  const std::map<std::string, std::string> names = {
      {"NVIDIA H100 80GB HBM3", "H100-SXM5"},
      {"NVIDIA H100 PCIe", "H100-PCIe"},
      {"NVIDIA H100 NVL", "H100-NVL"},
      {"NVIDIA H200", "H200-SXM"},
      {"NVIDIA H200 NVL", "H200-NVL"},
      {"NVIDIA A100-SXM4-80GB", "A100-SXM4-80GB"},
      {"NVIDIA A100-SXM4-40GB", "A100-SXM4-40GB"},
      {"NVIDIA A100-PCIE-40GB", "A100-PCIe-40GB"},
      {"NVIDIA A100 80GB PCIe", "A100-PCIe-80GB"},
      {"NVIDIA L40S", "L40S"},
      {"NVIDIA L4", "L4"},
      {"NVIDIA B200", "B200"},
      {"NVIDIA GB200", "GB200"},
      {"NVIDIA RTX PRO 6000 Blackwell Server Edition", "RTX-PRO-6000-Server"},
      {"Tesla V100-SXM2-16GB", "V100-SXM2"},
      {"Tesla V100-SXM2-32GB", "V100-SXM2-32GB"},
      {"Tesla V100-SXM3-32GB", "V100-SXM3-32GB"},
      {"Tesla V100-PCIE-16GB", "V100-PCIe"},
      {"Tesla V100-PCIE-32GB", "V100-PCIe-32GB"},
      {"Tesla T4", "T4"},
      {"Tesla P100-PCIE-16GB", "P100-PCIe"},
      {"Tesla P100-SXM2-16GB", "P100-SXM2"},
      {"Tesla P4", "P4"},
      {"NVIDIA GeForce RTX 2080 Ti", "RTX-2080-Ti"},
      {"NVIDIA TITAN Xp", "TITAN-Xp"},
  };
  for (const auto& [name, spec] : names) {
    EXPECT_EQ(device_spec(name).name, spec) << name;
    // The spec lists the name as printed, so `orrery devices NAME` shows it.
    const auto& al = device_spec(spec).aliases;
    EXPECT_NE(std::find(al.begin(), al.end(), name), al.end()) << spec << " lacks " << name;
  }
  // In a scenario, a name with spaces is a plain YAML scalar, alone or as a model.
  YAML::Node y =
      load_yaml_text("a: NVIDIA H100 80GB HBM3\nb: {model: NVIDIA L40S, tdp_w: 300}\n", "s.yaml");
  EXPECT_EQ(parse_device_spec(y["a"], "s.yaml", "a").name, "H100-SXM5");
  const DeviceSpec b = parse_device_spec(y["b"], "s.yaml", "b");
  EXPECT_EQ(b.name, "L40S");
  EXPECT_EQ(b.overridden, (std::vector<std::string>{"tdp_w"}));
  // A near miss suggests the alias it was close to.
  const std::string miss = testing::input_error_of([] { device_spec("NVIDIA H100 80GB HBM2"); });
  EXPECT_NE(miss.find("NVIDIA H100 80GB HBM3"), std::string::npos) << miss;
}

// `orrery devices` keeps its table to short names and tells where the driver names are;
// `orrery devices NAME` (a driver name with spaces is one argument) lists them, and shows a
// missing Tensor Core path as "-".
TEST(DeviceSpec, DevicesCommandShowsDriverNames) {
  const std::string bin = testing::orrery_bin();
  if (bin.empty()) GTEST_SKIP() << "ORRERY_BIN not set (run through ctest)";
  const testing::ShellResult all = testing::run_shell(bin + " devices");
  ASSERT_EQ(all.status, 0) << all.output;
  EXPECT_NE(all.output.find("\nRTX-PRO-6000-Server "), std::string::npos) << all.output;
  EXPECT_NE(all.output.find("\nL40S "), std::string::npos) << all.output;
  const std::string table = all.output.substr(0, all.output.find("\n\n"));
  EXPECT_EQ(table.find("NVIDIA"), std::string::npos) << table;
  EXPECT_NE(all.output.find("--device \"NVIDIA H100 80GB HBM3\""), std::string::npos) << all.output;
  const testing::ShellResult one = testing::run_shell(bin + " devices 'NVIDIA H100 80GB HBM3'");
  ASSERT_EQ(one.status, 0) << one.output;
  EXPECT_EQ(one.output.rfind("H100-SXM5: ", 0), 0u) << one.output;
  EXPECT_NE(one.output.find("  aliases: H100,H100-SXM\n"), std::string::npos) << one.output;
  EXPECT_NE(one.output.find("  driver names: NVIDIA H100 80GB HBM3\n"), std::string::npos)
      << one.output;
  EXPECT_NE(one.output.find("fp8 1979 TFLOP/s, fp4 -)"), std::string::npos) << one.output;
}

// Every device name of the measured kernel data (the `device` column of every file of
// shared/data/tc-kernels and shared/data/gpu-kernels, read in place) names a spec.
TEST(DeviceSpec, EveryDeviceOfTheSharedKernelDataResolves) {
  std::map<std::string, std::string> seen;  // device name -> a file it is in
  for (const char* folder : {"data/tc-kernels", "data/gpu-kernels"}) {
    const std::string dir = testing::shared_path(folder);
    if (!std::filesystem::is_directory(dir)) GTEST_SKIP() << dir << " is not there";
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      const std::string path = entry.path().string();
      if (path.size() < 7 || path.compare(path.size() - 7, 7, ".csv.gz") != 0) continue;
      // The distinct values of the column named `device`; no file quotes a field before it.
      const testing::ShellResult r = testing::run_shell(
          "zcat '" + path +
          "' | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == \"device\") c = i; "
          "if (!c) exit 3; next } !seen[$c]++ { print $c }'");
      ASSERT_EQ(r.status, 0) << path << ": " << r.output;
      std::istringstream lines(r.output);
      for (std::string name; std::getline(lines, name);) seen.emplace(name, path);
    }
  }
  EXPECT_GE(seen.size(), 10u);
  for (const auto& [name, file] : seen) {
    EXPECT_EQ(name.find('"'), std::string::npos) << file << ": " << name;
    EXPECT_NO_THROW(device_spec(name)) << file << ": " << name;
  }
  EXPECT_EQ(device_spec("NVIDIA H100 80GB HBM3").name, "H100-SXM5");
  EXPECT_EQ(device_spec("NVIDIA A100-SXM4-80GB").name, "A100-SXM4-80GB");
}

TEST(DeviceSpec, ClockCoresAndPowerOverrides) {
  YAML::Node n =
      load_yaml_text("device: {model: A100-PCIe-40GB, clock: 1.2GHz, tdp_w: 200}\n", "s.yaml");
  DeviceSpec d = parse_device_spec(n["device"], "s.yaml");
  EXPECT_DOUBLE_EQ(d.clock, 1.2e9);
  EXPECT_DOUBLE_EQ(d.tdp_w, 200);
  EXPECT_EQ(d.overridden, (std::vector<std::string>{"clock", "tdp_w"}));
  EXPECT_TRUE(d.kernel_speed_overridden());  // the clock sets kernel speed, the power does not
  YAML::Node p = load_yaml_text("device: {model: T4, tdp_w: 60}\n", "s.yaml");
  EXPECT_FALSE(parse_device_spec(p["device"], "s.yaml").kernel_speed_overridden());
  EXPECT_EQ(device_field_text(device_spec("T4"), "clock"), "1590000000Hz");
  auto err = [](const std::string& text) {
    try {
      YAML::Node y = load_yaml_text(text, "s.yaml");
      parse_device_spec(y["device"], "s.yaml");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(err("device: {model: T4, clock: 1590}\n").find("device.clock"), std::string::npos);
  EXPECT_NE(err("device: {model: T4, fp32_cores_per_sm: 0}\n").find("fp32_cores_per_sm"),
            std::string::npos);
  EXPECT_NE(err("device: {model: T4, tdp_w: -5}\n").find("device.tdp_w"), std::string::npos);
  EXPECT_NE(err("device: {model: T4, memory: SRAM}\n").find("device.memory"), std::string::npos);
  EXPECT_NE(err("device: {model: T4, process_nm: 0}\n").find("device.process_nm"),
            std::string::npos);
  EXPECT_NE(err("device: {model: T4, compute_capability: 0.5}\n").find("device.compute_capability"),
            std::string::npos);
}

// Compute capabilities: which kernels a library has for the GPU (models/attention_support.h).
// Every built-in GPU but the PAI study's abstract one gives its own.
TEST(DeviceSpec, ComputeCapability) {
  for (const auto& n : device_spec_names()) {
    if (n != "Xeon-vCPU-1T" && n != "PAI-GPU") {
      EXPECT_GE(device_spec(n).compute_capability, 6.0) << n;
    }
  }
  EXPECT_DOUBLE_EQ(device_spec("H100").compute_capability, 9.0);
  EXPECT_DOUBLE_EQ(device_spec("GB300").compute_capability, 10.3);
  EXPECT_DOUBLE_EQ(device_spec("L40S").compute_capability, 8.9);
  EXPECT_DOUBLE_EQ(device_spec("RTX-PRO-6000-Server").compute_capability, 12.0);
  YAML::Node y = load_yaml_text("device: {model: H100, compute_capability: 8.0}\n", "s.yaml");
  const DeviceSpec d = parse_device_spec(y["device"], "s.yaml");
  EXPECT_DOUBLE_EQ(d.compute_capability, 8.0);
  EXPECT_EQ(d.overridden, (std::vector<std::string>{"compute_capability"}));
}

// Memory type and process node: what the kernel models read for achieved bandwidth and the power
// cap (models/kernel_model.h). Every built-in GPU has both; the CPU core has neither.
TEST(DeviceSpec, MemoryTypeAndProcessNode) {
  for (const auto& n : device_spec_names()) {
    const DeviceSpec d = device_spec(n);
    if (n == "Xeon-vCPU-1T") {
      EXPECT_TRUE(d.memory.empty());
      continue;
    }
    EXPECT_FALSE(d.memory.empty()) << n;
    EXPECT_GT(d.process_nm, 0) << n;
  }
  EXPECT_TRUE(device_spec("H100-SXM5").hbm());
  EXPECT_EQ(device_spec("H100-SXM5").memory, "HBM3");
  EXPECT_EQ(device_spec("H200").memory, "HBM3e");
  EXPECT_FALSE(device_spec("T4").hbm());
  EXPECT_DOUBLE_EQ(device_spec("A100-SXM4-80GB").process_nm, 7);
  YAML::Node y = load_yaml_text("device: {model: T4, memory: hbm2e, process_nm: 7}\n", "s.yaml");
  const DeviceSpec d = parse_device_spec(y["device"], "s.yaml");
  EXPECT_EQ(d.memory, "HBM2e");
  EXPECT_TRUE(d.hbm());
  EXPECT_EQ(d.overridden, (std::vector<std::string>{"process_nm", "memory"}));
  EXPECT_TRUE(d.kernel_speed_overridden());
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
