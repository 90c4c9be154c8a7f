// common/child_process.h: a program's output comes back, and its failure names what ran, with
// Orrery's exit status 2 as an input error.
#include "common/child_process.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "common/errors.h"

namespace orrery {
namespace {

TEST(RunProgram, ReturnsWhatTheProgramPrinted) {
  EXPECT_EQ(run_program({"/bin/sh", "-c", "echo one; echo two >&2; echo three"}, "sh"),
            "one\nthree\n");
}

TEST(RunProgram, FailuresCarryTheLastLineOfStderr) {
  try {
    run_program({"/bin/sh", "-c", "echo early >&2; echo 'bad input: x.csv:3' >&2; exit 2"}, "sh");
    FAIL() << "status 2 did not throw";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "sh: bad input: x.csv:3");
  }
  try {
    run_program({"/bin/sh", "-c", "exit 1"}, "sh");
    FAIL() << "status 1 did not throw";
  } catch (const InputError&) {
    FAIL() << "status 1 is not bad input";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("exited with status 1"), std::string::npos) << e.what();
  }
  try {
    run_program({"/nonexistent/program"}, "missing");
    FAIL() << "a missing program did not throw";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot run /nonexistent/program"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace orrery
