#include "net/error.hpp"

#include <string>

#include <boost/beast/core/error.hpp>

namespace aop::net {
namespace {

// A function-local static, never deleted through the base (whose destructor is
// protected and non-virtual by design).
// NOLINTNEXTLINE(cppcoreguidelines-virtual-class-destructor)
class NetCategory final : public boost::system::error_category {
 public:
  const char* name() const noexcept override { return "aop.net"; }

  std::string message(int ev) const override {
    switch (static_cast<Errc>(ev)) {
      case Errc::body_too_large:
        return "response body exceeds the configured limit";
      case Errc::header_too_large:
        return "response header exceeds the configured limit";
      case Errc::malformed_response:
        return "malformed HTTP response from the server";
      case Errc::malformed_chunk:
        return "malformed chunked encoding in the response";
      case Errc::truncated_response:
        return "connection ended before the response was complete";
      case Errc::connection_closed:
        return "server closed the connection before responding";
      case Errc::resolve_timeout:
        return "timed out resolving the host name";
      case Errc::connect_timeout:
        return "timed out connecting to the server";
      case Errc::tls_handshake_timeout:
        return "timed out in the TLS handshake";
      case Errc::write_timeout:
        return "timed out sending the request";
      case Errc::read_timeout:
        return "timed out waiting for the response";
      case Errc::idle_timeout:
        return "stream received nothing within its idle timeout";
      case Errc::tls_hostname_mismatch:
        return "server certificate is not valid for this host name "
               "(check the server address or tls-server-name)";
      case Errc::tls_unknown_ca:
        return "server certificate is not signed by a trusted CA "
               "(check certificate-authority / certificate-authority-data)";
      case Errc::tls_cert_expired:
        return "server certificate is expired or not yet valid";
      case Errc::tls_verify_failed:
        return "server certificate verification failed";
      case Errc::client_closed:
        return "HTTP client was closed";
      case Errc::invalid_json:
        return "invalid JSON in the stream";
      case Errc::value_too_large:
        return "JSON value exceeds the configured maximum size";
      case Errc::incomplete_json:
        return "stream ended in the middle of a JSON value";
      case Errc::request_body_too_large:
        return "request body exceeds the configured limit";
      case Errc::server_stopping:
        return "server is stopping";
      case Errc::client_gone:
        return "client closed the connection";
      case Errc::response_already_sent:
        return "a response was already sent for this request";
    }
    return "unknown aop.net error " + std::to_string(ev);
  }
};

}  // namespace

const boost::system::error_category& net_category() noexcept {
  static const NetCategory category;
  return category;
}

bool is_timeout(const boost::system::error_code& ec) noexcept {
  if (ec == boost::beast::error::timeout) return true;
  if (ec.category() != net_category()) return false;
  switch (static_cast<Errc>(ec.value())) {
    case Errc::resolve_timeout:
    case Errc::connect_timeout:
    case Errc::tls_handshake_timeout:
    case Errc::write_timeout:
    case Errc::read_timeout:
    case Errc::idle_timeout:
      return true;
    default:
      return false;
  }
}

bool is_tls_verification_error(const boost::system::error_code& ec) noexcept {
  if (ec.category() != net_category()) return false;
  switch (static_cast<Errc>(ec.value())) {
    case Errc::tls_hostname_mismatch:
    case Errc::tls_unknown_ca:
    case Errc::tls_cert_expired:
    case Errc::tls_verify_failed:
      return true;
    default:
      return false;
  }
}

}  // namespace aop::net
