// Structured log records: logfmt and JSON rendering, quoting and escaping, levels.
#include "net/log.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include <cstdio>
#include <limits>

namespace aop::net::log {
namespace {

constexpr std::string_view kTs = "2024-05-01T12:00:00.000Z";

TEST(Log, TextRecordIsLogfmt) {
  const std::string line = format_record(
      Format::text, Level::info, "reconciled",
      {{"controller", "grafanaagent"}, {"count", 3}, {"ok", true}, {"ratio", 0.5}}, kTs);
  EXPECT_EQ(line,
            "ts=2024-05-01T12:00:00.000Z level=info msg=reconciled controller=grafanaagent "
            "count=3 ok=true ratio=0.5\n");
}

TEST(Log, TextQuotesValuesWithSpacesQuotesAndEquals) {
  const std::string line = format_record(
      Format::text, Level::warn, "watch failed",
      {{"error", "connection reset by peer"}, {"path", "a=b"}, {"q", "say \"hi\""}, {"empty", ""}},
      kTs);
  EXPECT_EQ(line,
            "ts=2024-05-01T12:00:00.000Z level=warn msg=\"watch failed\" "
            "error=\"connection reset by peer\" path=\"a=b\" q=\"say \\\"hi\\\"\" empty=\"\"\n");
}

TEST(Log, UrlCredentialsAreRedactedInEveryFormat) {
  for (const auto format : {Format::text, Format::json}) {
    const std::string line = format_record(
        format, Level::warn, "GET https://u:pw1@h/x failed",
        {{"url", "http://user:pw2@host/m?token=tk3&page=2"}, {"error", "dial http://h/?sig=s4"}},
        kTs);
    for (const auto* secret : {"pw1", "pw2", "user", "tk3", "s4"}) {
      EXPECT_EQ(line.find(secret), std::string::npos) << secret << " in " << line;
    }
    EXPECT_NE(line.find("http://REDACTED@host/m?token=REDACTED&page=2"), std::string::npos) << line;
  }
}

TEST(Log, TextEscapesNewlinesSoARecordStaysOneLine) {
  const std::string line =
      format_record(Format::text, Level::error, "bad\nthing", {{"detail", "x\ny\tz\x01"}}, kTs);
  EXPECT_EQ(line.find('\n'), line.size() - 1);
  EXPECT_NE(line.find(R"(msg="bad\nthing")"), std::string::npos) << line;
  EXPECT_NE(line.find(R"(detail="x\ny\tz\u0001")"), std::string::npos) << line;
}

TEST(Log, JsonRecordParsesBackToTheFields) {
  const std::string line = format_record(Format::json, Level::debug, "request \"done\"",
                                         {{"status", 200},
                                          {"bytes", 18446744073709551615ull},
                                          {"neg", -5},
                                          {"secs", 0.25},
                                          {"path", "/api/v1/pods?watch=1"},
                                          {"note", "caf\xc3\xa9\n\\"},
                                          {"tls", false}},
                                         kTs);
  ASSERT_EQ(line.back(), '\n');
  const auto v = boost::json::parse(line);
  const auto& o = v.as_object();
  EXPECT_EQ(o.at("ts").as_string(), kTs);
  EXPECT_EQ(o.at("level"), "debug");
  EXPECT_EQ(o.at("msg"), "request \"done\"");
  EXPECT_EQ(o.at("status"), 200);
  EXPECT_EQ(o.at("bytes").as_uint64(), 18446744073709551615ull);
  EXPECT_EQ(o.at("neg"), -5);
  EXPECT_EQ(o.at("secs"), 0.25);
  EXPECT_EQ(o.at("path"), "/api/v1/pods?watch=1");
  EXPECT_EQ(o.at("note"), "caf\xc3\xa9\n\\");
  EXPECT_EQ(o.at("tls"), false);
}

TEST(Log, JsonStaysValidForNonFiniteNumbers) {
  const std::string line = format_record(Format::json, Level::info, "m",
                                         {{"nan", std::numeric_limits<double>::quiet_NaN()},
                                          {"inf", std::numeric_limits<double>::infinity()}},
                                         kTs);
  const auto v = boost::json::parse(line);
  EXPECT_EQ(v.at("nan"), "NaN");
  EXPECT_EQ(v.at("inf"), "+Inf");
}

TEST(Log, ShortestRoundTripNumbers) {
  const std::string line = format_record(Format::text, Level::info, "m", {{"x", 0.1}}, kTs);
  EXPECT_NE(line.find("x=0.1\n"), std::string::npos) << line;
}

TEST(Log, ParsesLevelsAndFormats) {
  Level level{};
  EXPECT_TRUE(parse_level("debug", level));
  EXPECT_EQ(level, Level::debug);
  EXPECT_TRUE(parse_level("warning", level));
  EXPECT_EQ(level, Level::warn);
  EXPECT_FALSE(parse_level("verbose", level));
  Format format{};
  EXPECT_TRUE(parse_format("json", format));
  EXPECT_EQ(format, Format::json);
  EXPECT_TRUE(parse_format("text", format));
  EXPECT_EQ(format, Format::text);
  EXPECT_FALSE(parse_format("xml", format));
}

TEST(Log, LevelFiltersRecordsAndOutputCanBeRedirected) {
  std::FILE* out = std::tmpfile();
  ASSERT_NE(out, nullptr);
  set_output(out);
  configure(Level::warn, Format::json);
  EXPECT_FALSE(enabled(Level::info));
  EXPECT_TRUE(enabled(Level::error));
  info("hidden");
  warn("shown", {{"k", "v"}});
  set_output(nullptr);
  configure(Level::info, Format::text);

  std::rewind(out);
  char buf[512] = {};
  const std::size_t n = std::fread(buf, 1, sizeof buf - 1, out);
  std::fclose(out);
  const std::string written(buf, n);
  EXPECT_EQ(written.find("hidden"), std::string::npos);
  ASSERT_NE(written.find("shown"), std::string::npos);
  const auto v = boost::json::parse(written);
  EXPECT_EQ(v.at("level"), "warn");
  EXPECT_EQ(v.at("k"), "v");
}

}  // namespace
}  // namespace aop::net::log
