#include "app/metrics_server.hpp"

#include <openssl/crypto.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <vector>

#include "app/health.hpp"
#include "app/options.hpp"
#include "net/metrics.hpp"
#include "net/tls_certs.hpp"

namespace aop::app {

namespace asio = boost::asio;
namespace fs = std::filesystem;

namespace {

net::HttpResponse unauthorized(std::string why) {
  net::HttpResponse r = text_response(401, "Unauthorized: " + why + "\n");
  r.headers.set("WWW-Authenticate", "Bearer realm=\"agent-operator metrics\"");
  return r;
}

// The token of "Authorization: Bearer <token>", or "".
std::string bearer_token(const net::ServerRequest& request) {
  const auto header = request.headers.get("Authorization");
  if (!header) return {};
  constexpr std::string_view kPrefix = "Bearer ";
  if (header->size() <= kPrefix.size() || header->substr(0, kPrefix.size()) != kPrefix) return {};
  return std::string(header->substr(kPrefix.size()));
}

bool equal_constant_time(const std::string& a, const std::string& b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

class TokenFileGate final : public MetricsGate {
 public:
  explicit TokenFileGate(std::string path) : path_(std::move(path)) {}

  asio::awaitable<std::optional<net::HttpResponse>> check(
      const net::ServerRequest& request) override {
    const std::string token = bearer_token(request);
    if (token.empty()) co_return unauthorized("a bearer token is required");
    const auto tokens = current();
    bool known = false;
    for (const auto& t : tokens) known = equal_constant_time(t, token) || known;
    if (!known) co_return unauthorized("the token is not accepted");
    co_return std::nullopt;
  }

 private:
  // The tokens of the file as it is now (read again when it changed).
  std::vector<std::string> current() {
    std::error_code ec;
    const auto mtime = fs::last_write_time(path_, ec);
    const std::lock_guard lock(mutex_);
    if (ec) return {};  // unreadable: no token is accepted
    if (loaded_ && mtime == mtime_) return tokens_;
    std::ifstream in(path_);
    std::vector<std::string> tokens;
    for (std::string line; std::getline(in, line);) {
      while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
      if (!line.empty() && line.front() != '#') tokens.push_back(line);
    }
    tokens_ = std::move(tokens);
    mtime_ = mtime;
    loaded_ = true;
    return tokens_;
  }

  const std::string path_;
  std::mutex mutex_;  // owns the fields below
  bool loaded_ = false;
  fs::file_time_type mtime_;
  std::vector<std::string> tokens_;
};

Result<std::string> read_file(const std::string& path, std::string_view flag) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(std::string(flag) + ": cannot read " + path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

asio::awaitable<void> serve_metrics(std::shared_ptr<MetricsGate> gate,
                                    const net::ServerRequest& request, net::ResponseWriter& w) {
  if (gate) {
    auto denied = co_await gate->check(request);
    if (denied) {
      co_await w.respond(std::move(*denied));
      co_return;
    }
  }
  net::HttpResponse r;
  r.headers.set("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
  r.body = net::metrics::registry().expose();
  co_await w.respond(std::move(r));
}

}  // namespace

std::shared_ptr<MetricsGate> token_file_gate(std::string path) {
  return std::make_shared<TokenFileGate>(std::move(path));
}

std::shared_ptr<MetricsGate> metrics_gate(const Options& options) {
  if (options.metrics_auth == "token-file") return token_file_gate(options.metrics_token_file);
  return nullptr;
}

Result<net::TlsServerOptions> metrics_tls(const Options& options, const std::string& host_name) {
  net::TlsServerOptions tls;
  if (!options.metrics_cert_file.empty()) {
    auto cert = read_file(options.metrics_cert_file, "--metrics-cert-file");
    if (!cert) return cert.error();
    auto key = read_file(options.metrics_key_file, "--metrics-key-file");
    if (!key) return key.error();
    tls.cert_pem = std::move(*cert);
    tls.key_pem = std::move(*key);
    return tls;
  }
  // No certificate given: a self-signed one, as controller-runtime makes. Scrapers then
  // skip verification (or pin it); give files from cert-manager to verify.
  auto ca = net::generate_ca("agent-operator metrics CA");
  if (!ca) return ca.error();
  net::CertificateRequest request;
  request.common_name = host_name;
  request.dns_names = {host_name, "localhost"};
  request.ip_addresses = {"127.0.0.1"};
  auto leaf = net::issue_certificate(*ca, request);
  if (!leaf) return leaf.error();
  tls.cert_pem = leaf->cert_pem;
  tls.key_pem = leaf->key_pem;
  return tls;
}

net::Router metrics_routes(std::shared_ptr<MetricsGate> gate) {
  net::Router router;
  router.add(net::Method::get, "/metrics",
             [gate](const net::ServerRequest& request, net::ResponseWriter& w) {
               return serve_metrics(gate, request, w);
             });
  return router;
}

}  // namespace aop::app
