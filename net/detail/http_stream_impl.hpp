// Internal: the streaming-response reader, generic over the byte stream (plain TCP,
// TLS, or an in-memory test stream), so tests drive the production code path with
// beast::test::stream. Included only by net/http_client.cpp and white-box tests.
//
// Every operation on the stream runs on one strand (strand_), so close() from any
// thread is serialized with a pending read: it closes the transport and the read
// completes with operation_aborted. Deadlines (the response header within the I/O
// timeout, then the idle timeout per read) are kept by a Watchdog, not per operation.
#pragma once

#include <atomic>
#include <memory>
#include <vector>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

#include "net/detail/client_read.hpp"
#include "net/detail/http_io.hpp"
#include "net/detail/watchdog.hpp"
#include "net/http_client.hpp"

namespace aop::net::detail {

// Largest piece handed to the caller per read_some(): big enough that a busy watch
// stream costs few wake-ups, small enough to stay in cache for the JSON framer.
inline constexpr std::size_t kStreamPieceBytes = 64 * 1024;

struct StreamTimeouts {
  Duration io_timeout;    // writing the request, and waiting for the response header
  Duration idle_timeout;  // between body reads
  std::uint32_t header_limit = 64 * 1024;
};

template <class Stream>
class BasicHttpStream final : public HttpStream,
                              public std::enable_shared_from_this<BasicHttpStream<Stream>> {
 public:
  BasicHttpStream(Stream stream, beast::flat_buffer buffer, StreamTimeouts timeouts)
      : stream_(std::move(stream)),
        strand_(strand_of(stream_.get_executor())),
        buffer_(std::move(buffer)),
        timeouts_(timeouts),
        piece_(kStreamPieceBytes),
        watchdog_(strand_, [this] { close_transport(stream_); }) {
    parser_.body_limit(boost::none);  // a watch never ends by size
    parser_.header_limit(timeouts.header_limit);
  }

  // Call once, right after construction by make_shared.
  void init() { watchdog_.set_owner(this->weak_from_this()); }

  // Writes the request and reads the response header.
  boost::asio::awaitable<boost::system::error_code> start(
      beast::http::request<beast::http::string_body> request) {
    auto self = this->shared_from_this();
    if (on_strand()) co_return co_await start_on_strand(std::move(request));
    co_return co_await boost::asio::co_spawn(strand_, self->start_on_strand(std::move(request)),
                                             boost::asio::use_awaitable);
  }

  boost::asio::awaitable<boost::system::result<std::string_view>> read_some() override {
    auto self = this->shared_from_this();
    // A caller on the stream's strand (an informer, which shares its strand with its
    // watch) reads directly: no hop to another strand and back per read.
    if (on_strand()) co_return co_await read_on_strand();
    co_return co_await boost::asio::co_spawn(strand_, self->read_on_strand(),
                                             boost::asio::use_awaitable);
  }

  void close() override {
    closed_.store(true, std::memory_order_release);
    boost::asio::post(strand_, [self = this->shared_from_this()] {
      self->watchdog_.clear();
      close_transport(self->stream_);
    });
  }

 private:
  // The stream's executor when it is a strand already (the client connects on one),
  // otherwise a strand over it.
  static boost::asio::any_io_executor strand_of(const boost::asio::any_io_executor& ex) {
    if (ex.target<boost::asio::strand<boost::asio::any_io_executor>>() != nullptr) return ex;
    return boost::asio::make_strand(ex);
  }

  bool on_strand() const {
    const auto* s = strand_.target<boost::asio::strand<boost::asio::any_io_executor>>();
    return s != nullptr && s->running_in_this_thread();
  }

  boost::system::error_code timed(const boost::system::error_code& ec) const {
    return ec && watchdog_.expired() ? boost::system::error_code(beast::error::timeout) : ec;
  }

  boost::asio::awaitable<boost::system::error_code> start_on_strand(
      beast::http::request<beast::http::string_body> request) {
    namespace http = beast::http;
    using boost::asio::as_tuple;
    using boost::asio::use_awaitable;
    if (closed_.load(std::memory_order_acquire)) co_return boost::asio::error::operation_aborted;
    watchdog_.set(timeouts_.io_timeout);
    auto [wec, written] = co_await http::async_write(stream_, request, as_tuple(use_awaitable));
    if (wec) {
      watchdog_.clear();
      co_return aborted_or(map_transport_error(timed(wec), Phase::write, false));
    }
    watchdog_.set(timeouts_.io_timeout);
    const boost::system::error_code rec = co_await read_header(stream_, buffer_, parser_);
    if (rec) {
      watchdog_.clear();
      co_return aborted_or(map_transport_error(timed(rec), Phase::read, parser_.got_some()));
    }
    watchdog_.pause();
    const auto& header = parser_.get();
    status_ = static_cast<int>(header.result_int());
    headers_ = to_headers(header.base());
    done_ = parser_.is_done();
    if (done_) watchdog_.clear();
    co_return boost::system::error_code{};
  }

  boost::asio::awaitable<boost::system::result<std::string_view>> read_on_strand() {
    namespace http = beast::http;
    using Result = boost::system::result<std::string_view>;
    for (;;) {
      if (closed_.load(std::memory_order_acquire)) {
        co_return Result(boost::system::error_code(boost::asio::error::operation_aborted));
      }
      if (failed_) co_return Result(failed_);
      if (done_) co_return Result(std::string_view{});
      auto& body = parser_.get().body();
      body.data = piece_.data();
      body.size = piece_.size();
      // The idle timeout runs while a read is pending (moving it costs nothing).
      watchdog_.set(timeouts_.idle_timeout);
      boost::system::error_code ec = co_await detail::read_some(stream_, buffer_, parser_);
      watchdog_.pause();
      const std::size_t produced = piece_.size() - parser_.get().body().size;
      if (ec == http::error::need_buffer) ec = {};
      if (ec) {
        watchdog_.clear();
        failed_ = aborted_or(map_transport_error(timed(ec), Phase::stream_read, true));
        if (produced == 0) continue;  // report the error on this call
      }
      if (parser_.is_done()) {
        done_ = true;
        watchdog_.clear();
      }
      if (produced > 0) co_return Result(std::string_view(piece_.data(), produced));
      // Only framing (a chunk header) was consumed: read again.
    }
  }

  boost::system::error_code aborted_or(boost::system::error_code ec) const {
    if (closed_.load(std::memory_order_acquire)) return boost::asio::error::operation_aborted;
    return ec;
  }

  Stream stream_;
  const boost::asio::any_io_executor strand_;  // a strand: every operation on stream_ runs on it
  // Owned by strand_:
  beast::flat_buffer buffer_;
  beast::http::response_parser<beast::http::buffer_body> parser_;
  StreamTimeouts timeouts_;
  std::vector<char> piece_;
  bool done_ = false;
  boost::system::error_code failed_;
  Watchdog watchdog_;  // the header and idle deadlines
  // Set by close() from any thread; read on the strand.
  std::atomic<bool> closed_{false};
};

// Starts a streaming exchange on an already connected stream: writes `request`, reads
// the response header, and returns the stream for reading the body.
template <class Stream>
boost::asio::awaitable<boost::system::result<std::shared_ptr<HttpStream>>> open_stream_on(
    Stream stream, beast::flat_buffer buffer,
    beast::http::request<beast::http::string_body> request, StreamTimeouts timeouts) {
  auto s =
      std::make_shared<BasicHttpStream<Stream>>(std::move(stream), std::move(buffer), timeouts);
  s->init();
  if (auto ec = co_await s->start(std::move(request))) {
    co_return boost::system::result<std::shared_ptr<HttpStream>>(ec);
  }
  co_return std::shared_ptr<HttpStream>(std::move(s));
}

}  // namespace aop::net::detail
