#include "net/detail/http_io.hpp"

#include <boost/asio/error.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/error.hpp>

#include "net/error.hpp"

namespace aop::net::detail {
namespace http = beast::http;

boost::system::error_code map_transport_error(boost::system::error_code ec, Phase phase,
                                              bool got_some) {
  if (!ec) return ec;
  if (ec == beast::error::timeout) {
    switch (phase) {
      case Phase::connect:
        return Errc::connect_timeout;
      case Phase::handshake:
        return Errc::tls_handshake_timeout;
      case Phase::write:
        return Errc::write_timeout;
      case Phase::read:
        return Errc::read_timeout;
      case Phase::stream_read:
        return Errc::idle_timeout;
    }
  }
  if (ec.category() == http::make_error_code(http::error::end_of_stream).category()) {
    switch (static_cast<http::error>(ec.value())) {
      case http::error::end_of_stream:
        return Errc::connection_closed;
      case http::error::partial_message:
        return Errc::truncated_response;
      case http::error::body_limit:
        return Errc::body_too_large;
      case http::error::header_limit:
        return Errc::header_too_large;
      case http::error::bad_chunk:
      case http::error::bad_chunk_extension:
        return Errc::malformed_chunk;
      default:
        return Errc::malformed_response;
    }
  }
  // A peer that closes a TLS connection without close_notify truncates the stream.
  if (ec == boost::asio::ssl::error::stream_truncated || ec == boost::asio::error::eof) {
    return got_some ? Errc::truncated_response : Errc::connection_closed;
  }
  return ec;
}

boost::system::error_code to_beast_request(HttpRequest&& request, const std::string& authority,
                                           const std::string& path_prefix,
                                           const std::string& default_user_agent,
                                           http::request<http::string_body>& out) {
  const auto has_line_break = [](std::string_view s) {
    return s.find_first_of("\r\n") != std::string_view::npos;
  };
  if (has_line_break(request.target) || request.target.find(' ') != std::string::npos) {
    return make_error_code(boost::system::errc::invalid_argument);
  }
  const std::string_view method = method_name(request.method);
  out = {};
  out.method_string(method);
  out.version(11);
  out.target(path_prefix.empty() ? std::move(request.target) : path_prefix + request.target);
  out.set(http::field::host, authority);
  for (const auto& [name, value] : request.headers) {
    if (name.empty() || has_line_break(name) || has_line_break(value)) {
      return make_error_code(boost::system::errc::invalid_argument);
    }
    out.insert(name, value);
  }
  if (!request.headers.contains("User-Agent")) out.set(http::field::user_agent, default_user_agent);
  out.body() = std::move(request.body);
  // Content-Length for any body, and an explicit 0 for methods that normally have one.
  const bool body_method = request.method == Method::post || request.method == Method::put ||
                           request.method == Method::patch;
  if (!out.body().empty() || body_method) out.prepare_payload();
  return {};
}

Headers to_headers(const http::fields& fields) {
  Headers out;
  for (const auto& f : fields) out.add(std::string(f.name_string()), std::string(f.value()));
  return out;
}

}  // namespace aop::net::detail
