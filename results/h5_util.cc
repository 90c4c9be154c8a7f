#include "results/h5_util.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace orrery::h5 {

Handle& Handle::operator=(Handle&& o) noexcept {
  if (this != &o) {
    reset();
    id_ = o.id_;
    closer_ = o.closer_;
    o.id_ = H5I_INVALID_HID;
  }
  return *this;
}

void Handle::reset() {
  if (id_ >= 0 && closer_ != nullptr) closer_(id_);
  id_ = H5I_INVALID_HID;
}

void Handle::close(const char* what) {
  hid_t id = id_;
  id_ = H5I_INVALID_HID;
  if (id >= 0 && closer_ != nullptr) check(closer_(id), what);
}

QuietErrors::QuietErrors() {
  H5Eget_auto2(H5E_DEFAULT, &func_, &data_);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

QuietErrors::~QuietErrors() { H5Eset_auto2(H5E_DEFAULT, func_, data_); }

namespace {

herr_t collect_error(unsigned, const H5E_error2_t* err, void* out) {
  if (err->desc != nullptr) static_cast<std::vector<std::string>*>(out)->push_back(err->desc);
  return 0;
}

}  // namespace

std::string error_text() {
  std::vector<std::string> descs;  // from the API call down to the most specific cause
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collect_error, &descs);
  if (descs.empty()) return "";
  if (descs.size() == 1 || descs.front() == descs.back()) return descs.front();
  // The API-level message says what failed, the innermost one says why (e.g. errno text).
  return descs.front() + " (" + descs.back() + ")";
}

Handle check(hid_t id, Handle::Closer closer, const std::string& what) {
  if (id < 0) {
    std::string detail = error_text();
    throw std::runtime_error(what + (detail.empty() ? "" : ": " + detail));
  }
  return Handle(id, closer);
}

void check(herr_t status, const std::string& what) {
  if (status < 0) {
    std::string detail = error_text();
    throw std::runtime_error(what + (detail.empty() ? "" : ": " + detail));
  }
}

Handle string_type() {
  Handle t = check(H5Tcopy(H5T_C_S1), H5Tclose, "copy string type");
  check(H5Tset_size(t.get(), H5T_VARIABLE), "set string size");
  check(H5Tset_cset(t.get(), H5T_CSET_UTF8), "set string charset");
  return t;
}

Compound::Compound(size_t row_size)
    : type_(check(H5Tcreate(H5T_COMPOUND, row_size), H5Tclose, "create compound type")) {}

Compound& Compound::add(const char* name, size_t offset, hid_t type) {
  check(H5Tinsert(type_.get(), name, offset, type), std::string("add compound member ") + name);
  return *this;
}

Handle Compound::file_type() const {
  Handle t = check(H5Tcopy(type_.get()), H5Tclose, "copy compound type");
  check(H5Tpack(t.get()), "pack compound type");
  return t;
}

Handle create_dataset(hid_t loc, const char* name, hid_t file_type, size_t rows,
                      size_t gzip_chunk) {
  hsize_t dims[1] = {rows};
  Handle space = check(H5Screate_simple(1, dims, nullptr), H5Sclose, "create dataspace");
  Handle dcpl = check(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "create dataset properties");
  if (gzip_chunk > 0 && rows > 0 && H5Zfilter_avail(H5Z_FILTER_DEFLATE) > 0) {
    hsize_t chunk[1] = {std::min<hsize_t>(gzip_chunk, rows)};
    check(H5Pset_chunk(dcpl.get(), 1, chunk), "set chunk size");
    check(H5Pset_shuffle(dcpl.get()), "set shuffle filter");
    check(H5Pset_deflate(dcpl.get(), 4), "set deflate filter");
  }
  return check(H5Dcreate2(loc, name, file_type, space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
               H5Dclose, std::string("create dataset ") + name);
}

void write_rows(hid_t dataset, hid_t mem_type, size_t first, size_t count, const void* buf) {
  if (count == 0) return;  // a zero-row selection is legal but pointless
  Handle file_space = check(H5Dget_space(dataset), H5Sclose, "get dataspace");
  hsize_t start[1] = {first};
  hsize_t n[1] = {count};
  check(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, n, nullptr),
        "select rows");
  Handle mem_space = check(H5Screate_simple(1, n, nullptr), H5Sclose, "create dataspace");
  check(H5Dwrite(dataset, mem_type, mem_space.get(), file_space.get(), H5P_DEFAULT, buf),
        "write rows");
}

size_t row_count(hid_t dataset) {
  Handle space = check(H5Dget_space(dataset), H5Sclose, "get dataspace");
  if (H5Sget_simple_extent_ndims(space.get()) != 1) {
    throw std::runtime_error("expected a one-dimensional dataset");
  }
  hsize_t dims[1] = {0};
  check(H5Sget_simple_extent_dims(space.get(), dims, nullptr), "get dataset size");
  return static_cast<size_t>(dims[0]);
}

void reclaim(hid_t mem_type, size_t count, void* buf) noexcept {
  if (count == 0) return;
  hsize_t n[1] = {count};
  hid_t space = H5Screate_simple(1, n, nullptr);
  if (space < 0) return;  // nothing better to do than leak: this runs during cleanup
#if H5_VERSION_GE(1, 12, 0)
  H5Treclaim(mem_type, space, H5P_DEFAULT, buf);
#else
  H5Dvlen_reclaim(mem_type, space, H5P_DEFAULT, buf);
#endif
  H5Sclose(space);
}

void write_string_attr(hid_t obj, const char* name, const std::string& value) {
  Handle type = string_type();
  Handle space = check(H5Screate(H5S_SCALAR), H5Sclose, "create scalar dataspace");
  Handle attr = check(H5Acreate2(obj, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
                      H5Aclose, std::string("create attribute ") + name);
  const char* ptr = value.c_str();
  check(H5Awrite(attr.get(), type.get(), &ptr), std::string("write attribute ") + name);
}

void write_int_attr(hid_t obj, const char* name, int value) {
  Handle space = check(H5Screate(H5S_SCALAR), H5Sclose, "create scalar dataspace");
  Handle attr = check(H5Acreate2(obj, name, H5T_STD_I32LE, space.get(), H5P_DEFAULT, H5P_DEFAULT),
                      H5Aclose, std::string("create attribute ") + name);
  check(H5Awrite(attr.get(), H5T_NATIVE_INT, &value), std::string("write attribute ") + name);
}

std::string read_string_attr(hid_t obj, const char* name) {
  Handle attr =
      check(H5Aopen(obj, name, H5P_DEFAULT), H5Aclose, std::string("open attribute ") + name);
  Handle type = string_type();
  char* ptr = nullptr;
  check(H5Aread(attr.get(), type.get(), &ptr), std::string("read attribute ") + name);
  std::string value = ptr != nullptr ? ptr : "";
  reclaim(type.get(), 1, &ptr);
  return value;
}

int read_int_attr(hid_t obj, const char* name) {
  Handle attr =
      check(H5Aopen(obj, name, H5P_DEFAULT), H5Aclose, std::string("open attribute ") + name);
  int value = 0;
  check(H5Aread(attr.get(), H5T_NATIVE_INT, &value), std::string("read attribute ") + name);
  return value;
}

bool has_attr(hid_t obj, const char* name) {
  htri_t exists = H5Aexists(obj, name);
  check(exists < 0 ? -1 : 0, std::string("look up attribute ") + name);
  return exists > 0;
}

}  // namespace orrery::h5
