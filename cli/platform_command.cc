// `orrery platform list|show|export|bench`: the platform library from the command line.
// A platform is named by a preset (`dgx-a100`), a YAML file holding a platform mapping (or a
// scenario, whose `platform:` section is used), or, for `bench` only, a SimGrid XML file.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/platform_arg.h"
#include "common/errors.h"
#include "common/units.h"
#include "common/yaml_reader.h"
#include "engine/platform_bench.h"
#include "platforms/platform_describe.h"
#include "platforms/platform_dot.h"
#include "platforms/platform_spec.h"
#include "platforms/routing.h"
#include "platforms/simgrid_platform.h"
#include "scenario/scenario.h"

namespace fs = std::filesystem;

namespace orrery {
namespace {

struct PlatformArgs {
  std::string platform;
  std::vector<std::string> overrides;
  std::vector<std::string> route;
  std::string output;
  bool dot = false;
  std::vector<std::string> pairs;
  std::string size = "256MiB";
};

PlatformSpec load_spec(const PlatformArgs& args) {
  return load_platform_arg(args.platform, args.overrides);
}

void write_output(const std::string& file, const std::string& text) {
  if (file.empty() || file == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return;
  }
  std::ofstream out(file);
  out << text;
  if (!out) throw InputError(file + ": cannot write the file");
}

int list_command() {
  for (const auto& name : platform_preset_names()) {
    YAML::Node node(YAML::NodeType::Map);
    node["preset"] = name;
    PlatformSpec spec = parse_platform_spec(node, "preset " + name, "platform");
    std::printf("%-20s %s\n", name.c_str(), spec.description.c_str());
  }
  return 0;
}

int show_command(const PlatformArgs& args) {
  PlatformSpec spec = load_spec(args);
  Topology topo = build_topology(spec);
  std::printf("%s\n%s\n%s\n", describe_spec(spec).c_str(), describe_nodes(topo).c_str(),
              describe_links(topo).c_str());
  if (!args.route.empty()) {
    std::printf("%s", describe_route(topo, args.route[0], args.route[1]).c_str());
    return 0;
  }
  // Without --route: one route of each kind between GPUs, as the bench would measure them.
  for (const auto& p : default_bench_pairs(topo))
    std::printf("%s\n", describe_route(topo, p.a, p.b).c_str());
  return 0;
}

int export_command(const PlatformArgs& args) {
  Topology topo = build_topology(load_spec(args));
  write_output(args.output, args.dot ? topology_to_dot(topo) : topology_to_simgrid_xml(topo));
  return 0;
}

std::vector<BenchPair> parse_pairs(const std::vector<std::string>& specs) {
  std::vector<BenchPair> out;
  for (const auto& s : specs) {
    std::vector<std::string> f;
    size_t start = 0;
    for (size_t colon; (colon = s.find(':', start)) != std::string::npos; start = colon + 1)
      f.push_back(s.substr(start, colon - start));
    f.push_back(s.substr(start));
    if (f.size() < 2 || f.size() > 3 || f[0].empty() || f[1].empty())
      throw InputError("--pair " + s + ": expected GPU_A:GPU_B or GPU_A:GPU_B:HOST");
    out.push_back({f[0] + ":" + f[1], f[0], f[1], f.size() == 3 ? f[2] : ""});
  }
  return out;
}

int bench_command(const PlatformArgs& args) {
  double bytes = 0;
  if (!parse_size(args.size, &bytes) || !(bytes > 0))
    throw InputError("--size " + args.size + ": expected a positive size such as 256MiB");
  PlatformSource source;
  std::vector<BenchPair> pairs = parse_pairs(args.pairs);
  if (is_xml_platform(args.platform)) {
    if (!args.overrides.empty())
      throw InputError("--set does not apply to a SimGrid XML file (" + args.platform + ")");
    if (pairs.empty())
      throw InputError(args.platform +
                       ": name the GPU pairs to measure on an XML platform with --pair A:B[:HOST]");
    source.xml_file = args.platform;
  } else {
    source.topology = build_topology(load_spec(args));
    if (pairs.empty()) pairs = default_bench_pairs(source.topology);
    for (auto& p : pairs)
      if (p.host.empty()) p.host = launch_host_of(source.topology, p.a);
  }
  if (pairs.empty()) throw InputError(args.platform + ": no GPU pairs to measure");
  std::printf("%s, %s per transfer\n\n%s", args.platform.c_str(), format_size(bytes).c_str(),
              format_bench_table(run_platform_bench(source, pairs, bytes)).c_str());
  return 0;
}

}  // namespace

void register_platform_commands(CLI::App& app, CommandList& out) {
  static PlatformArgs args;
  auto* platform = app.add_subcommand(
      "platform", "Platform library: list the presets, show, export and benchmark a platform");
  platform->require_subcommand(1);
  auto named = [](CLI::App* cmd) {
    cmd->add_option("platform", args.platform,
                    "Preset name (see `orrery platform list`) or YAML platform file")
        ->required();
    cmd->add_option("--set", args.overrides,
                    "Override a platform key, e.g. --set server.nic.count=2 (repeatable)");
  };

  auto* list = platform->add_subcommand("list", "List the built-in platform presets");
  auto* show = platform->add_subcommand(
      "show", "Hosts, links by class and routes of a platform (one of each kind, or --route)");
  named(show);
  show->add_option("--route", args.route, "Show the route between two named devices")->expected(2);
  auto* exp = platform->add_subcommand(
      "export", "Write the platform as SimGrid XML (or, with --dot, as a Graphviz graph)");
  named(exp);
  exp->add_option("-o,--output", args.output, "Output file (default: standard output)");
  exp->add_flag("--dot", args.dot, "Write Graphviz DOT instead of SimGrid XML");
  auto* bench = platform->add_subcommand(
      "bench", "Simulated GPU<->GPU, host->GPU and GPU->host bandwidth, as a Table 1 of MB/s");
  named(bench);
  bench->add_option("--pair", args.pairs,
                    "GPU pair to measure, GPU_A:GPU_B[:HOST] (repeatable; default: one pair "
                    "per kind of route)");
  bench->add_option("--size", args.size, "Bytes per transfer (default 256MiB)");

  out.push_back({list, [] { return list_command(); }});
  out.push_back({show, [] { return show_command(args); }});
  out.push_back({exp, [] { return export_command(args); }});
  out.push_back({bench, [] { return bench_command(args); }});
}

}  // namespace orrery
