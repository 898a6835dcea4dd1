// The client's streaming-response reader driven over beast::test::stream with 1-byte
// reads: a watch event split across any number of reads still comes out whole from
// HttpStream + JsonStreamDecoder; framing errors and close() behave.
#include <gtest/gtest.h>

#include <random>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/beast/_experimental/test/stream.hpp>

#include "net/detail/http_stream_impl.hpp"
#include "net/error.hpp"
#include "net/json_stream.hpp"
#include "tests/net/watch_events.hpp"

namespace aop::net {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

// The watch stream as an API server sends it: chunked, chunk boundaries unrelated to
// event boundaries.
std::string chunked_response(std::string_view body, std::uint32_t seed) {
  std::string out =
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
  std::mt19937 rng(seed);
  while (!body.empty()) {
    const std::size_t n = std::min<std::size_t>(body.size(), 1 + rng() % 300);
    char size[16];
    std::snprintf(size, sizeof size, "%zx", n);
    out += size;
    out += "\r\n";
    out += body.substr(0, n);
    out += "\r\n";
    body.remove_prefix(n);
  }
  return out + "0\r\n\r\n";
}

struct ReadOutcome {
  std::vector<boost::json::value> values;
  std::string body;
  int reads = 0;
  boost::system::error_code ec;  // transport or framing error
  std::string json_error;
  int status = 0;
};

class StreamReader : public ::testing::Test {
 protected:
  // Serves `response` to the client side with the given read size, then reads the
  // whole body through open_stream_on + JsonStreamDecoder.
  ReadOutcome read_all(const std::string& response, std::size_t read_size, bool close_after) {
    beast::test::stream client(io), server(io);
    client.connect(server);
    client.read_size(read_size);
    client.append(response);
    if (close_after) client.close_remote();
    ReadOutcome out;
    asio::co_spawn(
        io,
        [&, client = std::move(client)]() mutable -> asio::awaitable<void> {
          http::request<http::string_body> req{http::verb::get, "/api/v1/pods?watch=1", 11};
          auto opened = co_await detail::open_stream_on(std::move(client), beast::flat_buffer{},
                                                        std::move(req), timeouts());
          if (!opened) {
            out.ec = opened.error();
            co_return;
          }
          auto& stream = **opened;
          out.status = stream.status();
          JsonStreamDecoder decoder;
          for (;;) {
            auto piece = co_await stream.read_some();
            if (!piece) {
              out.ec = piece.error();
              co_return;
            }
            if (piece->empty()) break;
            ++out.reads;
            out.body += *piece;
            if (decoder.feed(*piece, out.values)) {
              out.json_error = decoder.error_message();
              co_return;
            }
          }
          if (decoder.finish(out.values)) out.json_error = decoder.error_message();
        },
        asio::detached);
    io.run();
    io.restart();
    request_seen = server.str();
    return out;
  }

  static detail::StreamTimeouts timeouts() {
    detail::StreamTimeouts t;
    t.io_timeout = std::chrono::seconds(10);
    t.idle_timeout = std::chrono::seconds(10);
    return t;
  }

  asio::io_context io;
  std::string request_seen;
};

TEST_F(StreamReader, OneByteReadsDeliverWholeEventsThroughTheFramer) {
  const auto recorded = testing::record_watch_stream(20, 11);  // ~30 KB: 30,000 reads
  const auto out = read_all(chunked_response(recorded.bytes, 5), 1, false);
  ASSERT_FALSE(out.ec) << out.ec.message();
  EXPECT_EQ(out.status, 200);
  EXPECT_TRUE(out.json_error.empty()) << out.json_error;
  EXPECT_EQ(out.values, recorded.events);
  EXPECT_EQ(out.reads, static_cast<int>(recorded.bytes.size()))
      << "with 1-byte transport reads every piece is one byte: events were split";
  EXPECT_EQ(request_seen.rfind("GET /api/v1/pods?watch=1 HTTP/1.1\r\n", 0), 0u) << request_seen;
}

TEST_F(StreamReader, RandomReadSizes) {
  const auto recorded = testing::record_watch_stream(60, 12);
  const std::string response = chunked_response(recorded.bytes, 6);
  for (const std::size_t read_size : {3, 7, 64, 1000, 100000}) {
    const auto out = read_all(response, read_size, false);
    ASSERT_FALSE(out.ec) << out.ec.message();
    EXPECT_EQ(out.values, recorded.events) << "read size " << read_size;
  }
}

TEST_F(StreamReader, ContentLengthAndUntilCloseBodies) {
  const std::string body = "{\"a\":1}\n{\"b\":2}\n";
  const auto with_length = read_all(
      "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body, 1,
      false);
  ASSERT_FALSE(with_length.ec) << with_length.ec.message();
  EXPECT_EQ(with_length.body, body);
  const auto until_close = read_all("HTTP/1.1 200 OK\r\n\r\n" + body, 3, true);
  ASSERT_FALSE(until_close.ec) << until_close.ec.message();
  EXPECT_EQ(until_close.values.size(), 2u);
}

TEST_F(StreamReader, ErrorStatusBodyIsReadable) {
  const std::string body = R"({"kind":"Status","code":410,"reason":"Expired"})";
  const auto out = read_all(
      "HTTP/1.1 410 Gone\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body, 1,
      false);
  ASSERT_FALSE(out.ec);
  EXPECT_EQ(out.status, 410);
  ASSERT_EQ(out.values.size(), 1u);
  EXPECT_EQ(out.values[0].at("reason"), "Expired");
}

TEST_F(StreamReader, MalformedChunkHeader) {
  const auto out = read_all(
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n{\"a\"\r\nnot-hex\r\n:1}\r\n", 1,
      false);
  EXPECT_EQ(out.ec, Errc::malformed_chunk) << out.ec.message();
  EXPECT_EQ(out.body, "{\"a\"") << "data before the bad chunk was delivered";
}

TEST_F(StreamReader, StreamCutMidChunk) {
  const auto out = read_all(
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n20\r\n{\"type\":\"ADDED\"", 1, true);
  EXPECT_EQ(out.ec, Errc::truncated_response) << out.ec.message();
}

TEST_F(StreamReader, InvalidJsonInsideAValidStream) {
  const auto out =
      read_all(chunked_response("{\"type\":\"ADDED\"}\n{\"type\" \"MODIFIED\"}\n", 1), 1, false);
  ASSERT_FALSE(out.ec);
  EXPECT_EQ(out.values.size(), 1u);
  EXPECT_EQ(out.json_error, "invalid JSON at byte 25 of the stream: syntax error");
}

TEST_F(StreamReader, CloseAbortsAPendingRead) {
  beast::test::stream client(io), server(io);
  client.connect(server);
  client.append("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n");
  boost::system::error_code pending_read_error, later_read_error;
  std::string first;
  asio::co_spawn(
      io,
      [&, client = std::move(client)]() mutable -> asio::awaitable<void> {
        http::request<http::string_body> req{http::verb::get, "/watch", 11};
        auto opened = co_await detail::open_stream_on(std::move(client), beast::flat_buffer{},
                                                      std::move(req), timeouts());
        if (!opened) co_return;
        auto stream = *opened;
        auto piece = co_await stream->read_some();
        if (piece) first = *piece;
        // Nothing more will arrive: the next read stays pending until close().
        asio::post(io, [stream] { stream->close(); });
        auto pending = co_await stream->read_some();
        if (!pending) pending_read_error = pending.error();
        auto later = co_await stream->read_some();
        if (!later) later_read_error = later.error();
      },
      asio::detached);
  io.run();
  EXPECT_EQ(first, "abc");
  EXPECT_EQ(pending_read_error, asio::error::operation_aborted) << pending_read_error.message();
  EXPECT_EQ(later_read_error, asio::error::operation_aborted);
}

}  // namespace
}  // namespace aop::net
