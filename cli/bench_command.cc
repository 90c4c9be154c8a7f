// `orrery bench collective TYPE`: nccl-tests on a simulated platform (engine/collective_bench.h).
#include <cstdio>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/platform_arg.h"
#include "common/atomic_file.h"
#include "common/errors.h"
#include "common/units.h"
#include "engine/collective_bench.h"
#include "platforms/platform_spec.h"
#include "results/collective_bench_store.h"
#include "results/result_identity.h"

namespace orrery {
namespace {

struct BenchArgs {
  std::string collective;
  std::string platform;
  std::vector<std::string> overrides;
  int nodes = 1;
  int gpus = 0;
  std::string min = "8B";
  std::string max = "8GiB";
  double factor = 2;
  std::string algo = "auto";
  std::string proto = "auto";
  std::string mode = "flow";
  std::string loop = "nccl-tests";
  std::string datatype = "float";
  int root = 0;
  std::string output;
  std::string compare;
  bool csv = false;   // the rows as CSV on stdout instead of the table
  bool json = false;  // as JSON
};

// nccl-tests' names (all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall,
// sendrecv) and Orrery's (allreduce, ...).
CollectiveType parse_type(const std::string& name) {
  std::string s;
  for (char ch : name)
    if (ch != '_' && ch != '-')
      s += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (s.size() > 4 && s.compare(s.size() - 4, 4, "perf") == 0) s.resize(s.size() - 4);
  CollectiveType t;
  if (!parse_collective_type(s, &t))
    throw InputError("unknown collective \"" + name +
                     "\" (expected all_reduce, all_gather, reduce_scatter, broadcast, reduce, "
                     "alltoall or sendrecv)");
  return t;
}

double parse_size_arg(const std::string& flag, const std::string& text) {
  double v = 0;
  if (!parse_size(text, &v) || !(v > 0))
    throw InputError(flag + " " + text + ": expected a positive size such as 8B, 64KiB or 8GiB");
  return v;
}

int bench_collective(const BenchArgs& a) {
  CollectiveBenchOptions opt;
  opt.type = parse_type(a.collective);
  opt.min_bytes = parse_size_arg("--min", a.min);
  opt.max_bytes = parse_size_arg("--max", a.max);
  opt.factor = a.factor;
  opt.datatype = a.datatype;
  opt.root = a.root;
  if (!parse_collective_algo(a.algo, &opt.algo))
    throw InputError(
        "--algo " + a.algo +
        ": expected auto, ring, tree, nvls, nvls_tree, collnet, pat, hierarchical or direct");
  if (!parse_collective_protocol(a.proto, &opt.protocol))
    throw InputError("--proto " + a.proto + ": expected auto, LL, LL128, Simple or ideal");
  if (a.mode != "flow" && a.mode != "analytical")
    throw InputError("--mode " + a.mode + ": expected flow or analytical");
  opt.analytical = a.mode == "analytical";
  if (a.loop != "nccl-tests" && a.loop != "pytorch")
    throw InputError("--loop " + a.loop + ": expected nccl-tests or pytorch");
  if (a.loop == "pytorch") opt.host_overhead = kPytorchCallOverhead;
  if (a.nodes < 1) throw InputError("--nodes must be at least 1");
  if (!a.output.empty()) {
    require_not_input(a.output, "-o", {a.compare});
    // An earlier benchmark's rows: its CSV header, or its HDF5 file's "collective" attribute.
    require_replaceable(a.output, "-o", [](const std::string& p) {
      return file_head(p, 17) == "size_bytes,count," || hdf5_with_attribute(p, "collective");
    });
  }

  std::vector<std::string> overrides = a.overrides;
  overrides.push_back("servers=" + std::to_string(a.nodes));
  PlatformSpec spec = load_platform_arg(a.platform, overrides);
  PlatformSource source;
  source.topology = build_topology(spec);
  std::vector<BenchRank> ranks;
  for (const auto& h : gpu_hosts(source.topology))
    ranks.push_back({h, h.substr(0, h.find('_'))});  // n<S>_gpu<G>: the server is n<S>
  if (a.gpus < 0 || a.gpus > static_cast<int>(ranks.size()))
    throw InputError("--gpus " + std::to_string(a.gpus) + ": the platform has " +
                     std::to_string(ranks.size()) + " GPUs on " + std::to_string(a.nodes) +
                     " server(s)");
  if (a.gpus > 0) ranks.resize(a.gpus);
  if (a.csv && a.json) throw InputError("--csv and --json: choose one output format");
  // Read the log before the run, so that a bad one fails at once.
  std::vector<MeasuredRow> measured;
  if (!a.compare.empty()) measured = read_nccl_tests_log(a.compare);
  CollectiveBenchStats stats;
  auto rows = run_collective_bench(source, ranks, opt, &stats);
  const std::vector<MeasuredRow>* against = a.compare.empty() ? nullptr : &measured;
  if (a.csv || a.json) {
    std::printf(
        "%s",
        a.csv ? collective_bench_csv(rows, opt, against).c_str()
              : collective_bench_json(rows, opt, static_cast<int>(ranks.size()), against).c_str());
    if (!a.output.empty()) write_collective_bench(a.output, rows, opt, current_command_line());
    return 0;
  }

  std::printf("# %s: %s\n", a.platform.c_str(), spec.description.c_str());
  std::printf("%s", format_collective_bench(rows, opt, static_cast<int>(ranks.size())).c_str());
  std::printf("# simulated %zu sizes: %lld activities in %.3f s\n", rows.size(),
              static_cast<long long>(stats.activities), stats.wall_seconds);
  if (!a.compare.empty()) {
    std::printf("\n# predicted against %s\n", a.compare.c_str());
    std::printf("%s", format_bench_comparison(rows, measured).c_str());
  }
  if (!a.output.empty()) {
    write_collective_bench(a.output, rows, opt, current_command_line());
    std::printf("# wrote %s\n", a.output.c_str());
  }
  return 0;
}

}  // namespace

void register_bench_commands(CLI::App& app, CommandList& out) {
  static BenchArgs args;
  auto* bench = app.add_subcommand("bench", "Simulated benchmarks of a platform");
  bench->require_subcommand(1);
  auto* coll = bench->add_subcommand(
      "collective",
      "nccl-tests for a platform you do not own: one collective per size, nccl-tests' columns "
      "(size, count, type, redop, root, time, algbw, busbw) and the algorithm, protocol and "
      "channels NCCL's tuner model chose");
  coll->add_option("collective", args.collective,
                   "all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall or "
                   "sendrecv")
      ->required();
  coll->add_option("--platform", args.platform, "Preset name or YAML platform file")->required();
  coll->add_option("--set", args.overrides,
                   "Override a platform key, e.g. server.nic.bandwidth=200Gbps");
  coll->add_option("--nodes", args.nodes, "Servers (default 1)");
  coll->add_option("--gpus", args.gpus,
                   "GPUs taking part, the first N (default: all of the servers)");
  coll->add_option("-b,--min", args.min, "Smallest size (default 8B)");
  coll->add_option("-e,--max", args.max, "Largest size (default 8GiB)");
  coll->add_option("-f,--factor", args.factor, "Size growth factor (default 2)");
  coll->add_option(
      "--algo", args.algo,
      "auto (NCCL's tuner model), ring, tree, nvls, nvls_tree, collnet, pat or hierarchical");
  coll->add_option("--proto", args.proto, "auto, LL, LL128, Simple, or ideal (bytes only)");
  coll->add_option("--mode", args.mode, "flow (flows over the links) or analytical (alpha-beta)");
  coll->add_option("--loop", args.loop,
                   "The loop that calls the collective: nccl-tests (default), or pytorch: a "
                   "torch.distributed loop that waits for each call, 21.4 us more per call "
                   "(PyTorch's host work, measured on 8 x H200)");
  coll->add_option("-d,--datatype", args.datatype, "Element type (default float)");
  coll->add_option("-r,--root", args.root, "Root rank of broadcast and reduce (default 0)");
  coll->add_option("-o,--output", args.output, "Write the rows to FILE.csv or FILE.h5");
  coll->add_option("--compare", args.compare,
                   "A measured nccl-tests log: print predicted next to measured, with the error "
                   "(predicted busbw / measured - 1: + is too fast)");
  coll->add_flag("--csv", args.csv,
                 "Print the rows as CSV (with the measured columns and the error under --compare)");
  coll->add_flag("--json", args.json, "Print the rows as JSON");
  out.push_back({coll, [] { return bench_collective(args); }});
}

}  // namespace orrery
