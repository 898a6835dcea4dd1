// Internal: the client's TLS transport. OpenSSL reads and writes the socket itself
// (non-blocking, through a small BIO over the descriptor) and Asio only waits for the
// socket to become readable or writable.
//
// Why not asio::ssl::stream: it moves ciphertext through a 17 KB BIO pair, so every TLS
// record (at most 16 KB of plaintext) costs a socket read, an SSL engine operation and
// a composed asynchronous operation with its executor bookkeeping; a 150 MB LIST is
// about 10,000 of each, which profiled as a quarter of the client's CPU. Here OpenSSL
// reads ahead into a 64 KB buffer, one read decrypts as many records as fit in the
// caller's buffer, and an asynchronous wait happens only when the socket has no data.
//
// Reads are synchronous and never wait (read_available; net/detail/client_read.hpp
// waits for the socket when they would), the handshake and writes are asynchronous
// operations (an AsyncWriteStream for Beast). One operation at a time, on the owner's
// strand (the HTTP client runs every operation of a connection on it); closing the
// socket (a deadline, close()) makes a pending wait complete with operation_aborted,
// and operations started after it fail the same way. Errors are those
// asio::ssl::stream reports: asio::error::eof after close_notify,
// asio::ssl::error::stream_truncated when the peer closed without it, and OpenSSL's
// error codes in asio's SSL category.
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include <openssl/ssl.h>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/compose.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/system/error_code.hpp>

namespace aop::net::detail {

class TlsClientStream {
 public:
  using executor_type = boost::asio::any_io_executor;
  using socket_type = boost::asio::ip::tcp::socket;

  // A connected socket and the context (verification, client certificate) to use.
  TlsClientStream(socket_type socket, boost::asio::ssl::context& context);
  TlsClientStream(TlsClientStream&&) noexcept = default;
  TlsClientStream& operator=(TlsClientStream&&) noexcept = default;
  ~TlsClientStream() = default;

  executor_type get_executor() noexcept { return socket_.get_executor(); }
  SSL* native_handle() const noexcept { return ssl_.get(); }
  socket_type& socket() noexcept { return socket_; }

  // Closes the socket; a pending operation completes with operation_aborted.
  void close() noexcept {
    boost::system::error_code ignored;
    socket_.close(ignored);
  }

  template <class Token>
  auto async_handshake(Token&& token) {
    return start<void(boost::system::error_code)>(
        [](TlsClientStream& s) {
          boost::system::error_code ec;
          const Want w = s.handshake_step(ec);
          return Step{w, 0, ec};
        },
        std::forward<Token>(token));
  }

  // Reads what can be read now without waiting: decrypts as many buffered or arriving
  // records as fit. Fails with asio::error::would_block when nothing is available;
  // `wait` then says what the socket must become (OpenSSL may need to write first).
  std::size_t read_available(boost::asio::mutable_buffer buffer, boost::system::error_code& ec,
                             socket_type::wait_type& wait) {
    ec = {};
    if (!socket_.is_open()) {
      ec = boost::asio::error::operation_aborted;
      return 0;
    }
    std::size_t n = 0;
    const Want w = read_step(static_cast<char*>(buffer.data()), buffer.size(), n, ec);
    if (n == 0 && !ec && w != Want::nothing) {
      ec = boost::asio::error::would_block;
      wait = w == Want::read ? socket_type::wait_read : socket_type::wait_write;
    }
    return n;
  }

  template <class ConstBufferSequence, class Token>
  auto async_write_some(const ConstBufferSequence& buffers, Token&& token) {
    // Beast writes a message as several buffers (the header, then the body): small
    // ones go out as one TLS record, as Beast's flat_stream does for asio::ssl::stream.
    // The gathered copy lives in the stream until the write completes.
    boost::asio::const_buffer first;
    std::size_t count = 0;
    for (auto it = boost::asio::buffer_sequence_begin(buffers);
         it != boost::asio::buffer_sequence_end(buffers); ++it) {
      const boost::asio::const_buffer b = *it;
      if (b.size() == 0) continue;
      if (count++ == 0) first = b;
    }
    if (count > 1 && first.size() < kCoalesceBytes) {
      write_scratch_.clear();
      for (auto it = boost::asio::buffer_sequence_begin(buffers);
           it != boost::asio::buffer_sequence_end(buffers) &&
           write_scratch_.size() < kCoalesceBytes;
           ++it) {
        const boost::asio::const_buffer b = *it;
        const std::size_t take = std::min(b.size(), kCoalesceBytes - write_scratch_.size());
        write_scratch_.append(static_cast<const char*>(b.data()), take);
      }
      first = boost::asio::buffer(write_scratch_);
    }
    return start<void(boost::system::error_code, std::size_t)>(
        [first](TlsClientStream& s) {
          std::size_t n = 0;
          boost::system::error_code ec;
          const Want w = s.write_step(static_cast<const char*>(first.data()), first.size(), n, ec);
          return Step{w, n, ec};
        },
        std::forward<Token>(token));
  }

 private:
  enum class Want { nothing, read, write };
  struct Step {
    Want want = Want::nothing;
    std::size_t bytes = 0;
    boost::system::error_code ec;
  };

  static constexpr std::size_t kCoalesceBytes = 16 * 1024;

  struct SslFree {
    void operator()(SSL* ssl) const noexcept { SSL_free(ssl); }
  };

  // One attempt of each operation, on the calling thread; never blocks. Want::read or
  // Want::write: wait for the socket, then call again with the same arguments.
  Want handshake_step(boost::system::error_code& ec);
  Want read_step(char* data, std::size_t size, std::size_t& n, boost::system::error_code& ec);
  Want write_step(const char* data, std::size_t size, std::size_t& n,
                  boost::system::error_code& ec);
  // The outcome of an OpenSSL call that returned `ret` <= 0.
  Want failed(int ret, boost::system::error_code& ec);

  // The asynchronous operation around a step: calls it, waits for the socket while it
  // wants to, and completes (through a post when the first attempt already finished,
  // as an asynchronous operation must never complete inside its initiating call).
  template <class StepFn, bool WithBytes>
  struct Op {
    TlsClientStream* stream;
    StepFn step;
    enum class State { starting, waiting, posted } state = State::starting;
    Step result{};

    template <class Self>
    void operator()(Self& self, boost::system::error_code wait_ec = {}) {
      if (state == State::posted) {
        finish(self, result.ec, result.bytes);
        return;
      }
      if (state == State::waiting && wait_ec) {
        finish(self, wait_ec, 0);
        return;
      }
      if (!stream->socket_.is_open()) {
        result = Step{Want::nothing, 0, boost::asio::error::operation_aborted};
      } else {
        result = step(*stream);
      }
      if (result.want != Want::nothing) {
        state = State::waiting;
        stream->socket_.async_wait(
            result.want == Want::read ? socket_type::wait_read : socket_type::wait_write,
            std::move(self));
        return;
      }
      if (state == State::starting) {
        state = State::posted;
        boost::asio::post(std::move(self));
        return;
      }
      finish(self, result.ec, result.bytes);
    }

    template <class Self>
    static void finish(Self& self, const boost::system::error_code& ec, std::size_t n) {
      if constexpr (WithBytes) {
        self.complete(ec, n);
      } else {
        self.complete(ec);
      }
    }
  };

  template <class Signature, class StepFn, class Token>
  auto start(StepFn step, Token&& token) {
    constexpr bool with_bytes = !std::is_same_v<Signature, void(boost::system::error_code)>;
    return boost::asio::async_compose<Token, Signature>(
        Op<StepFn, with_bytes>{this, std::move(step)}, token, socket_);
  }

  socket_type socket_;
  std::unique_ptr<SSL, SslFree> ssl_;
  std::string write_scratch_;
  boost::system::error_code deferred_;  // a read failure after bytes it delivered
};

}  // namespace aop::net::detail
