// Internal: building OpenSSL contexts from TlsClientOptions / TlsServerOptions, per-
// connection verification set-up, and turning handshake failures into clear errors.
// Included only by net/ .cpp files.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <boost/asio/ssl/context.hpp>
#include <boost/system/error_code.hpp>

#include "net/result.hpp"
#include "net/tls_options.hpp"

namespace aop::net::detail {

Result<std::shared_ptr<boost::asio::ssl::context>> make_client_tls_context(
    const TlsClientOptions& options);
Result<std::shared_ptr<boost::asio::ssl::context>> make_server_tls_context(
    const TlsServerOptions& options);

// Sets SNI (unless `name` is an IP address) and, when `verify`, the name the server
// certificate must match (DNS name or IP address).
boost::system::error_code prepare_client_connection(SSL* ssl, const std::string& name, bool verify);

// After a failed client handshake: a certificate verification failure becomes one of
// Errc::tls_hostname_mismatch, tls_unknown_ca, tls_cert_expired, tls_verify_failed;
// anything else is returned unchanged.
boost::system::error_code classify_handshake_error(SSL* ssl, boost::system::error_code ec);

struct PeerCertificate {
  bool present = false;
  std::string common_name;
  std::vector<std::string> organizations;
};
PeerCertificate peer_certificate(SSL* ssl);

bool is_ip_address(const std::string& host);

}  // namespace aop::net::detail
