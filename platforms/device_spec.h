// Device specs: the one description of a GPU (or a CPU core standing in for one) that the
// platform, the cost models and every header and result file use. The built-in specs are
// platforms/devices/*.yaml (compiled into the binary as the embedded set "device_specs"); each
// cites where its numbers come from. A platform's `server.gpu` and a scenario's `device` name
// one and may override any field:
//   device: V100-SXM2
//   device: {model: V100-SXM2, fp32: 20TFLOP/s, mem_bw: 1.2TB/s}
//   gpu:    {model: A100, flops: 25TFLOP/s}     (flops: every compute peak scales with fp32)
// which is how a sweep "upgrades the GPU" (PAI, Table III).
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "common/dtype.h"

namespace orrery {

// Per-op host (CPU) overheads of launching GPU work, in seconds: the five types of
// the DLRM performance model section III-C (Fig. 6) and the GPU-side gap of its Algorithm 1.
// Defaults are the paper's: T1 about 8 us (Fig. 7, V100 platform) and T4 = 10 us (the single
// value it uses for every CUDA runtime call, section IV-B); T2, T3 and T5 appear only as
// per-op plots (Fig. 8) and default to 0 here; the GPU gap is Algorithm 1's "+1" (us).
struct HostOverheads {
  double t1 = 8e-6;   // between two top-level framework op calls
  double t2 = 0.0;    // before an op's first kernel launch
  double t3 = 0.0;    // after an op's last kernel launch
  double t4 = 10e-6;  // one CUDA runtime call (cudaLaunchKernel, cudaMemcpyAsync...)
  double t5 = 0.0;    // between two kernel launches of one op (or an op without kernels)
  double gap = 1e-6;  // minimum GPU idle time between two kernels (Algorithm 1, line 11)

  // A synchronous device runs its ops on the thread that runs the framework (a CPU training
  // with PyTorch): host time does not overlap the ops, it adds to them, and none of the
  // launch model above applies. Framework time per op by phase (negative when the measured
  // op times already hold host work a step does not do) and per training step; measured by
  // scripts/validate_overheads.py (docs/validation.md).
  bool synchronous = false;
  double forward = 0.0;
  double backward = 0.0;
  double optimizer = 0.0;
  double step = 0.0;

  // Host time one single-kernel op occupies: T1 + T2 + T4 + T3.
  double per_op() const { return t1 + t2 + t4 + t3; }
};

struct DeviceSpec {
  std::string name;  // the spec's file stem, e.g. "V100-SXM2"
  std::string description;
  std::vector<std::string> aliases;  // other names it answers to ("V100")
  std::vector<std::string> sources;  // where the numbers come from

  // Peak rates in flop/s. fp16/bf16 are the CUDA-core rates; 0 means "same as fp32" (no
  // faster half-precision path). *_tc are dense Tensor Core rates (FP32 accumulate); 0 means
  // the device has no such Tensor Core path.
  double fp32 = 0.0;
  double fp16 = 0.0;
  double bf16 = 0.0;
  double tf32_tc = 0.0;
  double fp16_tc = 0.0;
  double bf16_tc = 0.0;
  double int8_tc = 0.0;  // int8 ops/s
  // FP8 (E4M3/E5M2, also MXFP8 with its per-block scales) and FP4 (NVFP4, MXFP4) Tensor Core
  // rates: Hopper has FP8, Blackwell both; 0: no such path (an FP8 GEMM then runs at bf16_tc).
  double fp8_tc = 0.0;
  double fp4_tc = 0.0;
  // Special-function unit rate (exponentials per second), what bounds the softmax inside a
  // fused attention kernel; 0: derived from fp32 (special_function_rate()).
  double sfu = 0.0;

  double mem_bw = 0.0;     // DRAM bandwidth, bytes/s
  double l2_bw = 0.0;      // L2 bandwidth, bytes/s; 0: estimated as kL2BandwidthRatio x mem_bw
  int sms = 0;             // streaming multiprocessors
  double l2_bytes = 0.0;   // L2 cache size
  double mem_bytes = 0.0;  // device memory size
  bool tensor_cores = false;

  // What kernel models that count cycles need, and the board's power; 0 where no source gives
  // it (optional in spec files; `flops` and with_platform_rates leave them as shipped).
  // clock: boost clock of the CUDA cores in Hz, the one the vendor's FP32 peak is computed at:
  // fp32 = 2 x clock x sms x fp32_cores_per_sm (one FMA per core per cycle). Hopper's Tensor
  // Core peaks use a lower clock (1830 MHz on the H100 SXM5), so the Tensor Core rates above
  // stay the ones to use for Tensor Core work.
  double clock = 0.0;         // YAML `clock: 1410MHz`
  int fp32_cores_per_sm = 0;  // FP32 CUDA cores per SM (64 up to Ampere GA100, 128 after)
  double tdp_w = 0.0;         // board power (TDP / max power), watts; YAML `tdp_w: 400`
  // DRAM technology ("HBM2", "HBM3e", "GDDR6"...) and the process node in nm: the kernel
  // models' achieved bandwidth depends on the first, energy per flop (and so how far a power
  // cap holds the clock below boost) on the second. Empty / 0 where unknown (a CPU core).
  std::string memory;
  double process_nm = 0.0;
  // CUDA compute capability (8.0 for the A100, 9.0 for Hopper, 10.0 for the B200, 12.0 for the
  // RTX PRO 6000 Blackwell): which kernels a library can run there (FlashAttention-3 is built for
  // 9.0 only; Hopper's and datacenter Blackwell's Tensor Cores reach their peak only through
  // their asynchronous MMA instructions). 0 where the spec does not say.
  double compute_capability = 0.0;
  bool hbm() const { return memory.rfind("HBM", 0) == 0; }

  HostOverheads host;

  // Keys a scenario overrode (empty for a built-in spec as shipped). Measured op times of the
  // named device no longer describe a device whose speeds were changed.
  std::vector<std::string> overridden;

  // Peak rate for ops of dtype `t`, on Tensor Cores when `tensor_core` and the device has a
  // Tensor Core path for `t` (otherwise the CUDA-core rate). tf32 without Tensor Cores and
  // integer types run at the fp32 rate.
  double peak_flops(DType t, bool tensor_core) const;
  // Whether Tensor Cores exist for dtype `t` on this device.
  bool has_tensor_core_path(DType t) const;
  // Blackwell's (fifth-generation) Tensor Cores or later: block-scaled FP8 and FP4 (MXFP8,
  // NVFP4) and FP8 operands in any layout. Specs carry no generation; FP4 Tensor Cores came
  // with it, so a spec with fp4_tc is taken as one.
  bool blackwell_tensor_cores() const { return has_tensor_core_path(DType::kFP4); }
  double l2_bandwidth() const;
  // sfu, or 16 special-function lanes per SM at the FP32 clock: fp32 x 16 / (2 x
  // fp32_cores_per_sm), 128 cores when the spec does not say (H100 SXM5: 4.2e12 per second,
  // the 3.9 TFLOP/s of special functions FlashAttention-3 quotes at its lower clock).
  double special_function_rate() const;
  // True when a scenario changed a field that sets kernel speed (rates, bandwidths, SMs, L2,
  // clock, cores per SM); tdp_w and host overheads do not.
  bool kernel_speed_overridden() const;
};

// L2/DRAM bandwidth ratio used when a spec gives no L2 bandwidth: 2.5, between the ratios of
// the L2 bandwidths measured by the code of the DLRM performance model (P100 2.2, TITAN Xp 2.6,
// V100 3.2; owensgroup/ml_perf_model analysis/utils.py HW_PARAMS).
inline constexpr double kL2BandwidthRatio = 2.5;

// Names of the built-in specs (file stems), sorted.
std::vector<std::string> device_spec_names();

// The built-in spec called `name` (a file stem or an alias). Case, spaces and underscores do
// not matter: "Tesla P4", "tesla_p4" and "Tesla-P4" are one name, so the device names that
// nvidia-smi and torch.cuda.get_device_name print ("NVIDIA A100-PCIE-40GB") resolve when a spec
// lists them as aliases. Throws InputError listing the known names when there is none.
DeviceSpec device_spec(const std::string& name);

// Reads a device: a scalar names a built-in spec; a mapping {model: NAME, FIELD: value...}
// starts from the named spec (or from `base` when it has no `model` key and `base` is a spec)
// and replaces each given field; `flops` scales every compute peak to a new fp32 rate.
// `overridden` lists the fields that differ from the named spec as shipped. Keys are strict:
// unknown keys and bad values are InputErrors naming `origin`, the line and `key_path`.
DeviceSpec parse_device_spec(const YAML::Node& node, const std::string& origin,
                             const std::string& key_path = "device",
                             const DeviceSpec& base = DeviceSpec());

// The GPU of a platform that names none: V100-SXM2 (the GPU of the PAI and Tianshu studies).
const DeviceSpec& default_gpu();

// The device as headers and result files name it: "A100-SXM4-80GB", or
// "V100-SXM2 with fp32, mem_bw changed" when a scenario overrode fields of the shipped spec.
std::string device_label(const DeviceSpec& d);

// The value of field `key` of `d` as a scenario would write it ("15700000000000flops",
// "900000000000Bps", "80", and `flops` for the fp32 rate), so a sweep's expressions can use a
// device's numbers; "" for a key that is no numeric field of a spec.
std::string device_field_text(const DeviceSpec& d, const std::string& key);

// Keys of the fields of `d` that differ from `shipped` ("fp32", "mem_bw", "host_overheads"...).
std::vector<std::string> changed_fields(const DeviceSpec& shipped, const DeviceSpec& d);

// `spec` with every compute peak scaled by fp32 / spec.fp32 (a faster GPU is faster at every
// precision), memory bandwidth and SM count replaced where positive. Changed fields are
// recorded in `overridden`, so a sweep over platform.server.gpu.flops prices ops on the GPU it
// names.
DeviceSpec with_platform_rates(DeviceSpec spec, double fp32, double mem_bw, int sms);

// Parses a complete spec file (what platforms/devices/*.yaml hold); `name` becomes its name.
DeviceSpec parse_device_spec_file(const std::string& yaml_text, const std::string& name,
                                  const std::string& origin);

}  // namespace orrery
