#include "scenario/scenario.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "common/errors.h"
#include "common/input_file.h"
#include "common/input_limits.h"
#include "common/units.h"
#include "common/yaml_reader.h"
#include "engine/graph_check.h"
#include "platforms/astra_network.h"
#include "platforms/link_rates.h"
#include "scenario/astra_system.h"
#include "scenario/gpu_speed.h"
#include "scenario/jobs.h"
#include "scenario/model_workload.h"
#include "scenario/workload_reader.h"
#include "strategies/cluster_layout.h"
#include "workloads/chakra/chakra_import.h"
#include "workloads/graph_json.h"
#include "workloads/synthetic_dp.h"

namespace fs = std::filesystem;

namespace orrery {
namespace {

std::string resolve(const std::string& base_dir, const std::string& p) {
  if (p.empty() || fs::path(p).is_absolute()) return p;
  return (fs::path(base_dir) / p).lexically_normal().string();
}

// Every bandwidth says whether it is one link's or a sum, since a planner compares both kinds,
// and NVLink and NICs give the rate their links carry next to the datasheet's
// (platforms/link_rates.h).
std::string summarize(const PlatformSpec& s) {
  const ServerSpec& v = s.server;
  std::ostringstream o;
  o << s.name << ": " << s.servers << (s.servers == 1 ? " server" : " servers") << " x " << v.gpus;
  if (s.server_groups.empty()) {
    o << " " << v.gpu.name;
  } else {
    o << " GPUs of mixed models (servers: ";
    for (size_t g = 0; g < s.server_groups.size(); ++g)
      o << (g ? ", " : "") << s.server_groups[g].servers << " "
        << s.server_groups[g].server.gpu.name;
    o << "; the links below are the first group's)";
  }
  o << ", PCIe " << format_bandwidth(v.pcie.bandwidth) << " per link";
  if (v.nvlink.topology != "none")
    o << ", NVLink " << v.nvlink.topology << " " << v.nvlink.links_per_gpu << " x "
      << format_bandwidth(v.nvlink.bandwidth) << " per GPU ("
      << format_bandwidth(v.nvlink.links_per_gpu * v.nvlink.bandwidth) << " per GPU in all, "
      << format_bandwidth(v.nvlink.links_per_gpu * nvlink_data_rate(v.nvlink)) << " achievable)";
  if (v.nic.count == 0) {
    o << ", no NICs";
  } else {
    o << ", " << v.nic.count << (v.nic.count == 1 ? " NIC" : " NICs") << " of "
      << format_bandwidth(v.nic.bandwidth) << " each (" << format_bandwidth(nic_data_rate(s))
      << " achievable";
    if (v.nic.count > 1)
      o << "; " << format_bandwidth(v.nic.count * v.nic.bandwidth) << " per server";
    o << ") on " << s.fabric.kind << " " << s.fabric.topology;
  }
  return o.str();
}

// Platform section -> source. `gpus` receives the GPU placement a synthetic workload uses.
void read_platform(const YamlMap& root, const std::string& base_dir,
                   const ScenarioBuildOptions& options, Scenario* sc,
                   std::vector<GpuPlacement>* gpus) {
  if (!root.has("platform")) root.fail("platform", "is required (a preset or an xml file)");
  YamlMap pm = root.map("platform");
  if (pm.has("xml")) {
    sc->device =
        root.has("device") ? parse_device_spec(root.raw("device"), root.origin()) : default_gpu();
    sc->platform.xml_file = resolve(base_dir, pm.required_str("xml"));
    if (!fs::exists(sc->platform.xml_file))
      pm.fail("xml", "file \"" + sc->platform.xml_file + "\" does not exist");
    for (const auto& h : pm.str_list("gpus")) gpus->push_back({h, h});
    pm.reject_unknown_keys();
    sc->platform_summary = "SimGrid XML " + sc->platform.xml_file;
    return;
  }
  if (pm.has("astra_network")) {
    // ASTRA-sim's network file, unchanged (platforms/astra_network.h).
    sc->device =
        root.has("device") ? parse_device_spec(root.raw("device"), root.origin()) : default_gpu();
    const std::string file = resolve(base_dir, pm.required_str("astra_network"));
    pm.reject_unknown_keys();
    AstraNetwork net = read_astra_network(file, sc->device);
    sc->platform.topology = std::move(net.topology);
    sc->platform_summary = net.summary;
    for (const auto& h : gpu_hosts(sc->platform.topology)) gpus->push_back({h, h});
    return;
  }
  PlatformSpec spec = parse_platform_spec(root.raw("platform"), root.origin(), "platform");
  if (root.has("device") && !spec.server_groups.empty())
    root.fail("device",
              "replaces the GPU of every server, but platform.server_groups gives each group "
              "its own: set gpu in the groups instead");
  if (root.has("device"))
    spec.server.gpu =
        parse_device_spec(root.raw("device"), root.origin(), "device", spec.server.gpu);
  // A language-model plan that cannot fit is refused before the platform is built.
  if (options.skip_out_of_memory) {
    const YamlMap w = root.map("workload");
    if (w.str("type", "") == "llm")
      check_llm_fits(root, w, spec.server.gpu, spec.servers * spec.server.gpus, base_dir);
  }
  sc->platform.topology = build_topology(spec);
  sc->platform_summary = summarize(spec);
  sc->device = spec.server.gpu;
  sc->platform_server = spec.server;
  for (const auto& h : gpu_hosts(sc->platform.topology))
    gpus->push_back({h, launch_host_of(sc->platform.topology, h)});
  if (spec.server_groups.size() > 1) {
    for (const ServerGroup& g : spec.server_groups) sc->server_kinds.push_back(g.server);
    // build_topology lists GPUs server by server, the same count in each.
    for (size_t i = 0; i < gpus->size(); ++i)
      sc->gpu_kind.push_back(server_group_of(spec, static_cast<int>(i) / spec.server.gpus));
  }
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
        read_astra_system(resolve(base_dir, w.required_str("astra_system")));
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

ClusterLayout platform_layout(const Scenario& sc, const std::vector<GpuPlacement>& platform_gpus) {
  if (!sc.platform.topology.hosts.empty()) return cluster_layout(sc.platform.topology);
  std::vector<std::string> hosts;
  for (const auto& g : platform_gpus) hosts.push_back(g.host);
  return cluster_layout_from_hosts(hosts);
}

void read_workload_on_device(const YamlMap& root, const std::string& base_dir,
                             const std::vector<GpuPlacement>& platform_gpus,
                             const ClusterLayout& layout, Scenario* sc) {
  if (!root.has("workload")) root.fail("workload", "is required");
  YamlMap w = root.map("workload");
  std::string type = w.str("type", "synthetic-dp");
  if (type == "graph") {
    std::string file = resolve(base_dir, w.required_str("file"));
    w.reject_unknown_keys();
    sc->graph = load_graph_json(file);
    return;
  }
  if (type == "chakra") {
    // One Chakra ET file per rank, placed on the platform's GPUs (place_chakra_ranks).
    ChakraImportOptions opt;
    std::vector<std::string> files;
    for (const auto& f : w.str_list("files")) files.push_back(resolve(base_dir, f));
    if (files.empty()) w.fail("files", "is required: rank files, their directory or their prefix");
    files = resolve_chakra_files(files);
    if (w.has("comm_groups"))
      opt.comm_groups = load_chakra_comm_groups(resolve(base_dir, w.required_str("comm_groups")));
    opt.prefer_num_ops = w.boolean("prefer_num_ops", false);
    opt.engine_collectives = w.boolean("engine_collectives", true);
    read_chakra_collectives(w, base_dir, &opt);
    place_chakra_ranks(w, static_cast<int>(files.size()), layout, &opt);
    w.reject_unknown_keys();
    sc->graph = load_chakra_traces(files, opt);
    return;
  }
  if (type == "llm") {
    if (sc->platform.topology.hosts.empty())
      w.fail("type", "language-model workloads need a generated platform (a preset), not XML");
    LlmWorkload lw = build_llm_workload(root, w, layout, sc->device, base_dir);
    sc->graph = std::move(lw.graph);
    sc->workload_summary = lw.summary;
    sc->ops_priced = true;
    sc->llm = lw.info;
    return;
  }
  if (type == "model" || type == "model_file" || type == "hf_config") {
    // The estimate needs the generated platform's server; SimGrid XML platforms have none.
    const ServerSpec* server =
        sc->analytical && sc->platform_server ? &*sc->platform_server : nullptr;
    ModelWorkload mw = build_model_workload(root, w, layout, sc->device, server, base_dir);
    sc->graph = std::move(mw.graph);
    sc->workload_summary = mw.summary;
    sc->ops_priced = true;
    sc->analytical_seconds = mw.analytical_seconds;
    sc->iterations = mw.iterations;
    return;
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
  sc->graph = make_data_parallel(p, gpus);
  check_graph(sc->graph, root.origin() + ": workload");
}

void apply_override(YAML::Node& root, const std::string& assignment) {
  auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError("--set " + assignment + ": expected key.path=value");
  std::string path = assignment.substr(0, eq);
  YAML::Node value = load_yaml_text(assignment.substr(eq + 1), "--set " + path);
  if (value.IsScalar()) value.SetTag(kOverrideTag);
  std::vector<std::string> keys;
  std::stringstream ss(path);
  for (std::string k; std::getline(ss, k, '.');) {
    if (k.empty()) throw InputError("--set " + assignment + ": empty key in path");
    keys.push_back(k);
  }
  // Walk down by reassigning handles; yaml-cpp nodes are references into the tree.
  std::vector<YAML::Node> chain{root};
  for (size_t i = 0; i + 1 < keys.size(); ++i) {
    YAML::Node next = chain.back()[keys[i]];
    if (next && !next.IsNull() && !next.IsMap())
      throw InputError("--set " + assignment + ": \"" + keys[i] + "\" is not a mapping");
    if (!next || next.IsNull()) chain.back()[keys[i]] = YAML::Node(YAML::NodeType::Map);
    chain.push_back(chain.back()[keys[i]]);
  }
  chain.back()[keys.back()] = value;
}

Scenario build_scenario(const YAML::Node& root_node, const std::string& origin,
                        const std::string& text, const ScenarioBuildOptions& options) {
  Scenario sc;
  sc.origin = origin;
  sc.text = text;
  YamlMap root(root_node, origin);
  // The sweep commands take these sections out before the scenario is built; here they mean
  // a sweep file was given to `run` or `validate`.
  for (const char* section : {"plan", "sweep"})
    if (root.has(section))
      root.fail(section, std::string("this scenario has a ") + section +
                             " section: run it with `orrery " +
                             (section == std::string("plan") ? "plan" : "sweep") +
                             "`, or check every point with `orrery " +
                             (section == std::string("plan") ? "plan" : "sweep") + " --dry-run`");
  std::string base_dir = fs::path(origin).parent_path().string();
  sc.name = root.str("name", fs::path(origin).stem().string());
  sc.description = root.str("description", "");
  std::vector<GpuPlacement> gpus;
  YamlMap out = root.map("output");
  sc.analytical = options.analytical || out.boolean("analytical", false);
  try {
    read_platform(root, base_dir, options, &sc, &gpus);
    if (root.has("jobs") || root.has("job_mix")) {
      if (root.has("workload"))
        root.fail(root.has("jobs") ? "jobs" : "job_mix",
                  "give either one workload or a list of jobs (or a job mix), not both");
      read_jobs(root, base_dir, gpus, platform_layout(sc, gpus), &sc);
    } else {
      read_workload(root, base_dir, gpus, platform_layout(sc, gpus), &sc);
    }
    std::vector<std::string> hosts;
    for (const auto& g : gpus) hosts.push_back(g.host);
    apply_gpu_speeds(read_gpu_speeds(root, hosts), &sc.graph);
  } catch (const InputError& e) {
    // Builders below the scenario (size guards, strategies) name the item but not the file.
    const std::string what = e.what();
    if (what.find(origin) != std::string::npos) throw;
    if (dynamic_cast<const InfeasibleError*>(&e)) throw InfeasibleError(origin + ": " + what);
    throw InputError(origin + ": " + what);
  }
  sc.output_file = out.str("file", "");
  sc.record_timeline = out.boolean("timeline", true);
  sc.trace_file = out.str("trace", "");
  sc.link_usage_bins = out.integer("link_usage_bins", 256, 0, 100000);
  sc.trace_flows = out.integer("trace_flows", 1000000, 0, 100000000);
  out.reject_unknown_keys();
  root.reject_unknown_keys();

  if (!sc.platform.topology.hosts.empty()) {
    // Catch a graph naming hosts the platform lacks now, not inside the simulation.
    std::set<std::string> hosts;
    for (const auto& h : sc.platform.topology.hosts) hosts.insert(h.name);
    for (const auto& d : sc.graph.devices)
      for (const std::string* h : {&d.host, &d.launch_host})
        if (!h->empty() && !hosts.count(*h))
          throw InputError(origin + ": workload device \"" + d.name + "\" runs on host \"" + *h +
                           "\", which platform " + sc.platform.topology.name + " does not have");
  }
  return sc;
}

Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides,
                       const ScenarioBuildOptions& options) {
  std::string text = read_input_file(path, "scenario file", kMaxYamlBytes);
  YAML::Node root = load_yaml_text(text, path);
  if (!root || root.IsNull()) throw InputError(path + ": the scenario is empty");
  for (const auto& o : overrides) {
    apply_override(root, o);
    text += "\n# --set " + o;
  }
  return build_scenario(root, path, text, options);
}

}  // namespace orrery
