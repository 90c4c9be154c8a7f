#include "common/units.h"

#include <gtest/gtest.h>

namespace orrery {
namespace {

TEST(Units, BandwidthInBitsAndBytes) {
  double v;
  ASSERT_TRUE(parse_bandwidth("25Gbps", &v));
  EXPECT_DOUBLE_EQ(v, 3.125e9);
  ASSERT_TRUE(parse_bandwidth("10 GB/s", &v));
  EXPECT_DOUBLE_EQ(v, 1e10);
  ASSERT_TRUE(parse_bandwidth("15.75GBps", &v));
  EXPECT_DOUBLE_EQ(v, 15.75e9);
  ASSERT_TRUE(parse_bandwidth("1e9", &v));
  EXPECT_DOUBLE_EQ(v, 1e9);
  EXPECT_FALSE(parse_bandwidth("fast", &v));
  EXPECT_FALSE(parse_bandwidth("10 parsecs", &v));
}

TEST(Units, TimeSizeFlops) {
  double v;
  ASSERT_TRUE(parse_time("936.25ns", &v));
  EXPECT_DOUBLE_EQ(v, 936.25e-9);
  ASSERT_TRUE(parse_time("2us", &v));
  EXPECT_DOUBLE_EQ(v, 2e-6);
  ASSERT_TRUE(parse_size("25MiB", &v));
  EXPECT_DOUBLE_EQ(v, 25.0 * 1048576);
  ASSERT_TRUE(parse_size("4MB", &v));
  EXPECT_DOUBLE_EQ(v, 4e6);
  ASSERT_TRUE(parse_flops("15.7TFLOP/s", &v));
  EXPECT_DOUBLE_EQ(v, 15.7e12);
  EXPECT_FALSE(parse_time("5 parsecs", &v));
  ASSERT_TRUE(parse_frequency("1410MHz", &v));
  EXPECT_DOUBLE_EQ(v, 1410e6);
  ASSERT_TRUE(parse_frequency("1.98 GHz", &v));
  EXPECT_DOUBLE_EQ(v, 1.98e9);
  EXPECT_FALSE(parse_frequency("1410rpm", &v));
}

TEST(Units, Formatting) {
  EXPECT_EQ(format_time(0.0123), "12.3 ms");
  EXPECT_EQ(format_bandwidth(3.125e9), "3.125 GB/s");
  EXPECT_EQ(format_size(25.0 * 1048576), "25 MiB");
  EXPECT_EQ(format_grouped(1234567.4), "1,234,567");
  EXPECT_EQ(format_grouped(718000), "718,000");
  EXPECT_EQ(format_grouped(999), "999");
  EXPECT_EQ(format_grouped(-123456), "-123,456");
  EXPECT_EQ(format_grouped(-12), "-12");
}

}  // namespace
}  // namespace orrery
