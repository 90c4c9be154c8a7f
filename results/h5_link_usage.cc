#include "results/h5_link_usage.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace orrery::h5 {
namespace {

constexpr const char* kName = "link_utilization";
// Most links idle most of the time: rows of zeros deflate to almost nothing.
constexpr hsize_t kChunkRows = 64;
// A corrupt shape must not become a request for terabytes.
constexpr hsize_t kMaxCells = hsize_t{1} << 28;

}  // namespace

void write_link_utilization(hid_t group, const RunResult& result) {
  if (!(result.link_usage_bin_width > 0) || result.links.empty()) return;
  const size_t bins = result.links.front().utilization.size();
  for (const LinkStats& l : result.links)
    if (l.utilization.size() != bins)
      throw std::invalid_argument("link " + l.name + " has " +
                                  std::to_string(l.utilization.size()) +
                                  " utilization bins, the first link " + std::to_string(bins));
  if (bins == 0) return;

  hsize_t dims[2] = {result.links.size(), bins};
  Handle space = check(H5Screate_simple(2, dims, nullptr), H5Sclose, "create dataspace");
  Handle dcpl = check(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "create dataset properties");
  if (H5Zfilter_avail(H5Z_FILTER_DEFLATE) > 0) {
    hsize_t chunk[2] = {std::min(dims[0], kChunkRows), dims[1]};
    check(H5Pset_chunk(dcpl.get(), 2, chunk), "set chunk size");
    check(H5Pset_shuffle(dcpl.get()), "set shuffle filter");
    check(H5Pset_deflate(dcpl.get(), 4), "set deflate filter");
  }
  Handle dset = check(
      H5Dcreate2(group, kName, H5T_IEEE_F64LE, space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
      H5Dclose, std::string("create dataset ") + kName);
  // A chunk's rows at a time: the whole table at once was another copy of every link's bins
  // (a gigabyte at 65,536 GPUs).
  std::vector<double> cells;
  for (hsize_t first = 0; first < dims[0]; first += kChunkRows) {
    hsize_t block[2] = {std::min(kChunkRows, dims[0] - first), dims[1]};
    hsize_t start[2] = {first, 0};
    cells.clear();
    for (hsize_t i = first; i < first + block[0]; ++i)
      cells.insert(cells.end(), result.links[i].utilization.begin(),
                   result.links[i].utilization.end());
    // Each selection replaces the last on the dataset's own dataspace (`space`).
    check(H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, start, nullptr, block, nullptr),
          "select rows");
    Handle memory = check(H5Screate_simple(2, block, nullptr), H5Sclose, "create dataspace");
    check(H5Dwrite(dset.get(), H5T_NATIVE_DOUBLE, memory.get(), space.get(), H5P_DEFAULT,
                   cells.data()),
          std::string("write dataset ") + kName);
  }
  write_double_attr(dset.get(), "bin_width", result.link_usage_bin_width);
  write_string_attr(dset.get(), "unit", "1");
}

void read_link_utilization(hid_t group, RunResult* result) {
  const htri_t exists = H5Lexists(group, kName, H5P_DEFAULT);
  check(exists < 0 ? -1 : 0, std::string("look up ") + kName);
  if (exists == 0) return;
  Handle dset =
      check(H5Dopen2(group, kName, H5P_DEFAULT), H5Dclose, std::string("open dataset ") + kName);
  Handle type = check(H5Dget_type(dset.get()), H5Tclose, std::string("get the type of ") + kName);
  if (H5Tget_class(type.get()) != H5T_FLOAT)
    throw std::runtime_error(std::string("dataset ") + kName + " does not hold floats");
  Handle space = check(H5Dget_space(dset.get()), H5Sclose, "get dataspace");
  hsize_t dims[2] = {0, 0};
  if (H5Sget_simple_extent_ndims(space.get()) != 2 ||
      H5Sget_simple_extent_dims(space.get(), dims, nullptr) != 2)
    throw std::runtime_error(std::string("dataset ") + kName + " is not two-dimensional");
  if (dims[0] != result->links.size() || dims[1] == 0 || dims[1] > kMaxCells / dims[0])
    throw std::runtime_error(std::string("dataset ") + kName + " has shape (" +
                             std::to_string(dims[0]) + ", " + std::to_string(dims[1]) +
                             "), expected one row per link (" +
                             std::to_string(result->links.size()) + ")");
  std::vector<double> cells(dims[0] * dims[1]);
  check(H5Dread(dset.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, cells.data()),
        std::string("read dataset ") + kName);
  double width = 0;
  {
    Handle attr = check(H5Aopen(dset.get(), "bin_width", H5P_DEFAULT), H5Aclose,
                        std::string("open attribute bin_width of ") + kName);
    Handle attr_type = check(H5Aget_type(attr.get()), H5Tclose, "get the type of bin_width");
    Handle attr_space = check(H5Aget_space(attr.get()), H5Sclose, "get dataspace of bin_width");
    if (H5Tget_class(attr_type.get()) != H5T_FLOAT ||
        H5Sget_simple_extent_npoints(attr_space.get()) != 1)
      throw std::runtime_error(std::string("attribute bin_width of ") + kName +
                               " is not one float");
    check(H5Aread(attr.get(), H5T_NATIVE_DOUBLE, &width), "read attribute bin_width");
  }
  if (!(width > 0) || !std::isfinite(width))
    throw std::runtime_error(std::string("attribute bin_width of ") + kName +
                             " is not a positive number");
  for (size_t i = 0; i < result->links.size(); ++i) {
    auto first = cells.begin() + static_cast<std::ptrdiff_t>(i * dims[1]);
    result->links[i].utilization.assign(first, first + static_cast<std::ptrdiff_t>(dims[1]));
  }
  result->link_usage_bin_width = width;
}

}  // namespace orrery::h5
