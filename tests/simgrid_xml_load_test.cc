#include "platforms/simgrid_xml_load.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>

#include "common/child_process.h"
#include "common/errors.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

std::string platform(const std::string& body) {
  return "<?xml version='1.0'?>\n"
         "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
         "<platform version=\"4.1\">\n"
         "<zone id=\"z\" routing=\"Full\">\n"
         "<host id=\"h0\" speed=\"1Gf\"/>\n"
         "<host id=\"h1\" speed=\"1Gf\"/>\n" +
         body + "</zone>\n</platform>\n";
}

// Loads `file` into a fresh SimGrid engine (one per process: each load runs in its own child)
// and returns the InputError's message, "" when it loaded.
std::string error_of_load(const std::string& file) {
  try {
    run_in_child(
        [&] {
          int argc = 2;
          char arg0[] = "test";
          char arg1[] = "--log=root.thresh:critical";
          char* argv[] = {arg0, arg1, nullptr};
          simgrid::s4u::Engine engine(&argc, argv);
          load_xml_platform(engine, file);
          return std::string();
        },
        "test child");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(SimgridXmlLoad, ParseErrorsAreInputErrorsWithFileAndLine) {
  const std::string dir = testing::make_temp_dir("xml");
  const std::string file = dir + "/bad.xml";
  testing::write_file(file, platform("<host id=\"h2\" speed=\"1Gf\"\n"));
  const std::string e = error_of_load(file);
  EXPECT_EQ(e.rfind(file + ":8: SimGrid XML platform: ", 0), 0u) << e;

  const std::string unit = dir + "/unit.xml";
  testing::write_file(unit, platform("<link id=\"l\" bandwidth=\"1xyz\" latency=\"1us\"/>\n"));
  EXPECT_NE(error_of_load(unit).find("unknown unit: xyz"), std::string::npos)
      << error_of_load(unit);
}

TEST(SimgridXmlLoad, AFileThatCrashesSimgridIsTheUsersError) {
  const std::string file = testing::make_temp_dir("xml") + "/twice.xml";
  // SimGrid segfaults on a second one-way route between the same hosts.
  const std::string route =
      "<route src=\"h0\" dst=\"h1\" symmetrical=\"NO\"><link_ctn id=\"l\"/></route>\n";
  testing::write_file(
      file, platform("<link id=\"l\" bandwidth=\"1GBps\" latency=\"1us\"/>\n" + route + route));
  const std::string e = error_of_load(file);
  EXPECT_EQ(e.rfind(file + ": SimGrid XML platform: SimGrid crashed", 0), 0u) << e;
}

TEST(SimgridXmlLoad, OnlyRegularFiles) {
  const std::string dir = testing::make_temp_dir("xml");
  const std::string fifo = dir + "/p.xml";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_NE(error_of_load(fifo).find("must be a regular file"), std::string::npos);
  const std::string good = dir + "/good.xml";
  testing::write_file(good,
                      platform("<link id=\"l\" bandwidth=\"1GBps\" latency=\"1us\"/>\n"
                               "<route src=\"h0\" dst=\"h1\"><link_ctn id=\"l\"/></route>\n"));
  EXPECT_EQ(error_of_load(good), "");
}

}  // namespace
}  // namespace orrery
