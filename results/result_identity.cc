#include "results/result_identity.h"

#include <hdf5.h>
#include <sys/stat.h>

#include <cstring>
#include <fstream>

#include "common/h5_guard.h"
#include "common/h5_util.h"

namespace orrery {
namespace {

bool starts_with_bytes(const std::string& path, const char* prefix, size_t n) {
  std::ifstream in(path, std::ios::binary);
  std::string head(n, '\0');
  if (!in.read(&head[0], static_cast<std::streamsize>(n))) return false;
  return std::memcmp(head.data(), prefix, n) == 0;
}

}  // namespace

ExistingOutput inspect_output(const std::string& path) {
  ExistingOutput out;
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return out;
  out.kind = OutputKind::kOther;
  if (S_ISDIR(st.st_mode)) {
    out.what = "a directory";
    return out;
  }
  if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
    out.what = "not a regular file";
    return out;
  }
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    out.what = "a link to something that is not a regular file";
    return out;
  }
  static const char kTrace[] = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[";
  if (starts_with_bytes(path, kTrace, sizeof kTrace - 1)) {
    out.kind = OutputKind::kOrreryTrace;
    return out;
  }
  static const char kHdf5Signature[] = "\x89HDF\r\n\x1a\n";
  if (!starts_with_bytes(path, kHdf5Signature, 8)) {
    out.what = "not an HDF5 file";
    return out;
  }
  try {
    // A corrupt file can crash libhdf5: look at it in a child process first.
    probe_h5_input(path, "HDF5 file", [&] {
      h5::Handle file =
          h5::check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose, "open " + path);
      if (h5::has_attr(file.get(), "scenario")) h5::read_string_attr(file.get(), "scenario");
    });
  } catch (const std::exception&) {
    out.what = "an HDF5 file that cannot be read";
    return out;
  }
  try {
    h5::QuietErrors quiet;
    h5::Handle file =
        h5::check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose, "open " + path);
    if (!h5::has_attr(file.get(), "orrery_version")) {
      out.what = "an HDF5 file that Orrery did not write";
      return out;
    }
    out.kind = OutputKind::kOrreryResult;
    if (h5::has_attr(file.get(), "scenario"))
      out.scenario_text = h5::read_string_attr(file.get(), "scenario");
  } catch (const std::exception&) {
    if (out.kind != OutputKind::kOrreryResult) out.what = "an HDF5 file that cannot be read";
  }
  return out;
}

bool hdf5_with_attribute(const std::string& path, const char* attr) {
  static const char kHdf5Signature[] = "\x89HDF\r\n\x1a\n";
  if (!starts_with_bytes(path, kHdf5Signature, 8)) return false;
  try {
    bool found = false;
    probe_h5_input(path, "HDF5 file", [&] {
      h5::Handle file =
          h5::check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose, "open " + path);
      (void)h5::has_attr(file.get(), attr);
    });
    h5::QuietErrors quiet;
    h5::Handle file =
        h5::check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose, "open " + path);
    found = h5::has_attr(file.get(), attr);
    return found;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace orrery
