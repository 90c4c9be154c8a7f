#include "common/atomic_file.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "common/errors.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

namespace fs = std::filesystem;

// Lowers the file-size limit (as `ulimit -f` does) for the scope; SIGXFSZ must not kill us.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    getrlimit(RLIMIT_FSIZE, &saved_);
    rlimit lower = saved_;
    lower.rlim_cur = bytes;
    EXPECT_EQ(setrlimit(RLIMIT_FSIZE, &lower), 0);
  }
  ~FileSizeLimit() { setrlimit(RLIMIT_FSIZE, &saved_); }

 private:
  rlimit saved_{};
};

void write_text(const std::string& tmp, size_t bytes) {
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) throw std::runtime_error("cannot create " + tmp);
  const std::string block(4096, 'x');
  bool ok = true;
  for (size_t done = 0; done < bytes && ok; done += block.size())
    ok = std::fwrite(block.data(), 1, block.size(), f) == block.size();
  ok = std::fclose(f) == 0 && ok;
  if (!ok) throw std::runtime_error("write " + tmp + " failed");
}

TEST(AtomicFile, WriteErrorPastTheFileSizeLimitIsNamedAndLeavesNothing) {
  const std::string dir = testing::make_temp_dir("atomic");
  const std::string path = dir + "/out.csv";
  testing::write_file(path, "the previous result\n");
  {
    FileSizeLimit limit(16384);
    try {
      write_atomically(path, [](const std::string& tmp) { write_text(tmp, 1 << 20); });
      ADD_FAILURE() << "no error";
    } catch (const InputError& e) {
      const std::string msg = e.what();
      EXPECT_EQ(msg.rfind(path + ": cannot write: ", 0), 0u) << msg;
      EXPECT_NE(msg.find("ulimit -f"), std::string::npos) << msg;
    }
  }
  EXPECT_EQ(testing::read_file(path), "the previous result\n");  // untouched
  int entries = 0;
  for (const auto& e : fs::directory_iterator(dir)) entries += e.exists() ? 1 : 0;
  EXPECT_EQ(entries, 1);  // no temp file left
}

TEST(AtomicFile, ProgrammingErrorsPassThroughUnchanged) {
  const std::string path = testing::make_temp_dir("atomic") + "/out.h5";
  EXPECT_THROW(
      write_atomically(path, [](const std::string&) { throw std::invalid_argument("bug"); }),
      std::invalid_argument);
  EXPECT_FALSE(fs::exists(path));
}

TEST(AtomicFile, SuccessRenamesIntoPlace) {
  const std::string dir = testing::make_temp_dir("atomic");
  write_atomically(dir + "/out.txt", [](const std::string& tmp) { write_text(tmp, 8192); });
  EXPECT_EQ(fs::file_size(dir + "/out.txt"), 8192u);
  int entries = 0;
  for (const auto& e : fs::directory_iterator(dir)) entries += e.exists() ? 1 : 0;
  EXPECT_EQ(entries, 1);
}

}  // namespace
}  // namespace orrery
