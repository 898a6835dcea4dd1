// Internal: reading HTTP responses on the client's transports with as few asynchronous
// operations as possible.
//
// Beast's asynchronous reads cost a composed operation per read (executor copies, work
// tracking, and a post to the connection's strand when the data was already there),
// and on a multi-threaded io_context every post may hand the connection to the other
// thread. While a response streams in, the socket nearly always has data, so the reads
// here are synchronous and non-blocking (Beast's synchronous parser loop over a reader
// that fails with would_block instead of waiting), and the coroutine suspends on
// socket.async_wait only when the socket is empty. In-memory test streams, which have
// no non-blocking read, go through Beast's asynchronous reads.
#pragma once

#include <cerrno>
#include <cstddef>
#include <type_traits>

#include <sys/socket.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/basic_parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/system/system_error.hpp>

#include "net/detail/http_io.hpp"

namespace aop::net::detail {

// A SyncReadStream over a client transport whose read_some never waits: it returns
// what can be read now, or fails with asio::error::would_block and sets `wait` to what
// the socket must become before the next attempt.
template <class Stream>
struct NonBlockingReader;

template <>
struct NonBlockingReader<ClientPlainStream> {
  ClientPlainStream& stream;
  ClientPlainStream::wait_type wait = ClientPlainStream::wait_read;

  ClientPlainStream& socket() { return stream; }

  template <class MutableBufferSequence>
  std::size_t read_some(const MutableBufferSequence& buffers, boost::system::error_code& ec) {
    const boost::asio::mutable_buffer b = *boost::asio::buffer_sequence_begin(buffers);
    ec = {};
    if (!stream.is_open()) {
      ec = boost::asio::error::operation_aborted;
      return 0;
    }
    for (;;) {
      const ssize_t r = ::recv(stream.native_handle(), b.data(), b.size(), MSG_DONTWAIT);
      if (r > 0) return static_cast<std::size_t>(r);
      if (r == 0) {
        ec = boost::asio::error::eof;
        return 0;
      }
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        ec = boost::asio::error::would_block;
        wait = ClientPlainStream::wait_read;
      } else {
        ec = {errno, boost::system::system_category()};
      }
      return 0;
    }
  }

  template <class MutableBufferSequence>
  std::size_t read_some(const MutableBufferSequence& buffers) {
    boost::system::error_code ec;
    const std::size_t n = read_some(buffers, ec);
    if (ec) throw boost::system::system_error(ec);
    return n;
  }
};

template <>
struct NonBlockingReader<ClientTlsStream> {
  ClientTlsStream& stream;
  ClientTlsStream::socket_type::wait_type wait = ClientTlsStream::socket_type::wait_read;

  ClientTlsStream::socket_type& socket() { return stream.socket(); }

  template <class MutableBufferSequence>
  std::size_t read_some(const MutableBufferSequence& buffers, boost::system::error_code& ec) {
    return stream.read_available(*boost::asio::buffer_sequence_begin(buffers), ec, wait);
  }

  template <class MutableBufferSequence>
  std::size_t read_some(const MutableBufferSequence& buffers) {
    boost::system::error_code ec;
    const std::size_t n = read_some(buffers, ec);
    if (ec) throw boost::system::system_error(ec);
    return n;
  }
};

template <class Stream>
inline constexpr bool kNonBlockingReadable =
    std::is_same_v<Stream, ClientPlainStream> || std::is_same_v<Stream, ClientTlsStream>;

// One read of the response into `parser` (Beast's read_some: parses what is buffered,
// reads when it needs more): returns once something was parsed or an error (including
// http::error::need_buffer for a full buffer_body) happened.
template <class Stream, bool isRequest>
boost::asio::awaitable<boost::system::error_code> read_some(
    Stream& stream, beast::flat_buffer& buffer, beast::http::basic_parser<isRequest>& parser) {
  using boost::asio::as_tuple;
  using boost::asio::use_awaitable;
  if constexpr (kNonBlockingReadable<Stream>) {
    NonBlockingReader<Stream> reader{stream};
    for (;;) {
      boost::system::error_code ec;
      const std::size_t used = beast::http::read_some(reader, buffer, parser, ec);
      if (ec != boost::asio::error::would_block) co_return ec;
      if (used > 0) co_return boost::system::error_code{};
      auto [wait_ec] = co_await reader.socket().async_wait(reader.wait, as_tuple(use_awaitable));
      if (wait_ec) co_return wait_ec;
    }
  } else {
    auto [ec, n] =
        co_await beast::http::async_read_some(stream, buffer, parser, as_tuple(use_awaitable));
    (void)n;
    co_return ec;
  }
}

// Reads until the parser has the whole header (leaving the body's bytes unparsed, as
// http::async_read_header does).
template <class Stream, bool isRequest>
boost::asio::awaitable<boost::system::error_code> read_header(
    Stream& stream, beast::flat_buffer& buffer, beast::http::basic_parser<isRequest>& parser) {
  parser.eager(false);
  while (!parser.is_header_done()) {
    if (auto ec = co_await read_some(stream, buffer, parser)) co_return ec;
  }
  co_return boost::system::error_code{};
}

// Reads until the parser has the whole message (as http::async_read does).
template <class Stream, bool isRequest>
boost::asio::awaitable<boost::system::error_code> read_message(
    Stream& stream, beast::flat_buffer& buffer, beast::http::basic_parser<isRequest>& parser) {
  parser.eager(true);
  while (!parser.is_done()) {
    if (auto ec = co_await read_some(stream, buffer, parser)) co_return ec;
  }
  co_return boost::system::error_code{};
}

}  // namespace aop::net::detail
