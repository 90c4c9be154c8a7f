#include "scenario/model_workload.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>

#include "common/errors.h"
#include "common/input_file.h"
#include "common/input_limits.h"
#include "common/units.h"
#include "engine/graph_check.h"
#include "models/cost_model.h"
#include "models/host_overhead.h"
#include "models/mixed_precision.h"
#include "models/pricing.h"
#include "platforms/device_spec.h"
#include "scenario/pai_estimate.h"
#include "strategies/framework.h"
#include "strategies/strategy.h"
#include "workloads/model_graph_json.h"
#include "workloads/zoo/hf_config.h"
#include "workloads/zoo/zoo.h"

namespace fs = std::filesystem;

namespace orrery {
namespace {

// Servers whose GPUs run a device of the graph the strategy built (its own choice of GPUs).
int servers_spanned(const ClusterLayout& layout, const ExecutionGraph& graph) {
  std::set<std::string> hosts;
  for (const auto& d : graph.devices) hosts.insert(d.host);
  std::set<int> servers;
  for (const auto& gpu : layout.gpus)
    if (hosts.count(gpu.host)) servers.insert(gpu.server);
  return std::max<int>(1, static_cast<int>(servers.size()));
}

StrategyOptions read_strategy(const YamlMap& s) {
  StrategyOptions o;
  std::string type = s.str("type", "1w1g");
  if (!parse_strategy(type, &o.type))
    s.fail("type",
           "expected 1w1g, 1wng, ps_worker, allreduce, pearl or byteps, got \"" + type + "\"");
  o.gpus = s.integer("gpus", 0);
  if (o.gpus < 0) s.fail("gpus", "must not be negative (0 means all)");
  o.bucket_bytes = s.size("bucket", o.bucket_bytes, limits::kBucketBytes);
  o.overlap = s.boolean("overlap", o.overlap);
  const std::string on = s.str("allreduce_on", "gpu");
  if (on != "gpu" && on != "host")
    s.fail("allreduce_on",
           "expected gpu (NCCL) or host (Horovod's MPI or Gloo over the CPUs), got \"" + on + "\"");
  o.host_allreduce = on == "host";
  o.host_stream_bandwidth =
      s.bandwidth("host_stream_bandwidth", o.host_stream_bandwidth, limits::kBandwidth);
  o.collectives = read_collective_options(s.map("collectives"));
  o.sm_contention = s.boolean("sm_contention", o.sm_contention);
  o.sms_used = s.integer("sms_used", o.sms_used);
  if (o.sms_used < 0) s.fail("sms_used", "must not be negative");
  o.ps_servers = s.integer("ps_servers", o.ps_servers);
  o.ps = parse_ps_options(s.map("ps"));
  o.input_bytes = s.size("input_bytes", o.input_bytes, limits::kBytes);
  o.input_pipeline_time = s.time("input_pipeline_time", o.input_pipeline_time, limits::kOpDuration);
  o.prefetch = s.integer("prefetch", o.prefetch);
  if (o.prefetch < 1) s.fail("prefetch", "must be at least 1");
  o.host_overheads = s.boolean("host_overheads", o.host_overheads);
  o.iterations = s.integer("iterations", o.iterations);
  if (o.iterations < 1) s.fail("iterations", "must be at least 1");
  s.reject_unknown_keys();
  return o;
}

}  // namespace

CollectiveOptions read_collective_options(const YamlMap& m) {
  CollectiveOptions c;
  std::string algo = m.str("algo", "auto");
  if (!parse_collective_algo(algo, &c.algo))
    m.fail(
        "algo",
        "expected auto, ring, tree, hierarchical, nvls, nvls_tree, collnet, pat or direct, got \"" +
            algo + "\"");
  std::string protocol = m.str("protocol", "auto");
  if (!parse_collective_protocol(protocol, &c.protocol))
    m.fail("protocol", "expected auto, LL, LL128, Simple or ideal, got \"" + protocol + "\"");
  c.chunks = m.integer("chunks", c.chunks);
  if (c.chunks < 1) m.fail("chunks", "must be at least 1");
  c.pipeline = m.integer("pipeline", c.pipeline);
  if (c.pipeline < 0 || c.pipeline > 1024)
    m.fail("pipeline", "must be between 0 (chosen by size) and 1024");
  std::string mode = m.str("mode", "flow");
  if (mode != "flow" && mode != "analytical")
    m.fail("mode", "expected flow or analytical, got \"" + mode + "\"");
  c.analytical = mode == "analytical";
  m.reject_unknown_keys();
  return c;
}

ModelWorkload build_model_workload(const YamlMap& root, const YamlMap& w,
                                   const ClusterLayout& layout, const DeviceSpec& device,
                                   const ServerSpec* server, const std::string& base_dir) {
  const std::string type = w.str("type", "");
  ModelGraph model;
  if (type == "model_file") {
    std::string file = w.required_str("file");
    if (!fs::path(file).is_absolute()) file = (fs::path(base_dir) / file).string();
    w.reject_unknown_keys();
    model = load_model_graph_json(file);
  } else if (type == "hf_config") {
    std::string file = w.required_str("file");
    if (!fs::path(file).is_absolute()) file = (fs::path(base_dir) / file).string();
    zoo::HfModel hf;
    try {
      hf = zoo::read_hf_config(read_input_file(file, "Hugging Face config"), file);
    } catch (const InputError& e) {
      w.fail("file", e.what());
    }
    model = make_zoo_model(hf.zoo_model, w, hf.keys);
    // "gpt2-large.json", or "gpt2-large/config.json" as checkpoints lay it out.
    const fs::path path(file);
    model.name =
        path.stem() == "config" ? path.parent_path().filename().string() : path.stem().string();
    if (model.name.empty() || model.name == ".") model.name = hf.model_type;
    w.reject_unknown_keys();
  } else {
    const std::string name = w.required_str("model");
    try {
      model = make_zoo_model(name, w);
    } catch (const InputError& e) {
      // Zoo errors name the key; an unknown model is reported against `workload.model`.
      if (!is_zoo_model(name)) w.fail("model", e.what());
      throw;
    }
    w.reject_unknown_keys();
  }

  CostModel cost(parse_cost_model(root, "cost_model", base_dir));
  const FrameworkProfile framework = scenario_framework(root, base_dir, false);
  MixedPrecisionReport precision;
  PrecisionPolicy precision_policy = PrecisionPolicy::kFP32;
  if (root.has("precision")) {
    MixedPrecisionOptions mp = parse_precision_options(root.raw("precision"), root.origin());
    mp.device = &device;
    mp.cost = &cost;
    precision_policy = mp.policy;
    model = apply_mixed_precision(model, mp, &precision);
  }
  // The framework's fused kernels, casts included, before pricing.
  FusionReport fusion;
  model = fuse_kernels(model, framework.fused.model_graph, &fusion);
  OpPrices prices = price_ops(model, device, cost);
  StrategyOptions opt = read_strategy(root.map("strategy"));
  // A step captured as CUDA graphs launches no kernel from the host, unless the strategy says.
  if (framework.cuda_graphs && !root.map("strategy").has("host_overheads"))
    opt.host_overheads = false;
  // The framework's gradient buckets (DDP's 25 MiB) where the strategy names none.
  if (framework.bucket_bytes >= 0 && !root.map("strategy").has("bucket"))
    opt.bucket_bytes = framework.bucket_bytes;
  // A synchronous device (a CPU) spends its host time inside the op stream, not beside it.
  const bool sync_host = device.host.synchronous && opt.host_overheads;
  if (sync_host) {
    prices.seconds = synchronous_op_times(model, prices.seconds, device.host);
    opt.host_overheads = false;  // no launch ops: the host time is in the op times
  }
  PricedReplica replica{&model, prices.seconds, &device};

  ModelWorkload out;
  out.iterations = opt.iterations;
  out.graph = build_strategy(replica, layout, opt);
  check_graph(out.graph, root.origin() + ": workload");
  if (server) {
    out.analytical_seconds =
        pai_estimate(model, device, *server, opt, servers_spanned(layout, out.graph)).total;
  }
  std::ostringstream s;
  s << model.name << " (batch " << model.batch << ", " << model.ops.size() << " ops/replica, "
    << format_size(model.total_params() * 4) << " fp32 params) on " << device.name << ", strategy "
    << strategy_name(opt.type) << ", " << framework_label(framework);
  if (fusion.fused > 0) s << " (" << fusion.fused << " kernels fused away)";
  s << "; ops priced by";
  for (int k = 0; k < kNumEstimateSources; ++k)
    if (prices.count[k] > 0)
      s << " " << estimate_source_name(static_cast<EstimateSource>(k)) << " " << prices.count[k];
  if (sync_host) s << "; host overheads in the op times (synchronous device)";
  const bool fp8 = low_precision_gemms(precision_policy);
  const std::string recipe = precision_policy_name(precision_policy);
  if (fp8 && precision.fp8_fallback.empty())
    s << "; " << recipe << ": " << precision.fp8_ops << " GEMMs in "
      << (recipe == "nvfp4" ? "FP4" : "FP8") << ", " << precision.casts << " casts";
  if (fp8 && !precision.fp8_fallback.empty())
    s << "; " << recipe << " not used: " << precision.fp8_fallback;
  out.summary = s.str();
  out.model = model.name;
  out.framework = framework.name;
  return out;
}

}  // namespace orrery
