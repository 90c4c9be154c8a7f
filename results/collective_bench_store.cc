#include "results/collective_bench_store.h"

#include <hdf5.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "common/atomic_file.h"
#include "common/errors.h"
#include "common/h5_util.h"

namespace orrery {
namespace {

struct BenchRow {
  double size_bytes;
  long long count;
  double time_s;
  double algbw;  // bytes/s
  double busbw;  // bytes/s
  const char* algorithm;
  const char* protocol;
  int channels;
};

void write_h5(const std::string& tmp, const std::vector<CollectiveBenchRow>& rows,
              const CollectiveBenchOptions& opt, const std::string& description) {
  using namespace h5;
  Handle file = check(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose,
                      "create " + tmp);
  Handle str = string_type();
  Compound type(sizeof(BenchRow));
  type.add("size_bytes", HOFFSET(BenchRow, size_bytes), H5T_NATIVE_DOUBLE)
      .add("count", HOFFSET(BenchRow, count), H5T_NATIVE_LLONG)
      .add("time_s", HOFFSET(BenchRow, time_s), H5T_NATIVE_DOUBLE)
      .add("algbw_Bps", HOFFSET(BenchRow, algbw), H5T_NATIVE_DOUBLE)
      .add("busbw_Bps", HOFFSET(BenchRow, busbw), H5T_NATIVE_DOUBLE)
      .add("algorithm", HOFFSET(BenchRow, algorithm), str.get())
      .add("protocol", HOFFSET(BenchRow, protocol), str.get())
      .add("channels", HOFFSET(BenchRow, channels), H5T_NATIVE_INT);
  std::vector<BenchRow> out;
  for (const auto& r : rows)
    out.push_back({r.bytes, static_cast<long long>(r.count), r.seconds, r.algbw, r.busbw,
                   collective_algo_name(r.choice.algo), collective_protocol_name(r.choice.protocol),
                   r.choice.channels});
  Handle file_type = type.file_type();
  Handle dset = create_dataset(file.get(), "bench", file_type.get(), out.size());
  if (!out.empty()) write_rows(dset.get(), type.memory_type(), 0, out.size(), out.data());
  write_string_attr(file.get(), "collective", collective_type_name(opt.type));
  write_string_attr(file.get(), "datatype", opt.datatype);
  write_string_attr(file.get(), "mode", opt.analytical ? "analytical" : "flow");
  write_string_attr(file.get(), "algorithm", collective_algo_name(opt.algo));
  write_string_attr(file.get(), "protocol", collective_protocol_name(opt.protocol));
  write_string_attr(file.get(), "description", description);
}

}  // namespace

void write_collective_bench(const std::string& path, const std::vector<CollectiveBenchRow>& rows,
                            const CollectiveBenchOptions& opt, const std::string& description) {
  const std::string ext = std::filesystem::path(path).extension().string();
  if (ext != ".csv" && ext != ".h5")
    throw InputError(path + ": expected a .csv or .h5 output file");
  write_atomically(path, [&](const std::string& tmp) {
    if (ext == ".csv") {
      std::ofstream f(tmp);
      f << collective_bench_csv(rows, opt);
      if (!f) throw InputError(tmp + ": cannot write");
      return;
    }
    write_h5(tmp, rows, opt, description);
  });
}

}  // namespace orrery
