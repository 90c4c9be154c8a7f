// The profile database: key text, the N/M formula, exact hits, log-space interpolation, the
// fallback order, the CSV and HDF5 files, and the shipped CPU database.
#include "models/profile_db.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "common/errors.h"
#include "models/cost_model.h"
#include "models/profile_io.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

ProfileRow row(const std::string& op, const std::string& inputs, const std::string& output,
               double t, const std::string& device = "dev") {
  ProfileRow r;
  r.op = op;
  r.dtype = "fp32";
  r.device = device;
  r.inputs = inputs;
  r.output = output;
  r.time_s = t;
  return r;
}

ModelOp matmul(int64_t m, int64_t k, int64_t n) {
  ModelOp op;
  op.name = "mm";
  op.type = "matmul";
  op.inputs = {{m, k}, {k, n}};
  op.output = {m, n};
  return op;
}

TEST(ProfileKeys, CanonicalText) {
  EXPECT_EQ(shape_text({64, 3, 224, 224}), "64x3x224x224");
  EXPECT_EQ(shapes_text({{64, 256}, {256}}), "64x256;256");
  // Default-valued attributes are left out so spelled-out defaults still match.
  EXPECT_EQ(attrs_text({{"groups", 1}, {"stride_h", 2}, {"pad_w", 0}, {"kernel_h", 3}}),
            "kernel_h=3;stride_h=2");
  std::vector<Shape> shapes;
  ASSERT_TRUE(parse_shapes_text("8x16;16x4", &shapes));
  EXPECT_EQ(shapes, (std::vector<Shape>{{8, 16}, {16, 4}}));
  Shape s;
  EXPECT_FALSE(parse_shape_text("8xx16", &s));
  EXPECT_FALSE(parse_shape_text("8x-1", &s));
  std::map<std::string, int64_t> attrs;
  EXPECT_FALSE(parse_attrs_text("stride_h", &attrs));
}

TEST(ProfileDb, NmFormulaOfTianshu) {
  // 10 copies take 10 ms, 50 copies 50 ms (+ the same 2 ms fixed cost each): 1 ms per op.
  EXPECT_DOUBLE_EQ(nm_op_time(0.012, 0.052, 10, 50), 0.001);
  EXPECT_DOUBLE_EQ(nm_op_time(3.0e-4, 1.1e-3, 2, 10), 1e-4);
  EXPECT_THROW(nm_op_time(1, 2, 5, 5), std::invalid_argument);
}

TEST(ProfileDb, ExactHit) {
  ProfileDb db;
  db.add(row("matmul", "64x256;256x256", "64x256", 1e-3));
  auto hit = db.lookup(matmul(64, 256, 256), {"dev"});
  ASSERT_TRUE(hit.has_value());
  EXPECT_TRUE(hit->exact);
  EXPECT_DOUBLE_EQ(hit->seconds, 1e-3);
  // Device names compare case-insensitively; any of several names may match.
  EXPECT_TRUE(db.lookup(matmul(64, 256, 256), {"other", "DEV"}).has_value());
  EXPECT_FALSE(db.lookup(matmul(64, 256, 256), {"other"}).has_value());
  ModelOp half = matmul(64, 256, 256);
  half.dtype = DType::kFP16;
  EXPECT_FALSE(db.lookup(half, {"dev"}).has_value());
}

TEST(ProfileDb, InterpolatesInLogSpaceAlongOneDimension) {
  ProfileDb db;
  db.add(row("matmul", "64x256;256x256", "64x256", 1e-3));
  db.add(row("matmul", "256x256;256x256", "256x256", 4e-3));
  db.add(row("matmul", "1024x256;256x256", "1024x256", 64e-3));
  // M = 128 lies halfway (in log) between 64 and 256: sqrt(1e-3 * 4e-3) = 2e-3.
  auto mid = db.lookup(matmul(128, 256, 256), {"dev"});
  ASSERT_TRUE(mid.has_value());
  EXPECT_FALSE(mid->exact);
  EXPECT_NEAR(mid->seconds, 2e-3, 1e-15);
  // M = 512 uses the nearest rows on each side, 256 and 1024: sqrt(4e-3 * 64e-3) = 16e-3.
  EXPECT_NEAR(db.lookup(matmul(512, 256, 256), {"dev"})->seconds, 16e-3, 1e-14);
  // Never extrapolates.
  EXPECT_FALSE(db.lookup(matmul(2048, 256, 256), {"dev"}).has_value());
  EXPECT_FALSE(db.lookup(matmul(32, 256, 256), {"dev"}).has_value());
  // Two sizes differ from every row (M and N): no single dimension to interpolate along.
  EXPECT_FALSE(db.lookup(matmul(128, 256, 128), {"dev"}).has_value());
}

TEST(ProfileDb, InterpolationNeedsSameAttrsAndRanks) {
  ProfileDb db;
  ProfileRow a = row("conv2d", "1x32x32x32;32x32x3x3", "1x32x32x32", 1e-4);
  a.attrs = "pad_h=1;pad_w=1";
  ProfileRow b = a;
  b.inputs = "4x32x32x32;32x32x3x3";
  b.output = "4x32x32x32";
  b.time_s = 4e-4;
  db.add(a);
  db.add(b);
  ModelOp op;
  op.type = "conv2d";
  op.inputs = {{2, 32, 32, 32}, {32, 32, 3, 3}};
  op.output = {2, 32, 32, 32};
  op.attrs = {{"pad_h", 1}, {"pad_w", 1}, {"stride_h", 1}, {"groups", 1}};  // defaults spelled
  auto hit = db.lookup(op, {"dev"});
  ASSERT_TRUE(hit.has_value());
  EXPECT_NEAR(hit->seconds, 2e-4, 1e-16);
  op.attrs["pad_h"] = 0;
  EXPECT_FALSE(db.lookup(op, {"dev"}).has_value());
}

TEST(ProfileDb, ElementwiseOutputDefaultsToFirstInput) {
  ProfileDb db;
  db.add(row("relu", "64x1024", "64x1024", 5e-6));
  ModelOp op;
  op.type = "relu";
  op.inputs = {{64, 1024}};  // output not given
  ASSERT_TRUE(db.lookup(op, {"dev"}).has_value());
}

TEST(ProfileDb, LaterRowReplacesEarlierKey) {
  ProfileDb db;
  EXPECT_TRUE(db.add(row("relu", "64", "64", 1e-6)));
  EXPECT_FALSE(db.add(row("relu", "64", "64", 3e-6)));
  EXPECT_EQ(db.size(), 1u);
  ModelOp op;
  op.type = "relu";
  op.inputs = {{64}};
  op.output = {64};
  EXPECT_DOUBLE_EQ(db.lookup(op, {"dev"})->seconds, 3e-6);
}

TEST(ProfileDb, BadRowsNameTheirOrigin) {
  ProfileDb db;
  ProfileRow r = row("relu", "64", "64", -1);
  r.origin = "f.csv:7";
  try {
    db.add(r);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("f.csv:7"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("time_s"), std::string::npos);
  }
  EXPECT_THROW(db.add(row("relux", "64", "64", 1)), InputError);
  EXPECT_THROW(db.add(row("relu", "64by3", "64", 1)), InputError);
}

TEST(ProfileFiles, CsvParsesCommentsQuotesAndOptionalColumns) {
  std::string text =
      "# provenance line\n"
      "op,device,dtype,inputs,output,attrs,time_s,source\n"
      "matmul,dev,fp32,64x256;256x256,64x256,,1.5e-4,\"script, v1\"\n"
      "\n"
      "conv2d,dev,fp32,1x3x8x8;4x3x3x3,1x4x8x8,pad_h=1;pad_w=1,2e-5,\n";
  ProfileDb db = parse_profile_csv(text, "c.csv");
  ASSERT_EQ(db.size(), 2u);
  EXPECT_EQ(db.rows()[0].source, "script, v1");
  EXPECT_DOUBLE_EQ(db.rows()[1].time_s, 2e-5);
  EXPECT_EQ(db.rows()[1].attrs, "pad_h=1;pad_w=1");
}

TEST(ProfileFiles, CsvErrorsNameFileLineAndColumn) {
  auto err = [](const std::string& text) {
    try {
      parse_profile_csv(text, "c.csv");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(err("op,dtype,device,inputs,output,attrs,time_s,speed\n").find("unknown column"),
            std::string::npos);
  EXPECT_NE(err("op,dtype,device,inputs,output,attrs\n").find("time_s"), std::string::npos);
  std::string bad = err("op,dtype,device,inputs,output,attrs,time_s\nrelu,fp32,d,4,4,,fast\n");
  EXPECT_NE(bad.find("c.csv:2"), std::string::npos) << bad;
  EXPECT_NE(bad.find("time_s"), std::string::npos) << bad;
  EXPECT_NE(err("op,dtype,device,inputs,output,attrs,time_s\nrelu,fp32,d,4\n").find("c.csv:2"),
            std::string::npos);
}

TEST(ProfileFiles, CsvAndHdf5RoundTrip) {
  ProfileDb db;
  ProfileRow r = row("matmul", "64x256;256x256", "64x256", 1.25e-4, "V100-SXM2");
  r.n = 2;
  r.m = 10;
  r.t_n_s = 3e-4;
  r.t_m_s = 1.3e-3;
  r.samples = 5;
  r.stdev_s = 1e-6;
  r.source = "test";
  db.add(r);
  db.add(row("relu", "1024", "1024", 2e-6, "V100-SXM2"));
  std::string dir = testing::make_temp_dir("profile");
  write_profile_csv(dir + "/db.csv", db, {"made by a test"});
  write_profile_h5(dir + "/db.h5", db, "made by a test");
  for (const char* f : {"/db.csv", "/db.h5"}) {
    ProfileDb back = load_profile_db(dir + f);  // tells the two formats apart by content
    ASSERT_EQ(back.size(), 2u) << f;
    const ProfileRow& b = back.rows()[0];
    EXPECT_EQ(b.op, "matmul");
    EXPECT_EQ(b.device, "V100-SXM2");
    EXPECT_EQ(b.inputs, "64x256;256x256");
    EXPECT_NEAR(b.time_s, 1.25e-4, 1e-12);
    EXPECT_EQ(b.n, 2);
    EXPECT_EQ(b.m, 10);
    EXPECT_NEAR(b.t_m_s, 1.3e-3, 1e-12);
    EXPECT_EQ(b.samples, 5);
    EXPECT_EQ(b.source, "test");
  }
  EXPECT_EQ(read_profile_h5_provenance(dir + "/db.h5"), "made by a test");
  EXPECT_THROW(read_profile_h5(dir + "/db.csv"), InputError);
  EXPECT_THROW(load_profile_db(dir + "/missing.csv"), InputError);
}

// A damaged profile database is the user's input: an InputError naming the file, never a crash
// inside libhdf5 or an internal error.
TEST(ProfileFiles, DamagedFilesAreInputErrorsNamingTheFile) {
  ProfileDb db;
  for (int i = 1; i <= 20; ++i)
    db.add(row("relu", std::to_string(i * 64), std::to_string(i * 64), 1e-6 * i, "V100-SXM2"));
  const std::string dir = testing::make_temp_dir("profile");
  write_profile_h5(dir + "/db.h5", db, "made by a test");
  const std::string bytes = testing::read_file(dir + "/db.h5");
  auto expect_input_error = [&](const std::string& path) {
    try {
      load_profile_db(path);
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }  // other exceptions escape and fail the test; reading cleanly is allowed
  };
  for (size_t cut :
       {size_t{8}, size_t{100}, bytes.size() / 3, bytes.size() / 2, bytes.size() - 1}) {
    const std::string path = dir + "/cut" + std::to_string(cut) + ".h5";
    testing::write_file(path, bytes.substr(0, cut));
    EXPECT_THROW(load_profile_db(path), InputError) << path;
    expect_input_error(path);
  }
  for (size_t i = 0; i < 30; ++i) {
    std::string bad = bytes;
    bad[(i * 7919 + 13) % bad.size()] ^= 0x5a;
    bad[(i * 104729 + 101) % bad.size()] ^= 0x81;
    const std::string path = dir + "/flip" + std::to_string(i) + ".h5";
    testing::write_file(path, bad);
    expect_input_error(path);
  }
  const std::string huge = dir + "/huge.csv";
  testing::write_file(huge,
                      "op,dtype,device,inputs,output,attrs,time_s,n\n"
                      "relu,fp32,cpu,64,64,,1e-6,99999999999999999999999\n");
  try {
    load_profile_db(huge);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("column n: 99999999999999999999999 does not fit"),
              std::string::npos)
        << e.what();
  }
}

std::string shipped_cpu_db() {
  for (const auto& e : std::filesystem::directory_iterator(testing::source_path("models/profiles")))
    if (e.path().extension() == ".csv" && e.path().filename().string().rfind("cpu-", 0) == 0)
      return e.path().string();
  return "";
}

TEST(ShippedCpuDb, LoadsAndAnswersLookups) {
  std::string path = shipped_cpu_db();
  ASSERT_FALSE(path.empty()) << "no models/profiles/cpu-*.csv";
  ProfileDb db = read_profile_csv(path);
  ASSERT_GE(db.size(), 100u);
  std::string device = db.rows()[0].device;
  for (const auto& r : db.rows()) {
    EXPECT_EQ(r.device, device);
    EXPECT_GT(r.time_s, 0);
    EXPECT_EQ(r.n, 2);
    EXPECT_GT(r.m, r.n);
    // Every row satisfies eq. 1 of Tianshu with its own T_N and T_M.
    EXPECT_NEAR(r.time_s, nm_op_time(r.t_n_s, r.t_m_s, r.n, r.m), 1e-6 * r.time_s + 1e-11);
  }

  // The cost model finds the measured rows: exactly, and between two measured sizes.
  DeviceSpec cpu = device_spec("V100-SXM2");  // any spec; only its name matters for the DB
  cpu.name = device;
  cpu.aliases.clear();
  CostModelOptions o;
  o.db = std::make_shared<ProfileDb>(db);
  CostModel cm(o);
  ModelOp mm = matmul(128, 256, 256);
  OpEstimate exact = cm.estimate(mm, cpu);
  EXPECT_EQ(exact.source, EstimateSource::kDatabase);
  ModelOp lo = matmul(64, 256, 256), hi = matmul(256, 256, 256);
  double t_lo = cm.estimate(lo, cpu).seconds, t_hi = cm.estimate(hi, cpu).seconds;
  OpEstimate between = cm.estimate(matmul(96, 256, 256), cpu);
  EXPECT_EQ(between.source, EstimateSource::kInterpolated);
  EXPECT_GT(between.seconds, std::min(t_lo, exact.seconds));
  EXPECT_LT(between.seconds, std::max(exact.seconds, t_lo));
  EXPECT_LT(t_lo, t_hi);  // more rows, more time
  // An op the CPU database never measured falls through to the analytic model.
  ModelOp odd = matmul(3, 5, 7);
  EXPECT_EQ(cm.estimate(odd, cpu).source, EstimateSource::kKernelModel);
}

TEST(ShippedCpuDb, ImportCommandCompilesItToHdf5) {
  const char* bin = std::getenv("ORRERY_BIN");
  if (!bin) GTEST_SKIP() << "ORRERY_BIN not set (run through ctest)";
  std::string path = shipped_cpu_db();
  ASSERT_FALSE(path.empty());
  std::string dir = testing::make_temp_dir("import");
  std::string cmd = std::string(bin) + " profile import " + path + " -o " + dir + "/cpu.h5 > " +
                    dir + "/out.txt 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << testing::read_file(dir + "/out.txt");
  ProfileDb csv = read_profile_csv(path);
  ProfileDb h5 = read_profile_h5(dir + "/cpu.h5");
  ASSERT_EQ(h5.size(), csv.size());
  for (size_t i = 0; i < csv.size(); ++i) {
    EXPECT_EQ(h5.rows()[i].inputs, csv.rows()[i].inputs);
    EXPECT_NEAR(h5.rows()[i].time_s, csv.rows()[i].time_s, 1e-9 * csv.rows()[i].time_s);
  }
  EXPECT_NE(testing::read_file(dir + "/out.txt").find("rows"), std::string::npos);
}

}  // namespace
}  // namespace orrery
