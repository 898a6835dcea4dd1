// The watch-stream framer: values come out whole whatever the read boundaries are, and
// bad input becomes an error with a byte offset.
#include "net/json_stream.hpp"

#include <gtest/gtest.h>

#include <random>

#include "net/error.hpp"
#include "tests/net/watch_events.hpp"

namespace aop::net {
namespace {

namespace json = boost::json;

std::vector<json::value> decode_in_pieces(std::string_view stream,
                                          const std::vector<std::size_t>& piece_sizes,
                                          boost::system::error_code* ec_out = nullptr) {
  JsonStreamDecoder decoder;
  std::vector<json::value> out;
  std::size_t pos = 0;
  boost::system::error_code ec;
  for (std::size_t i = 0; pos < stream.size() && !ec; ++i) {
    const std::size_t n = piece_sizes.empty() ? stream.size() : piece_sizes[i % piece_sizes.size()];
    ec = decoder.feed(stream.substr(pos, n), out);
    pos += n;
  }
  if (!ec) ec = decoder.finish(out);
  if (ec_out)
    *ec_out = ec;
  else
    EXPECT_FALSE(ec) << decoder.error_message();
  return out;
}

TEST(JsonStreamDecoder, WholeStreamYieldsEveryEvent) {
  const auto recorded = testing::record_watch_stream(300, 1);
  const auto values = decode_in_pieces(recorded.bytes, {});
  ASSERT_EQ(values.size(), recorded.events.size());
  EXPECT_EQ(values, recorded.events);
  EXPECT_EQ(values[0].at("object").at("kind"), "Pod");
}

TEST(JsonStreamDecoder, OneByteReads) {
  const auto recorded = testing::record_watch_stream(60, 2);
  EXPECT_EQ(decode_in_pieces(recorded.bytes, {1}), recorded.events);
}

TEST(JsonStreamDecoder, ValuesAppearAsSoonAsTheyAreComplete) {
  JsonStreamDecoder decoder;
  std::vector<json::value> out;
  const std::string event = R"({"type":"ADDED","object":{"kind":"Pod"}})";
  for (std::size_t i = 0; i + 1 < event.size(); ++i) {
    ASSERT_FALSE(decoder.feed(event.substr(i, 1), out));
    ASSERT_TRUE(out.empty()) << "value produced before its closing brace";
  }
  ASSERT_FALSE(decoder.feed("}", out));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(decoder.in_value());
}

TEST(JsonStreamDecoder, PropertyRandomSplitsGiveTheSameValuesAsWholeParsing) {
  const auto recorded = testing::record_watch_stream(400, 3);
  const auto whole = decode_in_pieces(recorded.bytes, {});
  ASSERT_EQ(whole, recorded.events);
  std::mt19937 rng(12345);
  for (int trial = 0; trial < 200; ++trial) {
    // Mix of tiny, medium and large pieces: split points land inside strings, escapes,
    // UTF-8 sequences, numbers and between values.
    std::vector<std::size_t> sizes;
    const int n = 1 + static_cast<int>(rng() % 64);
    for (int i = 0; i < n; ++i) {
      switch (rng() % 3) {
        case 0:
          sizes.push_back(1 + rng() % 3);
          break;
        case 1:
          sizes.push_back(1 + rng() % 700);
          break;
        default:
          sizes.push_back(1 + rng() % 20000);
      }
    }
    const auto values = decode_in_pieces(recorded.bytes, sizes);
    ASSERT_EQ(values.size(), whole.size()) << "trial " << trial;
    ASSERT_EQ(values, whole) << "trial " << trial;
  }
}

TEST(JsonStreamDecoder, SeveralValuesInOneReadAndBlankLinesBetween) {
  const std::string stream = "\n\n{\"a\":1}\n\n\n{\"b\":2} {\"c\":[3]}\r\n\r\n\t[4,5]\n\n";
  const auto values = decode_in_pieces(stream, {});
  ASSERT_EQ(values.size(), 4u);
  EXPECT_EQ(values[0], json::parse(R"({"a":1})"));
  EXPECT_EQ(values[3], json::parse("[4,5]"));
}

TEST(JsonStreamDecoder, OnlyWhitespaceIsAnEmptyStream) {
  boost::system::error_code ec;
  EXPECT_TRUE(decode_in_pieces(" \n\r\n\t ", {1}, &ec).empty());
  EXPECT_FALSE(ec);
}

TEST(JsonStreamDecoder, TopLevelNumbersAndStrings) {
  const auto values = decode_in_pieces("1 \"two\" 3.5 true null 42", {2});
  ASSERT_EQ(values.size(), 6u);
  EXPECT_EQ(values[5], 42);  // completed by finish()
}

TEST(JsonStreamDecoder, InvalidJsonMidStreamIsAnErrorWithOffset) {
  const std::string good = R"({"type":"ADDED","object":{}})"
                           "\n";
  const std::string stream = good + good + R"({"type":"MODIFIED","object":{"x": @oops}})" + good;
  for (const std::size_t piece : {std::size_t{1}, std::size_t{7}, stream.size()}) {
    JsonStreamDecoder decoder;
    std::vector<json::value> out;
    boost::system::error_code ec;
    for (std::size_t pos = 0; pos < stream.size() && !ec; pos += piece) {
      ec = decoder.feed(std::string_view(stream).substr(pos, piece), out);
    }
    EXPECT_EQ(ec, Errc::invalid_json);
    EXPECT_EQ(out.size(), 2u) << "values before the error are delivered";
    const std::size_t bad = stream.find("@oops");
    EXPECT_EQ(decoder.error_offset(), bad);
    EXPECT_EQ(decoder.error_message(),
              "invalid JSON at byte " + std::to_string(bad) + " of the stream: syntax error");
    // Stays failed.
    EXPECT_EQ(decoder.feed(good, out), Errc::invalid_json);
    EXPECT_EQ(decoder.finish(out), Errc::invalid_json);
    EXPECT_EQ(out.size(), 2u);
  }
}

TEST(JsonStreamDecoder, GarbageBetweenValues) {
  boost::system::error_code ec;
  const auto values = decode_in_pieces("{\"a\":1}\n,{\"b\":2}", {3}, &ec);
  EXPECT_EQ(ec, Errc::invalid_json);
  EXPECT_EQ(values.size(), 1u);
}

TEST(JsonStreamDecoder, InvalidUtf8IsAnError) {
  boost::system::error_code ec;
  decode_in_pieces("{\"a\":\"\xff\xfe\"}", {1}, &ec);
  EXPECT_EQ(ec, Errc::invalid_json);
}

TEST(JsonStreamDecoder, OversizeValueIsAnError) {
  JsonStreamOptions options;
  options.max_value_bytes = 100;
  const std::string small = R"({"type":"ADDED","object":{"name":"a"}})";
  const std::string big = R"({"type":"ADDED","object":{"name":")" + std::string(200, 'x') + "\"}}";
  for (const std::size_t piece : {std::size_t{1}, std::size_t{33}, std::size_t{100000}}) {
    JsonStreamDecoder decoder(options);
    std::vector<json::value> out;
    const std::string stream = small + "\n" + big + "\n" + small;
    boost::system::error_code ec;
    for (std::size_t pos = 0; pos < stream.size() && !ec; pos += piece) {
      ec = decoder.feed(std::string_view(stream).substr(pos, piece), out);
    }
    EXPECT_EQ(ec, Errc::value_too_large) << "piece " << piece;
    EXPECT_EQ(out.size(), 1u);
    EXPECT_EQ(decoder.error_offset(), small.size() + 1 + 100);
    EXPECT_NE(decoder.error_message().find("larger than 100 bytes"), std::string::npos)
        << decoder.error_message();
  }
}

TEST(JsonStreamDecoder, ValueExactlyAtTheLimitIsAccepted) {
  JsonStreamOptions options;
  const std::string value = R"({"k":"0123456789"})";
  options.max_value_bytes = value.size();
  JsonStreamDecoder decoder(options);
  std::vector<json::value> out;
  EXPECT_FALSE(decoder.feed(value + "\n" + value, out));
  EXPECT_FALSE(decoder.finish(out));
  EXPECT_EQ(out.size(), 2u);
}

TEST(JsonStreamDecoder, TruncatedStreamIsIncomplete) {
  JsonStreamDecoder decoder;
  std::vector<json::value> out;
  ASSERT_FALSE(decoder.feed(R"({"type":"ADDED"} {"type":"MOD)", out));
  EXPECT_EQ(out.size(), 1u);
  EXPECT_EQ(decoder.finish(out), Errc::incomplete_json);
  EXPECT_NE(decoder.error_message().find("ended in the middle"), std::string::npos);
}

TEST(JsonStreamDecoder, DeepCrdSchemasAreAccepted) {
  std::string deep;
  for (int i = 0; i < 200; ++i) deep += R"({"properties":)";
  deep += "{}";
  for (int i = 0; i < 200; ++i) deep += "}";
  boost::system::error_code ec;
  EXPECT_EQ(decode_in_pieces(deep, {5}, &ec).size(), 1u);
  EXPECT_FALSE(ec);
}

TEST(JsonStreamDecoder, ResetStartsANewStream) {
  JsonStreamDecoder decoder;
  std::vector<json::value> out;
  EXPECT_EQ(decoder.feed("{]", out), Errc::invalid_json);
  decoder.reset();
  EXPECT_FALSE(decoder.feed("{\"a\":1}", out));
  EXPECT_EQ(out.size(), 1u);
  EXPECT_EQ(decoder.offset(), 7u);
}

}  // namespace
}  // namespace aop::net
