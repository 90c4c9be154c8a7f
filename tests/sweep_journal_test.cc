// The sweep journal survives crashes (a torn or corrupt tail is dropped, appends continue after
// the last intact record), and the child pool turns a child's result, exception-free failure,
// abort or kill into something the sweep can record.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "common/errors.h"
#include "sweeps/child_pool.h"
#include "sweeps/journal.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

using testing::make_temp_dir;
using testing::read_file;
using testing::write_file;

PointOutcome outcome(int i, bool ok) {
  return {i, 0x1000u + static_cast<uint64_t>(i), ok, ok ? "" : "boom " + std::to_string(i),
          ok ? std::string(100 + i, 'x') : "", false, {}};
}

TEST(SweepJournal, RecordsComeBackInOrder) {
  auto path = make_temp_dir("journal") + "/out.h5.journal";
  {
    std::vector<PointOutcome> loaded;
    Journal j(path, &loaded);
    EXPECT_TRUE(loaded.empty());
    for (int i = 0; i < 5; ++i) j.append(outcome(i, i != 2));
    j.sync();
  }
  std::vector<PointOutcome> loaded;
  Journal j(path, &loaded);
  ASSERT_EQ(loaded.size(), 5u);
  EXPECT_EQ(loaded[2].ok, false);
  EXPECT_EQ(loaded[2].error, "boom 2");
  EXPECT_EQ(loaded[4].result_bytes, std::string(104, 'x'));
  EXPECT_EQ(loaded[3].hash, 0x1003u);
  EXPECT_EQ(j.dropped(), 0);
}

TEST(SweepJournal, AFifoInItsPlaceIsRefusedNotReadForever) {
  auto path = make_temp_dir("journal") + "/out.h5.journal";
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  std::vector<PointOutcome> loaded;
  try {
    Journal j(path, &loaded);
    ADD_FAILURE() << "opened a FIFO";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(path + ": the sweep journal must be a regular file"),
              std::string::npos)
        << e.what();
  }
}

TEST(SweepJournal, TornTailIsDroppedAndAppendsFollowTheLastIntactRecord) {
  auto path = make_temp_dir("journal") + "/out.h5.journal";
  {
    std::vector<PointOutcome> loaded;
    Journal j(path, &loaded);
    for (int i = 0; i < 3; ++i) j.append(outcome(i, true));
  }
  // A crash in the middle of the third record.
  auto size = std::filesystem::file_size(path);
  std::filesystem::resize_file(path, size - 40);
  {
    std::vector<PointOutcome> loaded;
    Journal j(path, &loaded);
    ASSERT_EQ(loaded.size(), 2u);
    EXPECT_EQ(j.dropped(), 1);
    j.append(outcome(7, true));
  }
  std::vector<PointOutcome> loaded;
  Journal j(path, &loaded);
  ASSERT_EQ(loaded.size(), 3u);
  EXPECT_EQ(loaded[2].index, 7);
}

TEST(SweepJournal, CorruptRecordEndsTheJournal) {
  auto path = make_temp_dir("journal") + "/out.h5.journal";
  {
    std::vector<PointOutcome> loaded;
    Journal j(path, &loaded);
    for (int i = 0; i < 3; ++i) j.append(outcome(i, true));
  }
  std::string bytes = read_file(path);
  bytes[bytes.size() - 5] ^= 0x55;  // inside the last record's payload
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  std::vector<PointOutcome> loaded;
  Journal j(path, &loaded);
  EXPECT_EQ(loaded.size(), 2u);
}

TEST(SweepJournal, OtherFilesAreNotTouched) {
  auto path = make_temp_dir("journal") + "/notes.txt";
  write_file(path, "my notes\n");
  std::vector<PointOutcome> loaded;
  EXPECT_THROW(Journal(path, &loaded), InputError);
  EXPECT_EQ(read_file(path), "my notes\n");
}

TEST(SweepOutcome, RoundTripsAndRejectsGarbage) {
  PointOutcome o = outcome(3, false);
  PointOutcome back = deserialize_outcome(serialize_outcome(o));
  EXPECT_EQ(back.index, 3);
  EXPECT_EQ(back.error, "boom 3");
  EXPECT_THROW(deserialize_outcome("nonsense"), std::runtime_error);
  std::string cut = serialize_outcome(outcome(4, true));
  EXPECT_THROW(deserialize_outcome(cut.substr(0, cut.size() - 1)), std::runtime_error);
}

std::vector<ChildExit> wait_all(ChildPool& pool) {
  std::vector<ChildExit> all;
  while (pool.running() > 0)
    for (auto& e : pool.wait(-1)) all.push_back(std::move(e));
  return all;
}

TEST(SweepChildPool, ChildrenHandBackResultsAndCrashesAreReported) {
  ChildPool pool(3);
  pool.start(1, [] { return std::string(200000, 'r'); });  // more than a pipe holds
  pool.start(2, [] {
    std::fprintf(stderr, "xbt_assert failed: something internal\n");
    std::abort();
    return std::string();
  });
  pool.start(3, [] {
    ::_exit(7);
    return std::string();
  });
  EXPECT_TRUE(pool.full());
  auto exits = wait_all(pool);
  ASSERT_EQ(exits.size(), 3u);
  for (const auto& e : exits) {
    if (e.task == 1) {
      EXPECT_TRUE(e.completed);
      EXPECT_EQ(e.payload.size(), 200000u);
    } else if (e.task == 2) {
      EXPECT_FALSE(e.completed);
      EXPECT_NE(e.failure.find("killed by SIGABRT"), std::string::npos) << e.failure;
      EXPECT_NE(e.failure.find("xbt_assert failed: something internal"), std::string::npos)
          << e.failure;
    } else {
      EXPECT_FALSE(e.completed);
      EXPECT_NE(e.failure.find("exited with status 7"), std::string::npos) << e.failure;
    }
  }
}

TEST(SweepChildPool, KillAllStopsRunningChildren) {
  ChildPool pool(2);
  pool.start(5, [] {
    for (;;) ::pause();
    return std::string();
  });
  auto killed = pool.kill_all();
  ASSERT_EQ(killed.size(), 1u);
  EXPECT_EQ(killed[0], 5);
  EXPECT_EQ(pool.running(), 0);
}

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  sched_getaffinity(0, sizeof set, &set);
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

TEST(SweepChildPool, ChildrenAreBoundOnePerCpuAndRanksOnANodeInterleave) {
  std::vector<int> cpus = allowed_cpus();
  if (cpus.size() < 2) GTEST_SKIP() << "needs two CPUs";
  EXPECT_TRUE(child_cpus(1, 0, 1).empty());  // one child at a time on the node: no binding
  EXPECT_EQ(child_cpus(2, 0, 1), (std::vector<int>{cpus[0], cpus[1]}));
  // The second of two single-child ranks on a node takes the next CPU.
  EXPECT_EQ(child_cpus(1, 1, 2), (std::vector<int>{cpus[1 % cpus.size()]}));

  ChildPool pool(2, child_cpus(2, 0, 1));
  auto where = [] {
    cpu_set_t set;
    CPU_ZERO(&set);
    sched_getaffinity(0, sizeof set, &set);
    std::string s;
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) s += std::to_string(c) + " ";
    ::usleep(20000);  // both children run at once
    return s;
  };
  pool.start(0, where);
  pool.start(1, where);
  std::set<std::string> seen;
  for (const auto& e : wait_all(pool)) seen.insert(e.payload);
  EXPECT_EQ(seen,
            (std::set<std::string>{std::to_string(cpus[0]) + " ", std::to_string(cpus[1]) + " "}));
}

}  // namespace
}  // namespace orrery
