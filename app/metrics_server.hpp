// How /metrics is served: plain HTTP (the default), or HTTPS with a certificate from files
// or a self-signed one made at start-up, optionally behind a bearer-token check (a static
// token file). Off by default, as in controller-runtime.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <boost/asio/awaitable.hpp>

#include "net/http_server.hpp"
#include "net/result.hpp"
#include "net/tls_options.hpp"

namespace aop::app {

struct Options;

// Decides whether a request may read /metrics: nullopt when it may, else the response
// to send (401 without or with an unknown token).
class MetricsGate {
 public:
  virtual ~MetricsGate() = default;
  virtual boost::asio::awaitable<std::optional<net::HttpResponse>> check(
      const net::ServerRequest& request) = 0;
};

// Bearer tokens listed in `path`, one per line (blank lines and lines starting with '#'
// ignored). The file is read again when its modification time changes, so a rotated
// token works without a restart; compared in constant time.
std::shared_ptr<MetricsGate> token_file_gate(std::string path);

// The TLS settings --metrics-secure asks for: the PEM files of --metrics-cert-file and
// --metrics-key-file, or a self-signed certificate for the host name when neither is given.
Result<net::TlsServerOptions> metrics_tls(const Options& options, const std::string& host_name);

// The gate --metrics-auth asks for; nullptr for "none".
std::shared_ptr<MetricsGate> metrics_gate(const Options& options);

// The /metrics route, behind `gate` when there is one.
net::Router metrics_routes(std::shared_ptr<MetricsGate> gate);

}  // namespace aop::app
