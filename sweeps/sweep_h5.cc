#include "sweeps/sweep_h5.h"

#include "common/atomic_file.h"
#include "common/errors.h"
#include "common/h5_guard.h"
#include "common/h5_util.h"

namespace orrery {
namespace {

herr_t collect_name(hid_t, const char* name, const H5A_info_t*, void* out) {
  static_cast<std::vector<std::string>*>(out)->push_back(name);
  return 0;
}

const char* const kIntAttrs[] = {"points_total", "points_done", "points_failed", "complete"};

}  // namespace

void write_sweep_h5(const std::string& path, const ResultFileMeta& meta,
                    const std::vector<RunRecord>& runs, const SweepFileStatus& status) {
  write_atomically(path, [&](const std::string& tmp) {
    write_results_h5_file(tmp, meta, runs, {});
    h5::QuietErrors quiet;
    // The same format bounds as the rest of the file, so the group gets checksums too.
    h5::Handle fapl = h5::checksummed_file_access();
    h5::Handle file =
        h5::check(H5Fopen(tmp.c_str(), H5F_ACC_RDWR, fapl.get()), H5Fclose, "open " + tmp);
    h5::Handle group =
        h5::check(H5Gcreate2(file.get(), "sweep", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose,
                  "create group sweep");
    h5::write_int_attr(group.get(), "points_total", status.points_total);
    h5::write_int_attr(group.get(), "points_done", status.points_done);
    h5::write_int_attr(group.get(), "points_failed", status.points_failed);
    h5::write_int_attr(group.get(), "complete", status.complete ? 1 : 0);
    for (const auto& [k, v] : status.attrs) h5::write_string_attr(group.get(), k.c_str(), v);
    group.close("close group sweep");
    file.close(("close " + tmp).c_str());
  });
}

namespace {

SweepFileStatus read_status(const std::string& path) {
  SweepFileStatus s;
  h5::Handle file =
      h5::check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose, "open file");
  htri_t has = H5Lexists(file.get(), "sweep", H5P_DEFAULT);
  h5::check(has < 0 ? -1 : 0, "look up group sweep");
  if (has == 0) return s;
  h5::Handle group =
      h5::check(H5Gopen2(file.get(), "sweep", H5P_DEFAULT), H5Gclose, "open group sweep");
  s.present = true;
  auto count = [&](const char* name) {
    const int v = h5::read_int_attr(group.get(), name);
    if (v < 0) {
      throw InputError(path + ": group sweep: attribute " + std::string(name) + " = " +
                       std::to_string(v) + ", expected a count (>= 0)");
    }
    return v;
  };
  s.points_total = count("points_total");
  s.points_done = count("points_done");
  s.points_failed = count("points_failed");
  s.complete = h5::read_int_attr(group.get(), "complete") != 0;
  std::vector<std::string> names;
  h5::check(H5Aiterate2(group.get(), H5_INDEX_NAME, H5_ITER_INC, nullptr, collect_name, &names),
            "list sweep attributes");
  for (const auto& n : names) {
    bool is_int = false;
    for (const char* i : kIntAttrs) is_int = is_int || n == i;
    if (!is_int) s.attrs[n] = h5::read_string_attr(group.get(), n.c_str());
  }
  return s;
}

}  // namespace

SweepFileStatus read_sweep_status(const std::string& path) {
  return read_h5_input(path, "Orrery results file", [&] { return read_status(path); });
}

}  // namespace orrery
