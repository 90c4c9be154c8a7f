#include "scenario/workload_reader.h"

#include <map>
#include <set>

#include "common/errors.h"
#include "common/input_file.h"
#include "common/input_limits.h"
#include "common/units.h"
#include "engine/graph_check.h"
#include "scenario/astra_system.h"
#include "scenario/model_workload.h"
#include "workloads/chakra/chakra_import.h"
#include "workloads/graph_json.h"

namespace orrery {
namespace {

// The family of a zoo model by its name, for grouping validation errors.
std::string model_kind(const std::string& name) {
  auto starts = [&](const char* p) { return name.rfind(p, 0) == 0; };
  for (const char* p : {"resnet", "vgg", "inception", "alexnet", "small_cnn", "mobilenet",
                        "efficientnet", "densenet"})
    if (starts(p)) return "cnn";
  for (const char* p : {"bert", "gpt", "opt", "transformer", "t5", "llama"})
    if (starts(p)) return "transformer";
  for (const char* p : {"lstm", "gnmt", "rnn"})
    if (starts(p)) return "rnn";
  if (starts("dlrm") || starts("multi_interests")) return "recsys";
  if (starts("gcn")) return "gnn";
  return "other";
}

// How a Chakra workload's collectives run: ASTRA-sim's system file (astra_system, with only
// collectives.mode beside it), the keys of strategy.collectives (collectives), or the legacy
// workload-level protocol.
void read_chakra_collectives(const YamlMap& w, const std::string& base_dir,
                             ChakraImportOptions* o) {
  ChakraImportOptions& opt = *o;
  if (w.has("astra_system") && w.has("protocol"))
    w.fail("protocol", "the astra_system file gives the collectives: drop protocol");
  if (w.has("astra_system")) {
    // ASTRA-sim's system file, unchanged (scenario/astra_system.h); collectives.mode may
    // still choose analytical collectives.
    const CollectiveOptions c =
        read_astra_system(w.input_file("astra_system", base_dir, "ASTRA-sim system file"));
    opt.algo = c.algo;
    opt.protocol = c.protocol;
    opt.pipeline = c.pipeline;
    const YamlMap cm = w.map("collectives");
    const std::string mode = cm.str("mode", "flow");
    if (mode != "flow" && mode != "analytical")
      cm.fail("mode", "expected flow or analytical, got \"" + mode + "\"");
    opt.analytical = mode == "analytical";
    cm.reject_unknown_keys();
  } else if (w.has("collectives")) {
    if (w.has("protocol"))
      w.fail("protocol", "give the protocol inside collectives: (collectives.protocol)");
    const CollectiveOptions c = read_collective_options(w.map("collectives"));
    opt.algo = c.algo;
    opt.protocol = c.protocol;
    opt.chunks = c.chunks;
    opt.pipeline = c.pipeline;
    opt.analytical = c.analytical;
    if (!opt.engine_collectives && (c.analytical || c.algo != CollectiveAlgo::kAuto))
      w.fail("collectives", "needs engine_collectives: true (the importer's own flows are rings)");
  } else {
    const std::string protocol = w.str("protocol", "auto");
    if (!parse_collective_protocol(protocol, &opt.protocol))
      w.fail("protocol", "expected auto, LL, LL128, Simple or ideal, got \"" + protocol + "\"");
  }
}

// Which platform GPU each Chakra rank runs on, its server and its launching CPU:
//  - rank_map: [GPU host or platform GPU index, ...], one per rank;
//  - ranks_per_server: N: rank i on the (i / N)-th server's (i mod N)-th GPU (a trace written
//    for servers of N GPUs on a platform whose servers have at least N);
//  - neither: rank i on the platform's i-th GPU (servers filled in order).
void place_chakra_ranks(const YamlMap& w, int ranks, const ClusterLayout& layout,
                        ChakraImportOptions* opt) {
  const int gpus = static_cast<int>(layout.gpus.size());
  std::vector<int> pick;  // platform GPU index of each rank
  if (w.has("rank_map") && w.has("ranks_per_server"))
    w.fail("ranks_per_server", "give either rank_map or ranks_per_server, not both");
  if (w.has("rank_map")) {
    const std::vector<std::string> entries = w.str_list("rank_map");
    if (static_cast<int>(entries.size()) != ranks)
      w.fail("rank_map", "has " + std::to_string(entries.size()) + " entries for " +
                             std::to_string(ranks) + " rank files (one GPU per rank)");
    std::map<std::string, int> by_host;
    for (int i = 0; i < gpus; ++i) by_host[layout.gpus[i].host] = i;
    std::set<int> used;
    for (int r = 0; r < ranks; ++r) {
      const std::string& e = entries[r];
      int g = -1;
      auto it = by_host.find(e);
      if (it != by_host.end()) {
        g = it->second;
      } else if (!e.empty() && e.find_first_not_of("0123456789") == std::string::npos &&
                 e.size() < 10) {
        g = std::stoi(e);
        if (g >= gpus) g = -1;
      }
      if (g < 0)
        w.fail("rank_map", "rank " + std::to_string(r) + ": \"" + e +
                               "\" is neither a GPU host of the platform nor a GPU index below " +
                               std::to_string(gpus));
      if (!used.insert(g).second)
        w.fail("rank_map", "rank " + std::to_string(r) + ": GPU \"" + layout.gpus[g].host +
                               "\" already runs another rank");
      pick.push_back(g);
    }
  } else if (w.has("ranks_per_server")) {
    const int per = w.integer("ranks_per_server", 1, 1, 1 << 20);
    const int servers = (ranks + per - 1) / per;
    if (servers > static_cast<int>(layout.servers.size()))
      w.fail("ranks_per_server", std::to_string(ranks) + " ranks at " + std::to_string(per) +
                                     " per server need " + std::to_string(servers) +
                                     " servers; the platform has " +
                                     std::to_string(layout.servers.size()));
    for (int r = 0; r < ranks; ++r) {
      const auto& server = layout.servers[r / per].gpus;
      if (r % per >= static_cast<int>(server.size()))
        w.fail("ranks_per_server", std::to_string(per) + " ranks per server, but server " +
                                       std::to_string(r / per) + " has " +
                                       std::to_string(server.size()) + " GPUs");
      pick.push_back(server[r % per]);
    }
  } else {
    if (ranks > gpus)
      w.fail("files", std::to_string(ranks) + " rank files but the platform has " +
                          std::to_string(gpus) + " GPUs");
    for (int r = 0; r < ranks; ++r) pick.push_back(r);
  }
  for (int g : pick) {
    opt->device_hosts.push_back(layout.gpus[g].host);
    opt->device_nodes.push_back("server" + std::to_string(layout.gpus[g].server));
    opt->device_launch_hosts.push_back(layout.gpus[g].launch_host);
  }
}

}  // namespace

ClusterLayout platform_layout(const PlatformSource& platform,
                              const std::vector<GpuPlacement>& platform_gpus) {
  if (!platform.topology.hosts.empty()) return cluster_layout(platform.topology);
  std::vector<std::string> hosts;
  for (const auto& g : platform_gpus) hosts.push_back(g.host);
  return cluster_layout_from_hosts(hosts);
}

WorkloadBuild read_workload_on_device(const YamlMap& root, const std::string& base_dir,
                                      const std::vector<GpuPlacement>& platform_gpus,
                                      const ClusterLayout& layout, const WorkloadTarget& target) {
  WorkloadBuild out;
  if (!root.has("workload")) root.fail("workload", "is required");
  YamlMap w = root.map("workload");
  std::string type = w.str("type", "synthetic-dp");
  // A software stack shapes the kernels of workloads Orrery builds; graphs and traces already are
  // some framework's kernels, and the synthetic step has none.
  if (root.has("framework") && type != "model" && type != "model_file" && type != "hf_config" &&
      type != "llm")
    root.fail("framework", "applies to model, model_file, hf_config and llm workloads; a " + type +
                               " workload's ops are given as they ran");
  if (type == "graph") {
    std::string file = w.input_file("file", base_dir, "orrery-graph JSON file");
    w.reject_unknown_keys();
    out.graph = load_graph_json(file);
    return out;
  }
  if (type == "chakra") {
    // One Chakra ET file per rank, placed on the platform's GPUs (place_chakra_ranks).
    ChakraImportOptions opt;
    std::vector<std::string> files;
    for (const auto& f : w.str_list("files")) files.push_back(resolve_input_path(base_dir, f));
    if (files.empty()) w.fail("files", "is required: rank files, their directory or their prefix");
    files = resolve_chakra_files(files);
    if (w.has("comm_groups"))
      opt.comm_groups =
          load_chakra_comm_groups(w.input_file("comm_groups", base_dir, "Chakra comm-group file"));
    opt.prefer_num_ops = w.boolean("prefer_num_ops", false);
    opt.engine_collectives = w.boolean("engine_collectives", true);
    read_chakra_collectives(w, base_dir, &opt);
    place_chakra_ranks(w, static_cast<int>(files.size()), layout, &opt);
    w.reject_unknown_keys();
    out.graph = load_chakra_traces(files, opt);
    return out;
  }
  if (type == "llm") {
    if (target.platform->topology.hosts.empty())
      w.fail("type", "language-model workloads need a generated platform (a preset), not XML");
    LlmWorkload lw = build_llm_workload(root, w, layout, target.device, base_dir);
    out.graph = std::move(lw.graph);
    out.summary = lw.summary;
    out.ops_priced = true;
    out.llm = lw.info;
    out.kind = "llm";
    out.framework = lw.framework;
    return out;
  }
  if (type == "model" || type == "model_file" || type == "hf_config") {
    // The estimate needs the generated platform's server; SimGrid XML platforms have none.
    const ServerSpec* server = target.analytical && target.server ? &*target.server : nullptr;
    ModelWorkload mw = build_model_workload(root, w, layout, target.device, server, base_dir);
    out.graph = std::move(mw.graph);
    out.summary = mw.summary;
    out.ops_priced = true;
    out.analytical_seconds = mw.analytical_seconds;
    out.iterations = mw.iterations;
    out.kind = model_kind(mw.model);
    out.framework = mw.framework;
    return out;
  }
  if (type != "synthetic-dp")
    w.fail("type",
           "expected model, model_file, hf_config, llm, graph, chakra or synthetic-dp, got \"" +
               type + "\"");
  DataParallelPattern p;
  p.layers = w.integer("layers", p.layers);
  if (p.layers < 1) w.fail("layers", "must be at least 1");
  p.forward_time = w.time("forward_time", p.forward_time);
  p.backward_factor = w.number("backward_factor", p.backward_factor);
  p.gradient_bytes = w.size("gradient_bytes", p.gradient_bytes);
  p.update_time = w.time("update_time", p.update_time);
  p.input_bytes = w.size("input_bytes", p.input_bytes);
  const std::string protocol = w.str("protocol", "auto");
  if (!parse_collective_protocol(protocol, &p.protocol))
    w.fail("protocol", "expected auto, LL, LL128, Simple or ideal, got \"" + protocol + "\"");
  // Checked here, against the keys the user wrote, rather than later against the ops they
  // become (common/input_limits.h holds the ranges). Backward takes `backward_factor` forward
  // times: a thousand is already no real model.
  constexpr Range kBackwardFactor{0, 1e3, Quantity::kNumber};
  const struct {
    const char* key;
    double value;
    const Range& range;
  } checks[] = {{"forward_time", p.forward_time, limits::kOpDuration},
                {"backward_factor", p.backward_factor, kBackwardFactor},
                {"gradient_bytes", p.gradient_bytes, limits::kBytes},
                {"update_time", p.update_time, limits::kOpDuration},
                {"input_bytes", p.input_bytes, limits::kBytes}};
  for (const auto& c : checks)
    if (!c.range.contains(c.value)) w.fail(c.key, out_of_range(c.value, c.range));
  if (p.forward_time * p.backward_factor > limits::kOpDuration.hi)
    w.fail("backward_factor", "makes a backward op longer than " +
                                  format_quantity(limits::kOpDuration.hi, Quantity::kTime));
  std::vector<GpuPlacement> gpus = platform_gpus;
  int count = w.integer("gpus", static_cast<int>(gpus.size()));
  if (count < 1 || count > static_cast<int>(gpus.size()))
    w.fail("gpus", "must be between 1 and the platform's " + std::to_string(gpus.size()) + " GPUs");
  gpus.resize(count);
  w.reject_unknown_keys();
  if (gpus.empty())
    w.fail("type",
           "a synthetic workload needs GPUs: the platform has none (for an xml platform, "
           "list their host names under platform.gpus)");
  out.graph = make_data_parallel(p, gpus);
  check_graph(out.graph, root.origin() + ": workload");
  return out;
}

}  // namespace orrery
