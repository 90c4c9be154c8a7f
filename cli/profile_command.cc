// `orrery profile import` (contribution CSVs -> compiled HDF5 store) and `orrery profile show`
// (what a profile file holds). Formats: models/profile_io.h and docs/cost-models.md.
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "common/atomic_file.h"
#include "common/errors.h"
#include "common/units.h"
#include "models/profile_io.h"
#include "platforms/device_spec.h"
#include "results/result_identity.h"

namespace orrery {
namespace {

struct ImportArgs {
  std::vector<std::string> inputs;
  std::string output;
};

struct ShowArgs {
  std::string file;
};

bool known_device(const std::string& name) {
  try {
    device_spec(name);
    return true;
  } catch (const InputError&) {
    return false;
  }
}

int import_command(const ImportArgs& a) {
  require_not_input(a.output, "-o", a.inputs);
  require_replaceable(a.output, "-o",
                      [](const std::string& p) { return hdf5_with_attribute(p, "format"); });
  ProfileDb db;
  size_t read = 0;
  for (const auto& f : a.inputs) {
    ProfileDb part = load_profile_db(f);
    read += part.size();
    db.merge(part);
  }
  std::map<std::string, size_t> per_device;
  for (const auto& r : db.rows()) ++per_device[r.device];
  std::string provenance = "orrery profile import of";
  for (const auto& f : a.inputs) provenance += " " + f;
  write_profile_h5(a.output, db, provenance);
  std::printf("%s: %zu rows from %zu file(s)", a.output.c_str(), db.size(), a.inputs.size());
  if (read > db.size()) std::printf(" (%zu duplicate keys: later rows won)", read - db.size());
  std::printf("\n");
  for (const auto& [dev, n] : per_device)
    std::printf("  %-32s %6zu rows%s\n", dev.c_str(), n,
                known_device(dev) ? "" : "  (not a built-in device spec; matched by name only)");
  return 0;
}

int show_command(const ShowArgs& a) {
  ProfileDb db = load_profile_db(a.file);
  std::map<std::string, std::map<std::string, size_t>> counts;  // device -> op -> rows
  for (const auto& r : db.rows()) ++counts[r.device][r.op + " " + r.dtype];
  std::printf("%s: %zu rows\n", a.file.c_str(), db.size());
  for (const auto& [dev, ops] : counts) {
    std::printf("%s\n", dev.c_str());
    for (const auto& [op, n] : ops) std::printf("  %-28s %5zu\n", op.c_str(), n);
  }
  return 0;
}

}  // namespace

void register_profile_commands(CLI::App& app, CommandList& out) {
  auto* profile = app.add_subcommand("profile", "Measured op times: import and inspect");
  profile->require_subcommand(1);

  static ImportArgs iargs;
  auto* imp = profile->add_subcommand(
      "import", "Compile profile CSV files (scripts/profile_ops.py output) into an HDF5 store");
  imp->add_option("files", iargs.inputs, "CSV (or HDF5) profile files")->required();
  imp->add_option("-o,--output", iargs.output, "HDF5 file to write")->required();
  out.push_back({imp, [] { return import_command(iargs); }});

  static ShowArgs sargs;
  auto* show = profile->add_subcommand("show", "Summarise a profile file (CSV or HDF5)");
  show->add_option("file", sargs.file, "Profile file")->required();
  out.push_back({show, [] { return show_command(sargs); }});
}

}  // namespace orrery
