#include "results/output_lock.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "common/errors.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

namespace fs = std::filesystem;

TEST(OutputLock, SecondWriterRefusesNamingTheFirst) {
  const std::string out = testing::make_temp_dir("lock") + "/sweep.h5";
  auto first = std::make_unique<OutputLock>(out);
  EXPECT_TRUE(fs::exists(out + ".lock"));
  // flock locks belong to an open file, so a second lock from this same process conflicts too.
  try {
    OutputLock second(out);
    ADD_FAILURE() << "the second lock was granted";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind(out + ": another Orrery process is writing this output (pid " +
                            std::to_string(getpid()) + " on host ",
                        0),
              0u)
        << msg;
  }
  first.reset();
  EXPECT_FALSE(fs::exists(out + ".lock"));  // released and removed
  OutputLock again(out);                    // and free for the next writer
}

TEST(OutputLock, StaleLockFileOfADeadWriterDoesNotBlock) {
  const std::string out = testing::make_temp_dir("lock") + "/sweep.h5";
  // What a killed writer leaves: the file, without the lock (the kernel dropped it).
  testing::write_file(out + ".lock", "pid 1 on host elsewhere since 2020-01-01 00:00:00 UTC\n");
  OutputLock lock(out);
  const std::string content = testing::read_file(out + ".lock");
  EXPECT_EQ(content.rfind("pid " + std::to_string(getpid()) + " on host ", 0), 0u) << content;
}

TEST(OutputLock, UncreatableLockFileIsAnInputError) {
  const std::string dir = testing::make_temp_dir("lock");
  EXPECT_THROW(OutputLock(dir + "/missing/sweep.h5"), InputError);
}

}  // namespace
}  // namespace orrery
