// HDF5 side of models/profile_io.h: the compiled store read by the cost model.
#include <cstddef>
#include <cstdint>

#include "common/atomic_file.h"
#include "common/errors.h"
#include "common/h5_guard.h"
#include "common/h5_util.h"
#include "models/profile_io.h"

namespace orrery {
namespace {

constexpr const char* kFormat = "orrery-profile";

struct RowH5 {  // /rows
  const char* op;
  const char* dtype;
  const char* device;
  const char* inputs;
  const char* output;
  const char* attrs;
  double time_s;
  int64_t n;
  int64_t m;
  double t_n_s;
  double t_m_s;
  int64_t samples;
  double stdev_s;
  const char* source;
};

h5::Compound row_type(hid_t str) {
  h5::Compound c(sizeof(RowH5));
  c.add("op", offsetof(RowH5, op), str)
      .add("dtype", offsetof(RowH5, dtype), str)
      .add("device", offsetof(RowH5, device), str)
      .add("inputs", offsetof(RowH5, inputs), str)
      .add("output", offsetof(RowH5, output), str)
      .add("attrs", offsetof(RowH5, attrs), str)
      .add("time_s", offsetof(RowH5, time_s), H5T_NATIVE_DOUBLE)
      .add("n", offsetof(RowH5, n), H5T_NATIVE_INT64)
      .add("m", offsetof(RowH5, m), H5T_NATIVE_INT64)
      .add("t_n_s", offsetof(RowH5, t_n_s), H5T_NATIVE_DOUBLE)
      .add("t_m_s", offsetof(RowH5, t_m_s), H5T_NATIVE_DOUBLE)
      .add("samples", offsetof(RowH5, samples), H5T_NATIVE_INT64)
      .add("stdev_s", offsetof(RowH5, stdev_s), H5T_NATIVE_DOUBLE)
      .add("source", offsetof(RowH5, source), str);
  return c;
}

void write_file(const std::string& path, const ProfileDb& db, const std::string& provenance) {
  h5::Handle fapl = h5::checksummed_file_access();
  h5::Handle file = h5::check(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()),
                              H5Fclose, "create " + path);
  {
    h5::write_string_attr(file.get(), "format", kFormat);
    h5::write_int_attr(file.get(), "format_version", kProfileFormatVersion);
    h5::write_string_attr(file.get(), "provenance", provenance);
    std::vector<RowH5> rows;
    rows.reserve(db.size());
    for (const auto& r : db.rows())
      rows.push_back({r.op.c_str(), r.dtype.c_str(), r.device.c_str(), r.inputs.c_str(),
                      r.output.c_str(), r.attrs.c_str(), r.time_s, r.n, r.m, r.t_n_s, r.t_m_s,
                      r.samples, r.stdev_s, r.source.c_str()});
    h5::Handle str = h5::string_type();
    h5::Compound type = row_type(str.get());
    h5::Handle dset =
        h5::create_dataset(file.get(), "rows", type.file_type().get(), rows.size(), 4096);
    if (!rows.empty()) h5::write_rows(dset.get(), type.memory_type(), 0, rows.size(), rows.data());
  }
  file.close(("close " + path).c_str());
}

h5::Handle open_checked(const std::string& path) {
  h5::Handle file =
      h5::check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose, "open " + path);
  if (!h5::has_attr(file.get(), "format") || h5::read_string_attr(file.get(), "format") != kFormat)
    throw InputError(path + ": not an Orrery profile database (no format = \"" +
                     std::string(kFormat) + "\" attribute)");
  int version = h5::read_int_attr(file.get(), "format_version");
  if (version < 1 || version > kProfileFormatVersion)
    throw InputError(path + ": profile format_version " + std::to_string(version) +
                     " is not supported (this Orrery reads 1 to " +
                     std::to_string(kProfileFormatVersion) + ")");
  return file;
}

std::string text(const char* s) { return s ? s : ""; }

}  // namespace

void write_profile_h5(const std::string& path, const ProfileDb& db, const std::string& provenance) {
  h5::QuietErrors quiet;
  write_atomically(path, [&](const std::string& tmp) { write_file(tmp, db, provenance); });
}

namespace {

ProfileDb read_profile(const std::string& path) {
  h5::Handle file = open_checked(path);
  h5::Handle str = h5::string_type();
  h5::Compound type = row_type(str.get());
  ProfileDb db;
  size_t index = 0;
  h5::read_rows<RowH5>(file.get(), "rows", type.memory_type(), [&](const RowH5& r) {
    ProfileRow row;
    row.origin = path + ": rows[" + std::to_string(index++) + "]";
    row.op = text(r.op);
    row.dtype = text(r.dtype);
    row.device = text(r.device);
    row.inputs = text(r.inputs);
    row.output = text(r.output);
    row.attrs = text(r.attrs);
    row.time_s = r.time_s;
    row.n = r.n;
    row.m = r.m;
    row.t_n_s = r.t_n_s;
    row.t_m_s = r.t_m_s;
    row.samples = r.samples;
    row.stdev_s = r.stdev_s;
    row.source = text(r.source);
    db.add(std::move(row));
  });
  return db;
}

}  // namespace

ProfileDb read_profile_h5(const std::string& path) {
  return read_h5_input(path, "Orrery profile database", [&] { return read_profile(path); });
}

std::string read_profile_h5_provenance(const std::string& path) {
  return read_h5_input(path, "Orrery profile database", [&] {
    h5::Handle file = open_checked(path);
    return h5::read_string_attr(file.get(), "provenance");
  });
}

}  // namespace orrery
