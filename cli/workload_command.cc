// `orrery workload show | list | export`: look at a workload before simulating it. A workload is
// a zoo model name (hyper-parameters with --set), an orrery-model JSON file (one replica, e.g.
// from scripts/export_pytorch_graph.py), an orrery-graph JSON file (per-device ops), or Chakra
// execution traces (one file, a directory, or an ASTRA-sim prefix of NAME.<rank>.et files).
// `export --chakra` writes per-device ops (a scenario's, a graph file's, or traces') as Chakra
// traces (workloads/chakra/chakra_export.h).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "common/atomic_file.h"
#include "common/errors.h"
#include "scenario/scenario.h"
#include "workloads/chakra/chakra_export.h"
#include "workloads/chakra/chakra_import.h"
#include "workloads/chakra/chakra_show.h"
#include "workloads/graph_json.h"
#include "workloads/model_graph_json.h"
#include "workloads/workload_summary.h"
#include "workloads/zoo/zoo.h"

namespace fs = std::filesystem;

namespace orrery {
namespace {

struct WorkloadArgs {
  std::string workload;
  std::vector<std::string> overrides;
  bool dot = false;
  int top = 10;
  std::string comm_groups;
  bool prefer_num_ops = false;
  std::string output;
  std::string chakra;  // export: PREFIX of the Chakra traces to write
};

// Beyond this a DOT picture is unreadable and slow to lay out.
constexpr size_t kMaxDotOps = 3000;

ModelGraph zoo_model(const WorkloadArgs& a) {
  YAML::Node keys(YAML::NodeType::Map);
  for (const auto& o : a.overrides) apply_override(keys, o);
  return make_zoo_model(a.workload, YamlMap(keys, "workload " + a.workload));
}

std::string head_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string text(256, '\0');
  in.read(&text[0], static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  return text;
}

enum class Kind { kZoo, kModelJson, kGraphJson, kChakra };

Kind classify(const WorkloadArgs& a) {
  if (is_zoo_model(a.workload)) return Kind::kZoo;
  Kind k = Kind::kChakra;
  if (fs::is_regular_file(a.workload)) {
    const std::string head = head_of(a.workload);
    if (looks_like_model_graph_json(head)) {
      k = Kind::kModelJson;
    } else if (head.find("\"orrery-graph\"") != std::string::npos) {
      k = Kind::kGraphJson;
    } else if (!head.empty() && head.find_first_not_of(" \t\r\n") != std::string::npos &&
               head[head.find_first_not_of(" \t\r\n")] == '{') {
      throw InputError(a.workload +
                       ": a JSON file that is neither an orrery-model nor an "
                       "orrery-graph (\"format\" key)");
    }
  } else if (!fs::exists(a.workload)) {
    try {
      resolve_chakra_files({a.workload});
    } catch (const InputError& e) {
      if (a.workload.find('/') != std::string::npos) throw;
      // A bare word that names nothing: most likely a misspelt model name.
      std::string models;
      for (const auto& n : zoo_model_names()) models += (models.empty() ? "" : ", ") + n;
      throw InputError("\"" + a.workload + "\" is neither a zoo model (" + models +
                       ") nor a file or Chakra trace prefix");
    }
  }
  if (k != Kind::kZoo && !a.overrides.empty())
    throw InputError("--set applies to zoo models only; " + a.workload + " is a file");
  return k;
}

ChakraImportOptions chakra_options(const WorkloadArgs& a) {
  ChakraImportOptions o;
  if (!a.comm_groups.empty()) o.comm_groups = load_chakra_comm_groups(a.comm_groups);
  o.prefer_num_ops = a.prefer_num_ops;
  // Collectives stay whole, as `orrery run` reads them: expanded into the importer's flat-ring
  // flows, 256 ranks took 26 s and 2.9 GB just to be counted.
  o.engine_collectives = true;
  return o;
}

ExecutionGraph chakra_graph(const WorkloadArgs& a) {
  return chakra_to_execution_graph(read_chakra_traces({a.workload}), chakra_options(a));
}

// The summary of a set of rank traces, then the process groups their collectives ran in.
void show_chakra_traces(const WorkloadArgs& a) {
  const std::vector<chakra::Trace> traces = read_chakra_traces({a.workload});
  const ChakraImportOptions o = chakra_options(a);
  print_execution_graph_summary(chakra_to_execution_graph(traces, o),
                                a.workload + " (Chakra execution traces)", std::cout);
  if (!a.comm_groups.empty()) {
    std::vector<ProcessGroupEntry> groups;
    for (const auto& [name, ranks] : o.comm_groups) groups.push_back({name, "", ranks});
    print_chakra_process_groups(groups, a.comm_groups, std::cout);
  } else {
    print_chakra_process_groups(trace_process_group_entries(traces),
                                "the traces' ## process_group:init ## tables", std::cout);
  }
}

void check_dot_size(size_t ops, const std::string& what) {
  if (ops > kMaxDotOps)
    throw InputError(what + " has " + std::to_string(ops) + " ops; --dot draws at most " +
                     std::to_string(kMaxDotOps) +
                     " (shrink it, e.g. --set batch=1 --set layers=2)");
}

int show_command(const WorkloadArgs& a) {
  const Kind kind = classify(a);
  if (kind == Kind::kZoo || kind == Kind::kModelJson) {
    ModelGraph g = kind == Kind::kZoo ? zoo_model(a) : load_model_graph_json(a.workload);
    if (a.dot) {
      check_dot_size(g.ops.size(), g.name);
      write_model_graph_dot(g, std::cout);
    } else {
      print_model_graph_summary(g, std::cout, a.top);
    }
    return 0;
  }
  if (kind == Kind::kChakra && !a.dot && fs::is_regular_file(a.workload)) {
    // One rank's file: its nodes as they are (converting it alone would drop its collectives).
    print_chakra_trace(chakra::read_trace(a.workload), std::cout);
    return 0;
  }
  if (kind == Kind::kChakra && !a.dot) {
    show_chakra_traces(a);
    return 0;
  }
  ExecutionGraph g = kind == Kind::kGraphJson ? load_graph_json(a.workload) : chakra_graph(a);
  if (a.dot) {
    check_dot_size(g.ops.size(), a.workload);
    write_execution_graph_dot(g, std::cout);
  } else {
    std::string title = a.workload + (kind == Kind::kChakra ? " (Chakra execution traces)" : "");
    print_execution_graph_summary(g, title, std::cout);
  }
  return 0;
}

int list_command() {
  for (const auto& name : zoo_model_names()) {
    ZooModelInfo info = zoo_model_info(name);
    std::printf("%s\n  %s\n", info.name.c_str(), info.description.c_str());
    for (const auto& k : info.keys)
      std::printf("    %-16s %-22s %s\n", k.key.c_str(), k.default_value.c_str(),
                  k.meaning.c_str());
    std::printf("\n");
  }
  return 0;
}

bool is_scenario_file(const std::string& path) {
  const std::string ext = fs::path(path).extension().string();
  return (ext == ".yaml" || ext == ".yml") && fs::is_regular_file(path);
}

// export --chakra: the per-device ops of a scenario, an orrery-graph file or Chakra traces.
int export_chakra_command(const WorkloadArgs& a) {
  if (!a.output.empty())
    throw InputError("--chakra and -o write different formats; give one of them");
  ExecutionGraph g;
  std::string name;
  if (is_scenario_file(a.workload)) {
    Scenario sc = load_scenario(a.workload, a.overrides);
    g = std::move(sc.graph);
    name = sc.name;
  } else {
    const Kind kind = classify(a);
    if (kind == Kind::kZoo || kind == Kind::kModelJson)
      throw InputError(a.workload +
                       ": --chakra writes one trace per device, and a model is one replica "
                       "with no devices yet; give a scenario that places it on a platform "
                       "(e.g. scenarios/quickstart.yaml)");
    g = kind == Kind::kGraphJson ? load_graph_json(a.workload) : chakra_graph(a);
    name = fs::path(a.workload).stem().string();
  }
  ChakraExport out = export_chakra_traces(g, a.chakra, name);
  std::printf("%s.{0..%zu}.et: %zu rank traces, %zu nodes\n", out.prefix.c_str(),
              out.files.size() - 1, out.files.size(), out.nodes);
  for (const auto& note : out.notes) std::printf("note: %s\n", note.c_str());
  return 0;
}

int export_command(const WorkloadArgs& a) {
  if (!a.chakra.empty()) return export_chakra_command(a);
  const Kind kind = classify(a);
  if (kind != Kind::kZoo && kind != Kind::kModelJson)
    throw InputError(a.workload + ": export writes one replica (orrery-model); give a zoo model");
  ModelGraph g = kind == Kind::kZoo ? zoo_model(a) : load_model_graph_json(a.workload);
  if (a.output.empty() || a.output == "-") {
    write_model_graph_json(g, std::cout);
  } else {
    // An earlier export, and never the model file read.
    require_not_input(a.output, "-o", {a.workload});
    require_replaceable(a.output, "-o", [](const std::string& p) {
      return file_head(p, 256).find("\"orrery-model\"") != std::string::npos;
    });
    write_model_graph_json(g, a.output);
    std::printf("%s: %zu ops\n", a.output.c_str(), g.ops.size());
  }
  return 0;
}

}  // namespace

void register_workload_commands(CLI::App& app, CommandList& out) {
  static WorkloadArgs args;
  auto* workload =
      app.add_subcommand("workload", "Inspect workloads: zoo models, model files, Chakra traces");
  workload->require_subcommand(1);
  auto target = [](CLI::App* cmd) {
    cmd->add_option("workload", args.workload,
                    "Zoo model name, orrery-model or orrery-graph JSON file, or Chakra traces "
                    "(file, directory or NAME prefix of NAME.<rank>.et); export --chakra also "
                    "takes a scenario YAML")
        ->required();
    cmd->add_option("--set", args.overrides,
                    "Zoo model hyper-parameter, e.g. --set batch=64; with export --chakra and a "
                    "scenario, a scenario key, e.g. --set workload.layers=2 (repeatable)");
  };
  auto* show = workload->add_subcommand(
      "show", "Op counts by type and phase, FLOPs, bytes, parameters, largest layers");
  target(show);
  show->add_flag("--dot", args.dot, "Print a Graphviz DOT picture instead (small graphs)");
  show->add_option("--top", args.top, "Largest layers to list (default 10)");
  show->add_option("--comm-groups", args.comm_groups,
                   "Chakra: ASTRA-sim communicator groups JSON {\"pg_name\": [ranks]}");
  show->add_flag("--prefer-num-ops", args.prefer_num_ops,
                 "Chakra: price compute nodes from num_ops even when they carry a duration");
  auto* list = workload->add_subcommand("list", "Zoo models with their keys and defaults");
  auto* exp = workload->add_subcommand(
      "export",
      "Write a zoo model's training step as an orrery-model JSON file, or (--chakra) a "
      "scenario's per-device ops as Chakra execution traces");
  target(exp);
  exp->add_option("-o,--output", args.output, "Output file (default: standard output)");
  exp->add_option("--chakra", args.chakra,
                  "Write Chakra traces PREFIX.<rank>.et, one per device, of a scenario YAML "
                  "(--set then overrides its keys), an orrery-graph file or Chakra traces; "
                  "PREFIX may be a directory (NAME = the scenario's name)")
      ->type_name("PREFIX");
  out.push_back({show, [] { return show_command(args); }});
  out.push_back({list, [] { return list_command(); }});
  out.push_back({exp, [] { return export_command(args); }});
}

}  // namespace orrery
