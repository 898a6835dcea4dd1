// Transport-level errors of the net/ layer as boost::system::error_code values in the
// "aop.net" category. Each message says what went wrong and, where it helps, what to
// check; callers add the where (host, request target).
#pragma once

#include <system_error>

#include <boost/system/error_code.hpp>

namespace aop::net {

enum class Errc {
  // HTTP client
  body_too_large = 1,     // response body exceeded HttpClientOptions::body_limit
  header_too_large,       // response header exceeded the header limit
  malformed_response,     // the server sent something that is not HTTP/1.1
  malformed_chunk,        // bad chunked transfer-encoding in a response
  truncated_response,     // the connection ended before the response was complete
  connection_closed,      // the server closed the connection before responding
  resolve_timeout,        // DNS resolution took longer than the connect timeout
  connect_timeout,        // TCP connect took longer than the connect timeout
  tls_handshake_timeout,  // TLS handshake took longer than the handshake timeout
  write_timeout,          // writing the request took longer than the I/O timeout
  read_timeout,           // the response did not arrive within the I/O timeout
  idle_timeout,           // a stream received nothing for its idle timeout
  tls_hostname_mismatch,  // the certificate is not valid for the host (or server name)
  tls_unknown_ca,         // the certificate is not signed by a trusted CA
  tls_cert_expired,       // the certificate is expired or not yet valid
  tls_verify_failed,      // any other certificate verification failure
  client_closed,          // HttpClient::close() was called
  // JSON stream framing
  invalid_json,     // the stream is not a sequence of JSON values
  value_too_large,  // one JSON value exceeded the configured maximum size
  incomplete_json,  // the stream ended in the middle of a value
  // HTTP server
  request_body_too_large,  // a request body exceeded HttpServerOptions::body_limit
  server_stopping,         // the server is stopping; the stream must end
  client_gone,             // the client closed the connection
  response_already_sent,   // a handler tried to respond twice
};

const boost::system::error_category& net_category() noexcept;

inline boost::system::error_code make_error_code(Errc e) noexcept {
  return {static_cast<int>(e), net_category()};
}

// True for every deadline error of this category and for asio/beast timeouts.
bool is_timeout(const boost::system::error_code& ec) noexcept;

// True for TLS certificate verification failures (the server is not who it claims,
// or the CA bundle is wrong): retrying will not help.
bool is_tls_verification_error(const boost::system::error_code& ec) noexcept;

}  // namespace aop::net

namespace boost::system {
template <>
struct is_error_code_enum<aop::net::Errc> : std::true_type {};
}  // namespace boost::system
