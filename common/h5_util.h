// Internal helpers for the HDF5 result store (h5_store.h): owned identifiers, error capture,
// string attributes and compound-type building over the plain HDF5 C API.
// Every failure becomes a std::runtime_error carrying HDF5's own message.
#pragma once

#include <hdf5.h>

#include <cstddef>
#include <string>
#include <vector>

namespace orrery::h5 {

// Owns one HDF5 identifier and closes it with the matching H5*close, so an exception thrown
// half-way through a file never leaks an open object (which would keep the file open).
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  Handle(Handle&& o) noexcept : id_(o.id_), closer_(o.closer_) { o.id_ = H5I_INVALID_HID; }
  Handle& operator=(Handle&& o) noexcept;
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { reset(); }

  hid_t get() const { return id_; }
  // Closes now and throws on failure: closing a file is where HDF5 flushes, so its failure
  // must not be lost in a destructor.
  void close(const char* what);

 private:
  void reset();
  hid_t id_ = H5I_INVALID_HID;
  Closer closer_ = nullptr;
};

// Turns HDF5's automatic error printing off for the current scope (errors are reported through
// exceptions instead) and restores the caller's setting afterwards.
class QuietErrors {
 public:
  QuietErrors();
  ~QuietErrors();
  QuietErrors(const QuietErrors&) = delete;
  QuietErrors& operator=(const QuietErrors&) = delete;

 private:
  H5E_auto2_t func_ = nullptr;
  void* data_ = nullptr;
};

// The most specific message on HDF5's error stack, or "" when the stack is empty.
std::string error_text();

// Wrap a new identifier; throws std::runtime_error("<what>: <HDF5 message>") when id < 0.
Handle check(hid_t id, Handle::Closer closer, const std::string& what);
void check(herr_t status, const std::string& what);

// Variable-length UTF-8 string type: h5py reads it as str, and a long value (a whole scenario)
// lives in the global heap rather than the 64 KiB object header.
Handle string_type();

// Builds a compound type member by member (memory layout of a C++ row struct).
class Compound {
 public:
  explicit Compound(size_t row_size);
  Compound& add(const char* name, size_t offset, hid_t type);
  hid_t memory_type() const { return type_.get(); }
  // A copy without the struct's padding, for the file.
  Handle file_type() const;

 private:
  Handle type_;
};

// Creates a 1-D dataset of `rows` elements (zero allowed). A nonzero gzip_chunk stores it in
// chunks of that many rows, shuffled and deflated (when the library has zlib).
Handle create_dataset(hid_t loc, const char* name, hid_t file_type, size_t rows,
                      size_t gzip_chunk = 0);
// Writes rows [first, first + count) of a 1-D dataset from `buf` (count elements of mem_type).
void write_rows(hid_t dataset, hid_t mem_type, size_t first, size_t count, const void* buf);
// Number of elements of a 1-D dataset. Refuses more than `max_rows` (33 million: more ops than
// a replay accepts by default), and more rows than the stored bytes can hold: a flipped bit in
// a corrupt file must not become a request for terabytes of memory.
size_t row_count(hid_t dataset, size_t max_rows = size_t{1} << 25);
// Checks that the file type of `dataset` is a compound holding every member of the compound
// `mem_type` by name, each of the same class (string, float, integer); HDF5 would otherwise
// leave a missing member unset instead of failing. Throws std::runtime_error naming `name`
// and the member.
void require_members(hid_t dataset, hid_t mem_type, const std::string& name);
// Frees the strings HDF5 allocated while reading `count` elements of `mem_type` into `buf`.
// Never throws, so it can run from a destructor.
void reclaim(hid_t mem_type, size_t count, void* buf) noexcept;

// Reads a whole 1-D compound dataset into rows of `Row` (the memory layout of `mem_type`) and
// hands each to `each`; strings HDF5 allocated are freed afterwards, even if `each` throws.
template <typename Row, typename Fn>
void read_rows(hid_t loc, const char* name, hid_t mem_type, Fn&& each) {
  Handle dset =
      check(H5Dopen2(loc, name, H5P_DEFAULT), H5Dclose, std::string("open dataset ") + name);
  require_members(dset.get(), mem_type, name);
  std::vector<Row> rows(row_count(dset.get()));  // value-initialized: unset strings are null
  if (rows.empty()) return;
  check(H5Dread(dset.get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows.data()),
        std::string("read dataset ") + name);
  struct Reclaim {
    hid_t type;
    std::vector<Row>& rows;
    ~Reclaim() { reclaim(type, rows.size(), rows.data()); }
  } guard{mem_type, rows};
  for (const Row& row : rows) each(row);
}

void write_string_attr(hid_t obj, const char* name, const std::string& value);
void write_int_attr(hid_t obj, const char* name, int value);
void write_double_attr(hid_t obj, const char* name, double value);
// Readers check the attribute before reading it: one value (scalar, or a one-element array),
// of the string (variable or fixed length), integer or float class. Anything else throws
// std::runtime_error saying what the attribute is and what was expected.
std::string read_string_attr(hid_t obj, const char* name);
int read_int_attr(hid_t obj, const char* name);
double read_double_attr(hid_t obj, const char* name);

// File access properties for files Orrery writes: the HDF5 1.8 object format, whose metadata
// (superblock, object headers, heaps of attributes) carries checksums, so a corrupt file fails
// with a checksum error instead of being misread. Readable by HDF5 1.8 and later (h5py too).
Handle checksummed_file_access();
bool has_attr(hid_t obj, const char* name);

}  // namespace orrery::h5
