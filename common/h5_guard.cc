#include "common/h5_guard.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "common/child_process.h"
#include "common/input_file.h"

namespace orrery {
namespace {

constexpr char kSignature[] = "\x89HDF\r\n\x1a\n";

bool has_signature(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char head[8] = {};
  if (!in.read(head, sizeof head)) return false;
  return std::memcmp(head, kSignature, sizeof head) == 0;
}

}  // namespace

void probe_h5_input(const std::string& path, const std::string& what,
                    const std::function<void()>& read_all, int reads) {
  require_regular_file(path, what);
  // A corrupt file can also send libhdf5 into an endless loop. A whole file reads at well over
  // 20 MB/s; a few seconds more cover the start, for each read.
  struct stat st;
  const unsigned limit_s =
      reads *
      (5 + (::stat(path.c_str(), &st) == 0 ? static_cast<unsigned>(st.st_size / 20000000) : 0));
  // Orrery writes the signature at offset 0 (no user block), as do h5py and pandas.
  if (!has_signature(path)) throw InputError(path + ": not an HDF5 file (expected a " + what + ")");
  try {
    run_in_child(
        [&] {
          // A crash is expected here on a corrupt file; it must not leave a core file behind.
          struct rlimit none = {0, 0};
          setrlimit(RLIMIT_CORE, &none);
          signal(SIGALRM, SIG_DFL);
          alarm(limit_s);
          h5::QuietErrors quiet;
          try {
            read_all();
          } catch (const InputError&) {
            throw;
          } catch (const std::exception& e) {
            throw InputError(path + ": not a valid " + what + ": " + e.what());
          }
          return std::string();
        },
        "the HDF5 library");
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    const std::string why = e.what();
    if (why.find("(signal " + std::to_string(SIGALRM) + ",") != std::string::npos) {
      throw InputError(path + ": " + what + " is corrupt: reading it took longer than " +
                       std::to_string(limit_s) + " s");
    }
    throw InputError(path + ": " + what + " is corrupt: " + why + " while reading it");
  }
}

}  // namespace orrery
