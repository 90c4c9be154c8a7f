#include "common/h5_util.h"

#include <algorithm>
#include <climits>
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

// The file driver's message for a failed write or read spans a line of addresses and sizes;
// its "error message = '...'" part (the errno text) is what a user needs.
std::string readable(const char* desc) {
  std::string text = desc;
  const std::string marker = "error message = '";
  const size_t at = text.find(marker);
  if (at != std::string::npos) {
    const size_t from = at + marker.size();
    const size_t to = text.find('\'', from);
    if (to != std::string::npos) return text.substr(from, to - from);
  }
  return text;
}

herr_t collect_error(unsigned, const H5E_error2_t* err, void* out) {
  if (err->desc != nullptr)
    static_cast<std::vector<std::string>*>(out)->push_back(readable(err->desc));
  return 0;
}

// libhdf5 closes files still open at exit. A file whose close failed (a full disk) stays in its
// books half-closed, and closing it again at exit crashes; every file Orrery opens is closed
// explicitly, so there is nothing for the exit handler to do.
const bool kNoExitHandler = [] {
  H5dont_atexit();
  return true;
}();

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

size_t row_count(hid_t dataset, size_t max_rows) {
  Handle space = check(H5Dget_space(dataset), H5Sclose, "get dataspace");
  const int ndims = H5Sget_simple_extent_ndims(space.get());
  if (ndims != 1) {
    throw std::runtime_error("expected a one-dimensional dataset, found " +
                             (ndims < 0 ? std::string("an unreadable dataspace")
                                        : std::to_string(ndims) + " dimensions"));
  }
  hsize_t dims[1] = {0};
  check(H5Sget_simple_extent_dims(space.get(), dims, nullptr), "get dataset size");
  if (dims[0] > max_rows) {
    throw std::runtime_error("dataset claims " + std::to_string(dims[0]) + " rows, more than the " +
                             std::to_string(max_rows) + " accepted");
  }
  // A damaged size field claims rows the file has no bytes for; even a deflated table of
  // repeated rows keeps well over a byte per 64 rows.
  const hsize_t stored = H5Dget_storage_size(dataset);
  if (dims[0] > 4096 && stored < dims[0] / 64) {
    throw std::runtime_error("dataset claims " + std::to_string(dims[0]) +
                             " rows but stores only " + std::to_string(stored) + " bytes");
  }
  return static_cast<size_t>(dims[0]);
}

namespace {

const char* class_name(H5T_class_t c) {
  switch (c) {
    case H5T_INTEGER:
      return "an integer";
    case H5T_FLOAT:
      return "a floating-point number";
    case H5T_STRING:
      return "a string";
    case H5T_COMPOUND:
      return "a compound";
    case H5T_ARRAY:
      return "an array";
    case H5T_VLEN:
      return "a variable-length sequence";
    case H5T_ENUM:
      return "an enum";
    default:
      return "an unsupported type";
  }
}

}  // namespace

void require_members(hid_t dataset, hid_t mem_type, const std::string& name) {
  Handle file_type = check(H5Dget_type(dataset), H5Tclose, "get the type of dataset " + name);
  const H5T_class_t file_class = H5Tget_class(file_type.get());
  if (file_class != H5T_COMPOUND) {
    throw std::runtime_error("dataset " + name + " holds " + class_name(file_class) +
                             ", expected a compound (a table)");
  }
  const int members = H5Tget_nmembers(mem_type);
  for (int i = 0; i < members; ++i) {
    char* member = H5Tget_member_name(mem_type, static_cast<unsigned>(i));
    if (member == nullptr) throw std::runtime_error("cannot name a member of " + name);
    const std::string member_name = member;
    H5free_memory(member);
    const int index = H5Tget_member_index(file_type.get(), member_name.c_str());
    if (index < 0) {
      throw std::runtime_error("dataset " + name + " has no column \"" + member_name + "\"");
    }
    const H5T_class_t want = H5Tget_member_class(mem_type, static_cast<unsigned>(i));
    const H5T_class_t have = H5Tget_member_class(file_type.get(), static_cast<unsigned>(index));
    if (want != have) {
      throw std::runtime_error("dataset " + name + ": column \"" + member_name + "\" holds " +
                               class_name(have) + ", expected " + class_name(want));
    }
  }
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

void write_double_attr(hid_t obj, const char* name, double value) {
  Handle space = check(H5Screate(H5S_SCALAR), H5Sclose, "create scalar dataspace");
  Handle attr = check(H5Acreate2(obj, name, H5T_IEEE_F64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT),
                      H5Aclose, std::string("create attribute ") + name);
  check(H5Awrite(attr.get(), H5T_NATIVE_DOUBLE, &value), std::string("write attribute ") + name);
}

namespace {

// Opens attribute `name` of `obj` and checks that it holds one value of class `want`.
Handle open_single_attr(hid_t obj, const char* name, H5T_class_t want, Handle* type) {
  const std::string attr_name = std::string("attribute ") + name;
  Handle attr = check(H5Aopen(obj, name, H5P_DEFAULT), H5Aclose, "open " + attr_name);
  *type = check(H5Aget_type(attr.get()), H5Tclose, "get the type of " + attr_name);
  const H5T_class_t have = H5Tget_class(type->get());
  if (have != want) {
    throw std::runtime_error(attr_name + " holds " + class_name(have) + ", expected " +
                             class_name(want));
  }
  Handle space = check(H5Aget_space(attr.get()), H5Sclose, "get the dataspace of " + attr_name);
  const hssize_t points = H5Sget_simple_extent_npoints(space.get());
  if (points != 1) {
    throw std::runtime_error(attr_name + " holds " + std::to_string(points) +
                             " values, expected one");
  }
  return attr;
}

}  // namespace

std::string read_string_attr(hid_t obj, const char* name) {
  Handle file_type;
  Handle attr = open_single_attr(obj, name, H5T_STRING, &file_type);
  const std::string what = std::string("read attribute ") + name;
  const htri_t variable = H5Tis_variable_str(file_type.get());
  check(variable < 0 ? -1 : 0, what);
  if (variable == 0) {
    // Fixed-length strings (written by other tools): read the declared size, no more.
    const size_t size = H5Tget_size(file_type.get());
    if (size == 0 || size > (size_t{1} << 24)) {
      throw std::runtime_error(std::string("attribute ") + name + " declares a string of " +
                               std::to_string(size) + " bytes");
    }
    Handle mem = check(H5Tcopy(H5T_C_S1), H5Tclose, "copy string type");
    check(H5Tset_size(mem.get(), size + 1), "set string size");
    std::vector<char> buf(size + 1, '\0');
    check(H5Aread(attr.get(), mem.get(), buf.data()), what);
    buf.back() = '\0';
    return std::string(buf.data());
  }
  Handle type = string_type();
  char* ptr = nullptr;
  check(H5Aread(attr.get(), type.get(), &ptr), what);
  std::string value = ptr != nullptr ? ptr : "";
  reclaim(type.get(), 1, &ptr);
  return value;
}

int read_int_attr(hid_t obj, const char* name) {
  Handle file_type;
  Handle attr = open_single_attr(obj, name, H5T_INTEGER, &file_type);
  long long value = 0;
  check(H5Aread(attr.get(), H5T_NATIVE_LLONG, &value), std::string("read attribute ") + name);
  if (value < INT_MIN || value > INT_MAX) {
    throw std::runtime_error(std::string("attribute ") + name + " = " + std::to_string(value) +
                             " does not fit an int");
  }
  return static_cast<int>(value);
}

double read_double_attr(hid_t obj, const char* name) {
  Handle file_type;
  Handle attr = open_single_attr(obj, name, H5T_FLOAT, &file_type);
  double value = 0;
  check(H5Aread(attr.get(), H5T_NATIVE_DOUBLE, &value), std::string("read attribute ") + name);
  return value;
}

Handle checksummed_file_access() {
  Handle fapl = check(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "create file access properties");
  check(H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V18, H5F_LIBVER_V18),
        "set the file format version");
  return fapl;
}

bool has_attr(hid_t obj, const char* name) {
  htri_t exists = H5Aexists(obj, name);
  check(exists < 0 ? -1 : 0, std::string("look up attribute ") + name);
  return exists > 0;
}

}  // namespace orrery::h5
