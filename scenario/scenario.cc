#include "scenario/scenario.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "common/errors.h"
#include "common/input_file.h"
#include "common/units.h"
#include "common/yaml_reader.h"
#include "platforms/astra_network.h"
#include "platforms/link_rates.h"
#include "results/run_report.h"
#include "scenario/accuracy.h"
#include "scenario/gpu_speed.h"
#include "scenario/jobs.h"
#include "scenario/workload_reader.h"

namespace fs = std::filesystem;

namespace orrery {
namespace {

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
    sc->platform.xml_file = pm.input_file("xml", base_dir, "SimGrid XML platform");
    for (const auto& h : pm.str_list("gpus")) gpus->push_back({h, h});
    pm.reject_unknown_keys();
    sc->platform_summary = "SimGrid XML " + sc->platform.xml_file;
    return;
  }
  if (pm.has("astra_network")) {
    // ASTRA-sim's network file, unchanged (platforms/astra_network.h).
    sc->device =
        root.has("device") ? parse_device_spec(root.raw("device"), root.origin()) : default_gpu();
    const std::string file = pm.input_file("astra_network", base_dir, "ASTRA-sim network file");
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
  sc->platform_fabric = spec.fabric;
  for (const auto& h : gpu_hosts(sc->platform.topology))
    gpus->push_back({h, launch_host_of(sc->platform.topology, h)});
  if (spec.server_groups.size() > 1) {
    for (const ServerGroup& g : spec.server_groups) sc->server_kinds.push_back(g.server);
    // build_topology lists GPUs server by server, the same count in each.
    for (size_t i = 0; i < gpus->size(); ++i)
      sc->gpu_kind.push_back(server_group_of(spec, static_cast<int>(i) / spec.server.gpus));
  }
}

// What the workload reader needs of the scenario: its platform and GPUs.
WorkloadTarget target_of(const Scenario& sc) {
  WorkloadTarget t;
  t.platform = &sc.platform;
  t.device = sc.device;
  t.server = sc.platform_server;
  t.server_kinds = sc.server_kinds;
  t.gpu_kind = sc.gpu_kind;
  t.analytical = sc.analytical;
  return t;
}

}  // namespace

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

std::string scenario_device_line(const Scenario& sc) {
  if (sc.server_kinds.empty()) return device_line(sc.device, sc.ops_priced);
  std::string names;
  for (const ServerSpec& k : sc.server_kinds)
    if (names.find(device_label(k.gpu)) == std::string::npos)
      names += (names.empty() ? "" : ", ") + device_label(k.gpu);
  return names + (sc.ops_priced ? " (a mixed cluster: each GPU prices its own ops)"
                                : " (a mixed cluster); op times as given by the workload");
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
  sc.sensitivity = options.sensitivity || out.boolean("sensitivity", false);
  if (sc.sensitivity) {
    if (root.has("jobs") || root.has("job_mix"))
      out.fail("sensitivity", "applies to one workload, not to several jobs");
    sc.resolved_yaml = YAML::Dump(root_node);
  }
  try {
    read_platform(root, base_dir, options, &sc, &gpus);
    if (root.has("jobs") || root.has("job_mix")) {
      if (root.has("workload"))
        root.fail(root.has("jobs") ? "jobs" : "job_mix",
                  "give either one workload or a list of jobs (or a job mix), not both");
      JobsBuild built =
          read_jobs(root, base_dir, gpus, platform_layout(sc.platform, gpus), target_of(sc));
      sc.graph = std::move(built.graph);
      sc.ops_priced = built.ops_priced;
      sc.jobs = std::move(built.setup);
    } else {
      WorkloadBuild built =
          read_workload(root, base_dir, gpus, platform_layout(sc.platform, gpus), target_of(sc));
      sc.graph = std::move(built.graph);
      sc.workload_summary = std::move(built.summary);
      sc.ops_priced = built.ops_priced;
      sc.llm = std::move(built.llm);
      sc.analytical_seconds = built.analytical_seconds;
      sc.iterations = built.iterations;
      std::set<std::string> gpu_hosts;
      for (const auto& g : gpus) gpu_hosts.insert(g.host);
      int used = 0;
      for (const auto& d : sc.graph.devices) used += gpu_hosts.count(d.host) > 0;
      sc.traits = {built.kind, built.framework, gpu_generation(sc.device.name),
                   scale_band(sc.llm ? sc.llm->gpus : used)};
      sc.error_band = error_band(shipped_validation_records(), sc.traits);
    }
    std::vector<std::string> hosts;
    for (const auto& g : gpus) hosts.push_back(g.host);
    apply_gpu_speeds(read_gpu_speeds(root, hosts), &sc.graph);
  } catch (const InputError& e) {
    // Builders below the scenario (size guards, strategies) name the item but not the file.
    const std::string what = e.what();
    if (what.find(origin) != std::string::npos) throw;
    // "strategy.gpus: ..." names a key: point at its line.
    std::string where = origin;
    const size_t colon = what.find(": ");
    const std::string key = what.substr(0, colon);
    if (colon != std::string::npos &&
        key.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_.") == std::string::npos) {
      const std::string line = root.where_path(key);
      if (!line.empty()) where = line;
    }
    if (dynamic_cast<const InfeasibleError*>(&e)) throw InfeasibleError(where + ": " + what);
    throw InputError(where + ": " + what);
  }
  sc.campaign = read_campaign(root, base_dir);
  if (sc.campaign && sc.jobs)
    root.fail("campaign", "applies to one workload, not to several jobs");
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
