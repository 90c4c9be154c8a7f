// Temporary entry point while the CLI is being written (replaced by the full command set).
#include <cstdio>

#include "orrery_version.h"

int main() {
  std::printf("orrery %s\n", ORRERY_VERSION);
  return 0;
}
