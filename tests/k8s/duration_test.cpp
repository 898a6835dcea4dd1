// Go durations parse and print exactly as Go's time package does.
#include "k8s/duration.hpp"

#include <cstdint>

#include <gtest/gtest.h>

using namespace std::chrono;
using aop::k8s::format_go_duration;
using aop::k8s::parse_go_duration;

TEST(GoDuration, ParsesLikeGo) {
  auto ns = [](std::string_view s) {
    auto d = parse_go_duration(s);
    return d ? *d : nanoseconds{-42};
  };
  EXPECT_EQ(ns("0"), nanoseconds{0});
  EXPECT_EQ(ns("30s"), seconds{30});
  EXPECT_EQ(ns("2m"), minutes{2});
  EXPECT_EQ(ns("1h2m3s"), hours{1} + minutes{2} + seconds{3});
  EXPECT_EQ(ns("1.5h"), minutes{90});
  EXPECT_EQ(ns(".5s"), milliseconds{500});
  EXPECT_EQ(ns("1.s"), seconds{1});
  EXPECT_EQ(ns("+5s"), seconds{5});
  EXPECT_EQ(ns("-5s"), seconds{-5});
  EXPECT_EQ(ns("500ms"), milliseconds{500});
  EXPECT_EQ(ns("10us"), nanoseconds{10'000});
  EXPECT_EQ(ns("10\xC2\xB5s"), nanoseconds{10'000});
  EXPECT_EQ(ns("10\xCE\xBCs"), nanoseconds{10'000});
  EXPECT_EQ(ns("7ns"), nanoseconds{7});
  EXPECT_EQ(ns("0s"), nanoseconds{0});
  EXPECT_EQ(ns("9223372036854775807ns"), nanoseconds{INT64_MAX});
  EXPECT_EQ(ns("-9223372036854775808ns"), nanoseconds{INT64_MIN});
  EXPECT_EQ(ns("1.0000000000000000000000001s"), seconds{1});
}

TEST(GoDuration, RejectsLikeGo) {
  for (std::string_view bad : {"", "s", "5", "30", ".s", "1.2.3s", "5 s", "5sec", "1d", "-", "+",
                               "3h-2m", "9223372036854775808ns", "2562048h", "1e3s", "5S"}) {
    auto d = parse_go_duration(bad);
    ASSERT_FALSE(d.has_value()) << bad;
    EXPECT_FALSE(d.error().message.empty()) << bad;
  }
  EXPECT_NE(parse_go_duration("5").error().message.find("missing unit"), std::string::npos);
  EXPECT_NE(parse_go_duration("5d").error().message.find("unknown unit \"d\""), std::string::npos);
}

TEST(GoDuration, FormatsLikeGo) {
  EXPECT_EQ(format_go_duration(minutes(10)), "10m0s");
  EXPECT_EQ(format_go_duration(seconds(15)), "15s");
  EXPECT_EQ(format_go_duration(milliseconds(1500)), "1.5s");
  EXPECT_EQ(format_go_duration(milliseconds(5)), "5ms");
  EXPECT_EQ(format_go_duration(microseconds(10)), "10\xC2\xB5s");
  EXPECT_EQ(format_go_duration(nanoseconds(7)), "7ns");
  EXPECT_EQ(format_go_duration(seconds(1000)), "16m40s");
  EXPECT_EQ(format_go_duration(hours(2)), "2h0m0s");
  EXPECT_EQ(format_go_duration(-(hours(2) + minutes(3))), "-2h3m0s");
  EXPECT_EQ(format_go_duration(nanoseconds(0)), "0s");
  EXPECT_EQ(format_go_duration(nanoseconds(INT64_MIN)), "-2562047h47m16.854775808s");
}

TEST(GoDuration, FormattedValuesParseBack) {
  for (const nanoseconds d :
       std::initializer_list<nanoseconds>{nanoseconds(1), nanoseconds(1500), milliseconds(250),
                                          seconds(90), hours(26) + nanoseconds(1), -minutes(3)}) {
    auto back = parse_go_duration(format_go_duration(d));
    ASSERT_TRUE(back.has_value()) << format_go_duration(d);
    EXPECT_EQ(*back, d);
  }
}
