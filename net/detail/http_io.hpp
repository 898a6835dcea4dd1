// Internal: pieces shared by the client and server I/O code: per-stream-type deadline
// and close operations, Beast <-> net/ value conversions, transport error mapping.
// Included only by net/ .cpp files and white-box tests (it pulls in Beast).
#pragma once

#include <string>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/fields.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include "net/clock.hpp"
#include "net/detail/tls_client_stream.hpp"
#include "net/http_types.hpp"

namespace aop::net::detail {

namespace beast = boost::beast;
// The server's transports: Beast's tcp_stream with its per-operation timeouts.
using PlainStream = beast::tcp_stream;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;
// The client's: a bare socket, deadlines kept by a Watchdog (net/detail/watchdog.hpp),
// and TLS over it (net/detail/tls_client_stream.hpp says why not asio::ssl::stream).
using ClientPlainStream = boost::asio::ip::tcp::socket;
using ClientTlsStream = TlsClientStream;

// Deadlines: Beast's tcp_stream closes the socket when one passes. Other stream types
// (in-memory test streams) have no timer.
inline void set_deadline(PlainStream& s, Duration d) {
  s.expires_after(d);
}
inline void set_deadline(TlsStream& s, Duration d) {
  beast::get_lowest_layer(s).expires_after(d);
}
template <class Stream>
void set_deadline(Stream&, Duration) {}

inline void clear_deadline(PlainStream& s) {
  s.expires_never();
}
inline void clear_deadline(TlsStream& s) {
  beast::get_lowest_layer(s).expires_never();
}
template <class Stream>
void clear_deadline(Stream&) {}

// Closes the transport; pending operations complete with operation_aborted.
inline void close_transport(PlainStream& s) {
  s.close();
}
inline void close_transport(TlsStream& s) {
  beast::get_lowest_layer(s).close();
}
inline void close_transport(ClientPlainStream& s) {
  boost::system::error_code ignored;
  s.close(ignored);
}
inline void close_transport(ClientTlsStream& s) {
  s.close();
}
template <class Stream>
void close_transport(Stream& s) {
  s.close();
}

// Which network operation failed: decides which timeout error a deadline becomes.
enum class Phase { connect, handshake, write, read, stream_read };

// Beast/Asio errors -> net/ errors (Errc): deadlines by phase, parser limits, bad
// framing, a connection that ended early. `got_some`: part of the message arrived.
boost::system::error_code map_transport_error(boost::system::error_code ec, Phase phase,
                                              bool got_some);

// A Beast request for `request`, with Host set to `authority` and target prefixed.
// Fails (invalid_argument) when a header name or value contains CR or LF.
boost::system::error_code to_beast_request(HttpRequest&& request, const std::string& authority,
                                           const std::string& path_prefix,
                                           const std::string& default_user_agent,
                                           beast::http::request<beast::http::string_body>& out);

Headers to_headers(const beast::http::fields& fields);

}  // namespace aop::net::detail
