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
};

int run_command(const RunArgs& args);
int validate_command(const RunArgs& args);

}  // namespace orrery
