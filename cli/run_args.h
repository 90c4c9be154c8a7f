// Options of `orrery run` and `orrery validate`.
#pragma once

#include <string>
#include <vector>

namespace orrery {

struct RunArgs {
  std::string scenario;
  std::vector<std::string> overrides;  // --set key=value
  std::string output;                  // -o: replaces output.file
  std::string trace;                   // --trace: replaces output.trace
  bool no_timeline = false;
  bool quiet = false;
  bool force = false;        // --force: replace output files that are not Orrery results
  bool analytical = false;   // --analytical: also print the PAI analytical estimate
  bool sensitivity = false;  // --sensitivity: rerun with each uncertain input moved
};

int run_command(const RunArgs& args);
int validate_command(const RunArgs& args);

}  // namespace orrery
