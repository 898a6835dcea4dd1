#include "net/detail/tls_client_stream.hpp"

#include <cerrno>
#include <cstdint>
#include <stdexcept>

#include <sys/socket.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <boost/asio/error.hpp>
#include <boost/asio/ssl/error.hpp>

namespace aop::net::detail {
namespace {

// OpenSSL's read-ahead buffer: each socket read takes up to this much ciphertext (four
// full TLS records), and stays small enough to be decrypted while in the cache.
constexpr std::size_t kReadAheadBytes = std::size_t{64} * 1024;

// A BIO over a socket descriptor that never blocks and never raises SIGPIPE (OpenSSL's
// own socket BIO uses write(), which does on a connection the peer closed).
int descriptor(BIO* bio) {
  return static_cast<int>(reinterpret_cast<std::intptr_t>(BIO_get_data(bio)));
}

int bio_read(BIO* bio, char* data, int size) {
  BIO_clear_retry_flags(bio);
  for (;;) {
    const ssize_t r = ::recv(descriptor(bio), data, static_cast<std::size_t>(size), MSG_DONTWAIT);
    if (r > 0) return static_cast<int>(r);
    if (r == 0) {
      BIO_set_flags(bio, BIO_FLAGS_IN_EOF);
      return 0;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) BIO_set_retry_read(bio);
    return -1;
  }
}

int bio_write(BIO* bio, const char* data, int size) {
  BIO_clear_retry_flags(bio);
  for (;;) {
    const ssize_t r =
        ::send(descriptor(bio), data, static_cast<std::size_t>(size), MSG_DONTWAIT | MSG_NOSIGNAL);
    if (r >= 0) return static_cast<int>(r);
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) BIO_set_retry_write(bio);
    return -1;
  }
}

long bio_ctrl(BIO* bio, int cmd, long, void*) {
  switch (cmd) {
    case BIO_CTRL_FLUSH:
      return 1;  // nothing is buffered here
    case BIO_CTRL_EOF:
      return BIO_test_flags(bio, BIO_FLAGS_IN_EOF) != 0 ? 1 : 0;
    default:
      return 0;
  }
}

const BIO_METHOD* socket_bio_method() {
  static const BIO_METHOD* method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "aop socket");
    if (m == nullptr || BIO_meth_set_read(m, bio_read) != 1 ||
        BIO_meth_set_write(m, bio_write) != 1 || BIO_meth_set_ctrl(m, bio_ctrl) != 1) {
      throw std::runtime_error("OpenSSL: cannot create the socket BIO method");
    }
    return m;
  }();
  return method;
}

// OpenSSL's thread-local error queue must be empty before a call whose failure is then
// read with SSL_get_error; clearing it costs more than looking.
void clear_errors() {
  if (ERR_peek_error() != 0) ERR_clear_error();
  errno = 0;
}

}  // namespace

TlsClientStream::TlsClientStream(socket_type socket, boost::asio::ssl::context& context)
    : socket_(std::move(socket)), ssl_(SSL_new(context.native_handle())) {
  if (!ssl_) {
    throw boost::system::system_error(
        boost::system::error_code(static_cast<int>(ERR_get_error()),
                                  boost::asio::error::get_ssl_category()),
        "SSL_new");
  }
  BIO* bio = BIO_new(socket_bio_method());
  if (bio == nullptr) throw std::bad_alloc();
  // The descriptor itself is the BIO's data (not a pointer to it: the stream moves).
  BIO_set_data(bio,
               reinterpret_cast<void*>(  // NOLINT(performance-no-int-to-ptr)
                   static_cast<std::intptr_t>(socket_.native_handle())));
  BIO_set_init(bio, 1);
  SSL_set_bio(ssl_.get(), bio, bio);  // one reference, owned by the SSL object
  SSL_set_connect_state(ssl_.get());
  // Partial writes complete an operation with what was sent (Beast writes the rest);
  // a retried write may come from a moved buffer. Buffers are released while idle: a
  // watch or pooled connection holds no 64 KB read-ahead between reads.
  SSL_set_mode(ssl_.get(), SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
                               SSL_MODE_RELEASE_BUFFERS);
  SSL_set_read_ahead(ssl_.get(), 1);
  SSL_set_default_read_buffer_len(ssl_.get(), kReadAheadBytes);
}

TlsClientStream::Want TlsClientStream::handshake_step(boost::system::error_code& ec) {
  clear_errors();
  const int r = SSL_do_handshake(ssl_.get());
  if (r == 1) return Want::nothing;
  return failed(r, ec);
}

TlsClientStream::Want TlsClientStream::read_step(char* data, std::size_t size, std::size_t& n,
                                                 boost::system::error_code& ec) {
  n = 0;
  if (deferred_) {
    // The previous read delivered bytes and then failed: report the failure now.
    ec = deferred_;
    deferred_ = {};
    return Want::nothing;
  }
  while (n < size) {
    // With bytes in hand, stop rather than ask the socket for more when OpenSSL holds
    // nothing: that read would most likely find it empty.
    if (n > 0 && SSL_has_pending(ssl_.get()) == 0) break;
    clear_errors();
    std::size_t got = 0;
    const int r = SSL_read_ex(ssl_.get(), data + n, size - n, &got);
    if (r == 1) {
      n += got;
      continue;
    }
    boost::system::error_code failure;
    const Want w = failed(r, failure);
    if (n > 0) {
      if (failure) deferred_ = failure;
      return Want::nothing;
    }
    ec = failure;
    return w;
  }
  return Want::nothing;
}

TlsClientStream::Want TlsClientStream::write_step(const char* data, std::size_t size,
                                                  std::size_t& n, boost::system::error_code& ec) {
  n = 0;
  if (size == 0) return Want::nothing;
  clear_errors();
  const int r = SSL_write_ex(ssl_.get(), data, size, &n);
  if (r == 1) return Want::nothing;
  n = 0;
  return failed(r, ec);
}

TlsClientStream::Want TlsClientStream::failed(int ret, boost::system::error_code& ec) {
  const int sys = errno;
  const int reason = SSL_get_error(ssl_.get(), ret);
  switch (reason) {
    case SSL_ERROR_WANT_READ:
      return Want::read;
    case SSL_ERROR_WANT_WRITE:
      return Want::write;
    case SSL_ERROR_ZERO_RETURN:
      ec = boost::asio::error::eof;  // close_notify
      break;
    case SSL_ERROR_SYSCALL: {
      const unsigned long e = ERR_get_error();
      if (e != 0) {
        ec = {static_cast<int>(e), boost::asio::error::get_ssl_category()};
      } else if (sys != 0) {
        ec = {sys, boost::system::system_category()};
      } else {
        ec = boost::asio::ssl::error::stream_truncated;  // the peer closed without close_notify
      }
      break;
    }
    default: {
      const unsigned long e = ERR_get_error();
      if (ERR_GET_REASON(e) == SSL_R_UNEXPECTED_EOF_WHILE_READING) {
        ec = boost::asio::ssl::error::stream_truncated;
      } else if (e != 0) {
        ec = {static_cast<int>(e), boost::asio::error::get_ssl_category()};
      } else {
        ec = boost::asio::error::fault;
      }
      break;
    }
  }
  ERR_clear_error();
  return Want::nothing;
}

}  // namespace aop::net::detail
