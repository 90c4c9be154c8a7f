#include "results/h5_check.h"

#include <stdexcept>
#include <string>
#include <vector>

#include "common/errors.h"
#include "common/h5_guard.h"
#include "common/h5_util.h"
#include "results/h5_store.h"

namespace orrery {

namespace {

// Reads the whole of the 1-D dataset `name` in its own (native) type, strings included, and frees
// what HDF5 allocated: what h5py's dataset[:] does.
void read_whole_dataset(hid_t loc, const std::string& name) {
  h5::Handle d =
      h5::check(H5Dopen2(loc, name.c_str(), H5P_DEFAULT), H5Dclose, "open dataset " + name);
  h5::Handle file_type = h5::check(H5Dget_type(d.get()), H5Tclose, "get the type of " + name);
  h5::Handle type = h5::check(H5Tget_native_type(file_type.get(), H5T_DIR_ASCEND), H5Tclose,
                              "get the memory type of " + name);
  const size_t rows = h5::row_count(d.get());
  const size_t size = H5Tget_size(type.get());
  if (rows == 0 || size == 0) return;
  // Orrery's rows are a few hundred bytes; a damaged type must not ask for terabytes.
  if (size > (size_t{1} << 16))
    throw std::runtime_error(name + ": rows of " + std::to_string(size) + " bytes");
  std::vector<char> buf(rows * size);
  h5::check(H5Dread(d.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data()),
            "read dataset " + name);
  h5::reclaim(type.get(), rows, buf.data());
}

// What orrery.load_runs and load_devices read (python/orrery/results.py) that read_results_h5
// does not: /run_params, /run_values/<parameter> with its unit, and every table whole, in the
// file's own types (h5py reads all members of a compound, not only those Orrery knows).
void read_python_tables(const std::string& path) {
  h5::Handle file =
      h5::check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose, "open file");
  read_whole_dataset(file.get(), "runs");
  if (H5Lexists(file.get(), "run_params", H5P_DEFAULT) > 0)
    read_whole_dataset(file.get(), "run_params");
  if (H5Lexists(file.get(), "run_values", H5P_DEFAULT) > 0) {
    h5::Handle values = h5::check(H5Gopen2(file.get(), "run_values", H5P_DEFAULT), H5Gclose,
                                  "open group run_values");
    H5G_info_t info;
    h5::check(H5Gget_info(values.get(), &info), "list run_values");
    if (info.nlinks > (hsize_t{1} << 20))
      throw std::runtime_error("run_values claims " + std::to_string(info.nlinks) + " parameters");
    std::vector<std::string> names;
    for (hsize_t i = 0; i < info.nlinks; ++i) {
      const ssize_t n = H5Lget_name_by_idx(values.get(), ".", H5_INDEX_NAME, H5_ITER_INC, i,
                                           nullptr, 0, H5P_DEFAULT);
      h5::check(n < 0 ? -1 : 0, "name parameter " + std::to_string(i) + " of run_values");
      std::string name(static_cast<size_t>(n) + 1, '\0');
      h5::check(H5Lget_name_by_idx(values.get(), ".", H5_INDEX_NAME, H5_ITER_INC, i, name.data(),
                                   name.size(), H5P_DEFAULT) < 0
                    ? -1
                    : 0,
                "name parameter " + std::to_string(i) + " of run_values");
      name.resize(static_cast<size_t>(n));
      names.push_back(std::move(name));
    }
    for (const std::string& name : names) {
      const std::string dataset = "run_values/" + name;
      read_whole_dataset(file.get(), dataset);
      h5::Handle d = h5::check(H5Dopen2(file.get(), dataset.c_str(), H5P_DEFAULT), H5Dclose,
                               "open dataset " + dataset);
      h5::read_string_attr(d.get(), "unit");
    }
  }
  h5::Handle runs = h5::check(H5Dopen2(file.get(), "runs", H5P_DEFAULT), H5Dclose, "open /runs");
  const size_t count = h5::row_count(runs.get());
  for (size_t i = 0; i < count; ++i)
    read_whole_dataset(file.get(), "runs_detail/" + std::to_string(i) + "/devices");
}

}  // namespace

void check_results_file(const std::string& path) {
  // Twice the file's reading time: read_results_h5 reads it in a child of its own first.
  probe_h5_input(
      path, "Orrery results file",
      [&] {
        read_results_h5(path);  // InputError naming the file, as `orrery report` says it
        read_python_tables(path);
      },
      2);
}

}  // namespace orrery
