// `orrery report FILE.h5 [--csv OUT.csv]`: the results of a run or a sweep as a table.
#include <cstdio>
#include <fstream>
#include <iostream>

#include "cli/commands.h"
#include "cli/job_table.h"
#include "common/atomic_file.h"
#include "common/errors.h"
#include "sweeps/report_table.h"

namespace orrery {
namespace {

struct ReportArgs {
  std::string file;
  std::string csv;
  ReportOptions options;
  bool quiet = false;
};

int report_command(const ReportArgs& args) {
  if (!args.csv.empty() && args.csv != "-") {
    require_not_input(args.csv, "--csv", {args.file});
    require_replaceable(args.csv, "--csv", [](const std::string& p) {
      return file_head(p, 11) == "index,name,";  // write_report_csv's header
    });
  }
  LoadedResults results = read_results_h5(args.file);
  SweepFileStatus status = read_sweep_status(args.file);
  if (!args.quiet) write_report_table(std::cout, results, status, args.options);
  if (!args.quiet && !results.meta.jobs.empty()) {
    std::printf("\n");
    print_job_table(results.meta.jobs);
  }
  if (args.csv == "-") {
    write_report_csv(std::cout, results);
  } else if (!args.csv.empty()) {
    // Whole or not at all; a full disk is an error naming the file (common/atomic_file.h).
    write_atomically(args.csv, [&](const std::string& tmp) {
      std::ofstream out(tmp);
      if (!out) throw std::runtime_error("cannot create " + tmp);
      write_report_csv(out, results);
      out.close();
      if (!out) throw std::runtime_error("write failed");
    });
    if (!args.quiet) std::cout << "\nCSV        " << args.csv << "\n";
  }
  return 0;
}

}  // namespace

void register_report_commands(CLI::App& app, CommandList& out) {
  static ReportArgs args;
  auto* report =
      app.add_subcommand("report", "Print the results of a run or sweep (HDF5) as a table");
  report->add_option("file", args.file, "HDF5 results file")->required();
  report->add_option("--csv", args.csv, "Also write every run as CSV to this file (- : stdout)");
  report->add_flag("--all-params", args.options.all_params,
                   "Show parameters that are equal in every run too");
  report->add_flag("-q,--quiet", args.quiet, "No table (with --csv)");
  out.push_back({report, [] { return report_command(args); }});
}

}  // namespace orrery
