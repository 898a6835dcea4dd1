// The HTTP client's response reading as a watch uses it: status line, headers (with the
// header limit), chunked, Content-Length or until-close bodies, through the streaming
// reader (net/detail/http_stream_impl.hpp) and the watch-stream framer. The server's
// bytes are the input, delivered in reads of a size the first byte chooses. Oracle:
// no crash, leak or undefined behaviour, and the reader ends (error or end of body).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/beast/_experimental/test/stream.hpp>

#include "fuzz/check.hpp"
#include "net/detail/http_stream_impl.hpp"
#include "net/json_stream.hpp"

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace net = aop::net;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t read_size = 1 + data[0] % 64;
  const std::string_view response(reinterpret_cast<const char*>(data) + 1, size - 1);
  // One io_context for every input (creating one per input halves the rate).
  static asio::io_context io;
  io.restart();
  beast::test::stream client(io), server(io);
  client.connect(server);
  client.read_size(read_size);
  client.append(response);
  client.close_remote();
  bool ended = false;
  asio::co_spawn(
      io,
      [&, client = std::move(client)]() mutable -> asio::awaitable<void> {
        http::request<http::string_body> req{http::verb::get, "/api/v1/pods?watch=1", 11};
        net::detail::StreamTimeouts timeouts;
        timeouts.io_timeout = std::chrono::seconds(10);
        timeouts.idle_timeout = std::chrono::seconds(10);
        timeouts.header_limit = 4096;
        auto opened = co_await net::detail::open_stream_on(std::move(client), beast::flat_buffer{},
                                                           std::move(req), timeouts);
        if (!opened) {
          ended = true;
          co_return;
        }
        auto& stream = **opened;
        (void)stream.status();
        (void)stream.headers().get("Content-Type");
        net::JsonStreamOptions options;
        options.max_value_bytes = 4096;
        net::JsonStreamDecoder decoder(options);
        std::vector<boost::json::value> values;
        for (;;) {
          auto piece = co_await stream.read_some();
          if (!piece || piece->empty()) break;
          if (decoder.feed(*piece, values)) break;
        }
        (void)decoder.finish(values);
        stream.close();
        ended = true;
      },
      asio::detached);
  io.run();
  AOP_FUZZ_CHECK(ended, "the reader waited for bytes that can never come");
  return 0;
}
