// Reading result files that are not what Orrery wrote: truncated, bit-flipped, foreign, with
// attributes or columns missing or mistyped. Every case must end in an InputError naming the
// file (exit status 2), never in a crash inside libhdf5 (common/h5_guard.h).
#include <gtest/gtest.h>
#include <hdf5.h>
#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "common/errors.h"
#include "results/h5_store.h"
#include "sweeps/sweep_h5.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

namespace fs = std::filesystem;

RunRecord sample_run(const std::string& name, double makespan) {
  RunRecord r;
  r.name = name;
  r.params = {{"gpus", "8"}, {"platform.nic.bandwidth", "25Gbps"}, {"strategy", "ring"}};
  r.result.makespan = makespan;
  r.result.activities = 12;
  DeviceStats d;
  d.name = "gpu0";
  d.busy = {0.1, 0.02, 0.0, 0.0, 0.0};
  d.ops = 3;
  r.result.devices = {d};
  r.result.links = {{"nvlink_0_1", 300e9, 1e-6, 1.5e9, "nvlink"}};
  return r;
}

// A small sweep result file, the kind `orrery report` and `sweep --resume` read.
std::string write_sample(const std::string& dir) {
  const std::string path = dir + "/results.h5";
  ResultFileMeta meta{"name: corrupt-me\n", "0.1.0", "pcie-server", "test", "", 0.0, 0.0, "", {}};
  SweepFileStatus status;
  status.points_total = 2;
  status.points_done = 2;
  status.complete = true;
  status.attrs["axis_keys"] = "gpus";
  write_sweep_h5(path, meta, {sample_run("a/0", 0.5), sample_run("a/1", 0.25)}, status);
  return path;
}

// Reads `path` both ways a command does; true if it read, false on an InputError naming the
// file. Anything else fails the test.
bool reads(const std::string& path) {
  bool ok = true;
  for (int reader = 0; reader < 2; ++reader) {
    try {
      if (reader == 0) read_results_h5(path);
      if (reader == 1) read_sweep_status(path);
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
      ok = false;
    } catch (const std::exception& e) {
      ADD_FAILURE() << path << ": not an InputError: " << e.what();
      ok = false;
    }
  }
  return ok;
}

std::string error_of(const std::string& path) {
  try {
    read_results_h5(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(read without error)";
}

TEST(H5Read, TruncatedFilesAreInputErrors) {
  const std::string dir = testing::make_temp_dir("h5read");
  const std::string good = write_sample(dir);
  const std::string bytes = testing::read_file(good);
  ASSERT_TRUE(reads(good));
  const size_t n = bytes.size();
  for (size_t cut : {size_t{0}, size_t{4}, size_t{8}, size_t{40}, size_t{200}, n / 8, n / 4, n / 2,
                     3 * n / 4, n - 100, n - 1}) {
    SCOPED_TRACE("cut at " + std::to_string(cut) + " of " + std::to_string(n));
    const std::string path = dir + "/cut" + std::to_string(cut) + ".h5";
    testing::write_file(path, bytes.substr(0, cut));
    EXPECT_FALSE(reads(path));
  }
}

TEST(H5Read, FlippedBytesNeverCrash) {
  const std::string dir = testing::make_temp_dir("h5read");
  const std::string bytes = testing::read_file(write_sample(dir));
  uint64_t state = 0x9e3779b97f4a7c15u;  // a fixed xorshift sequence: the same cases every run
  auto next = [&] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  int refused = 0;
  for (int i = 0; i < 40; ++i) {
    std::string bad = bytes;
    for (int k = 0; k < 4; ++k) bad[next() % bad.size()] ^= static_cast<char>(1u << (next() % 8));
    const std::string path = dir + "/flip" + std::to_string(i) + ".h5";
    testing::write_file(path, bad);
    refused += reads(path) ? 0 : 1;  // a flip in unused space may still read: no crash is the point
  }
  // Metadata carries checksums (format_version 3): most flips are caught.
  EXPECT_GT(refused, 10);
}

TEST(H5Read, ForeignFilesAreInputErrorsNamingWhatWasExpected) {
  const std::string dir = testing::make_temp_dir("h5read");
  const std::string json = dir + "/graph.h5";
  testing::write_file(json, "{\"format\": \"orrery-graph\"}\n");
  EXPECT_NE(error_of(json).find("not an HDF5 file"), std::string::npos) << error_of(json);

  const std::string empty = dir + "/empty.h5";
  hid_t f = H5Fcreate(empty.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  H5Fclose(f);
  EXPECT_NE(error_of(empty).find("format_version"), std::string::npos) << error_of(empty);

  EXPECT_NE(error_of(dir).find("must be a regular file"), std::string::npos) << error_of(dir);
  const std::string fifo = dir + "/fifo.h5";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_NE(error_of(fifo).find("FIFO"), std::string::npos) << error_of(fifo);
}

// Opens `path` for writing with HDF5 and hands the root group to `edit`.
template <typename Fn>
void edit(const std::string& path, Fn&& fn) {
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  fn(f);
  ASSERT_GE(H5Fclose(f), 0);
}

TEST(H5Read, MissingAttributeIsNamed) {
  const std::string dir = testing::make_temp_dir("h5read");
  const std::string path = write_sample(dir);
  edit(path, [](hid_t f) { ASSERT_GE(H5Adelete(f, "scenario"), 0); });
  const std::string e = error_of(path);
  EXPECT_NE(e.find(path + ": "), std::string::npos) << e;
  EXPECT_NE(e.find("attribute scenario"), std::string::npos) << e;
}

TEST(H5Read, WrongAttributeTypesAreNamed) {
  const std::string dir = testing::make_temp_dir("h5read");
  const std::string path = write_sample(dir);
  // format_version as a string, scenario as an integer, a run name as an array of two strings.
  edit(path, [](hid_t f) {
    ASSERT_GE(H5Adelete(f, "format_version"), 0);
    hid_t str = H5Tcopy(H5T_C_S1);
    H5Tset_size(str, 2);
    hid_t scalar = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(f, "format_version", str, scalar, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, str, "3");
    H5Aclose(a);
    H5Tclose(str);
    H5Sclose(scalar);
  });
  std::string e = error_of(path);
  EXPECT_NE(e.find("attribute format_version holds a string, expected an integer"),
            std::string::npos)
      << e;

  const std::string path2 = write_sample(testing::make_temp_dir("h5read"));
  edit(path2, [](hid_t f) {
    ASSERT_GE(H5Adelete(f, "scenario"), 0);
    hid_t scalar = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(f, "scenario", H5T_STD_I32LE, scalar, H5P_DEFAULT, H5P_DEFAULT);
    int v = 7;
    H5Awrite(a, H5T_NATIVE_INT, &v);
    H5Aclose(a);
    H5Sclose(scalar);
  });
  e = error_of(path2);
  EXPECT_NE(e.find("attribute scenario holds an integer, expected a string"), std::string::npos)
      << e;

  const std::string path3 = write_sample(testing::make_temp_dir("h5read"));
  edit(path3, [](hid_t f) {
    hid_t g = H5Gopen2(f, "runs_detail/1", H5P_DEFAULT);
    ASSERT_GE(H5Adelete(g, "name"), 0);
    hid_t str = H5Tcopy(H5T_C_S1);
    H5Tset_size(str, 4);
    hsize_t two[1] = {2};
    hid_t space = H5Screate_simple(1, two, nullptr);
    hid_t a = H5Acreate2(g, "name", str, space, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, str, "abcdefgh");
    H5Aclose(a);
    H5Sclose(space);
    H5Tclose(str);
    H5Gclose(g);
  });
  e = error_of(path3);
  EXPECT_NE(e.find("runs_detail/1: attribute name holds 2 values, expected one"), std::string::npos)
      << e;
}

TEST(H5Read, MissingColumnAndWrongShapeAreNamed) {
  const std::string dir = testing::make_temp_dir("h5read");
  const std::string path = write_sample(dir);
  // /runs replaced by a table without wall_s.
  edit(path, [](hid_t f) {
    ASSERT_GE(H5Ldelete(f, "runs", H5P_DEFAULT), 0);
    hid_t t = H5Tcreate(H5T_COMPOUND, 8);
    H5Tinsert(t, "iteration_time_s", 0, H5T_NATIVE_DOUBLE);
    hsize_t two[1] = {2};
    hid_t space = H5Screate_simple(1, two, nullptr);
    hid_t d = H5Dcreate2(f, "runs", t, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    double v[2] = {1, 2};
    H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
    H5Dclose(d);
    H5Sclose(space);
    H5Tclose(t);
  });
  std::string e = error_of(path);
  EXPECT_NE(e.find("dataset runs has no column \"name\""), std::string::npos) << e;

  const std::string path2 = write_sample(testing::make_temp_dir("h5read"));
  // A devices table that is a 2-D array of doubles.
  edit(path2, [](hid_t f) {
    ASSERT_GE(H5Ldelete(f, "runs_detail/0/devices", H5P_DEFAULT), 0);
    hsize_t dims[2] = {2, 3};
    hid_t space = H5Screate_simple(2, dims, nullptr);
    hid_t d = H5Dcreate2(f, "runs_detail/0/devices", H5T_IEEE_F64LE, space, H5P_DEFAULT,
                         H5P_DEFAULT, H5P_DEFAULT);
    H5Dclose(d);
    H5Sclose(space);
  });
  e = error_of(path2);
  EXPECT_NE(e.find("runs_detail/0: dataset devices holds a floating-point number, expected a "
                   "compound"),
            std::string::npos)
      << e;
}

TEST(H5Read, RowCountWithoutTheBytesIsRefused) {
  const std::string path = write_sample(testing::make_temp_dir("h5read"));
  // A links table claiming a million rows that were never stored (what a flipped bit in its
  // size field looks like): refused before a million rows are allocated.
  edit(path, [](hid_t f) {
    hid_t d = H5Dopen2(f, "runs_detail/0/links", H5P_DEFAULT);
    hid_t type = H5Dget_type(d);
    H5Dclose(d);
    ASSERT_GE(H5Ldelete(f, "runs_detail/0/links", H5P_DEFAULT), 0);
    hsize_t rows[1] = {1000000};
    hid_t space = H5Screate_simple(1, rows, nullptr);
    d = H5Dcreate2(f, "runs_detail/0/links", type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dclose(d);
    H5Sclose(space);
    H5Tclose(type);
  });
  const std::string e = error_of(path);
  EXPECT_NE(e.find("runs_detail/0: dataset claims 1000000 rows but stores only 0 bytes"),
            std::string::npos)
      << e;
}

TEST(H5Read, SweepStatusCountsMustBeCounts) {
  const std::string path = write_sample(testing::make_temp_dir("h5read"));
  edit(path, [](hid_t f) {
    hid_t g = H5Gopen2(f, "sweep", H5P_DEFAULT);
    hid_t a = H5Aopen(g, "points_done", H5P_DEFAULT);
    int v = -5;
    H5Awrite(a, H5T_NATIVE_INT, &v);
    H5Aclose(a);
    H5Gclose(g);
  });
  try {
    read_sweep_status(path);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(path + ": group sweep: attribute points_done = -5"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace orrery
