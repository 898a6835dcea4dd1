#include "tools/kube-sim/server.hpp"

#include <filesystem>
#include <fstream>

#include <boost/asio.hpp>

#include "net/tls_certs.hpp"
#include "tools/kube-sim/api_internal.hpp"

namespace aop::sim {

namespace asio = boost::asio;

namespace {

// How often bookmarks and watch deadlines are checked.
constexpr auto kTickInterval = std::chrono::milliseconds(250);
// A streaming handler also wakes this often on its own, as a safety net.
constexpr auto kStreamPoll = std::chrono::seconds(5);

bool loopback_peer(std::string_view peer) {
  return peer.starts_with("127.") || peer.starts_with("[::1]") || peer.starts_with("::1");
}

}  // namespace

SimServer::SimServer(asio::any_io_executor executor, SimServerOptions options)
    : executor_(std::move(executor)),
      options_(std::move(options)),
      running_(std::make_shared<bool>(false)) {}

SimServer::~SimServer() {
  *running_ = false;
}

Result<std::unique_ptr<SimServer>> SimServer::create(asio::any_io_executor executor,
                                                     SimServerOptions options) {
  std::unique_ptr<SimServer> s(new SimServer(executor, std::move(options)));
  s->api_ = std::make_unique<ApiServer>(s->options_.api);
  net::HttpServerOptions ho;
  ho.host = s->options_.host;
  ho.port = s->options_.port;
  // Watches live long; a client reading slowly gets the API server's generous timeout.
  ho.write_timeout = std::chrono::seconds(60);
  if (s->options_.tls) {
    auto ca = net::generate_ca("kube-sim-ca");
    if (!ca) return make_error("kube-sim: generating the CA: " + ca.error().message);
    net::CertificateRequest req;
    req.common_name = "kube-sim";
    req.dns_names = {"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"};
    req.ip_addresses = {"127.0.0.1", "::1"};
    if (s->options_.host != "127.0.0.1" && s->options_.host != "localhost" &&
        s->options_.host != "0.0.0.0" && s->options_.host != "::1" && !s->options_.host.empty()) {
      const bool ip = s->options_.host.find_first_not_of("0123456789.:") == std::string::npos;
      (ip ? req.ip_addresses : req.dns_names).push_back(s->options_.host);
    }
    auto leaf = net::issue_certificate(*ca, req);
    if (!leaf)
      return make_error("kube-sim: issuing the serving certificate: " + leaf.error().message);
    s->ca_pem_ = ca->cert_pem;
    ho.tls = net::TlsServerOptions{leaf->cert_pem, leaf->key_pem, {}, false};
  }
  net::Router router;
  SimServer* self = s.get();
  router.set_fallback([self](const net::ServerRequest& req, net::ResponseWriter& w) {
    return self->serve(req, w);
  });
  auto http = net::HttpServer::create(executor, std::move(ho), std::move(router));
  if (!http) return http.error();
  s->http_ = std::move(*http);
  s->api_->set_server_address(s->options_.host + ":" + std::to_string(s->http_->port()));
  return s;
}

void SimServer::start() {
  *running_ = true;
  http_->start();
  asio::co_spawn(executor_, tick_loop(), asio::detached);
}

std::uint16_t SimServer::port() const {
  return http_->port();
}

std::string SimServer::url() const {
  std::string host = options_.host;
  if (host == "0.0.0.0" || host.empty()) host = "127.0.0.1";
  if (host.find(':') != std::string::npos) host = "[" + host + "]";
  return std::string(options_.tls ? "https" : "http") + "://" + host + ":" + std::to_string(port());
}

std::string SimServer::kubeconfig() const {
  std::string out;
  out += "apiVersion: v1\nkind: Config\nclusters:\n- name: kube-sim\n  cluster:\n";
  out += "    server: " + url() + "\n";
  if (!ca_pem_.empty()) {
    out += "    certificate-authority-data: " + detail::base64_encode(ca_pem_, false) + "\n";
  }
  out += "users:\n- name: kube-sim\n  user:\n";
  // Without --token any token is accepted; a placeholder keeps kubectl from prompting
  // for a user name on an https server whose kubeconfig user has no credentials.
  out +=
      "    token: " + (options_.api.token.empty() ? std::string("kube-sim") : options_.api.token) +
      "\n";
  out +=
      "contexts:\n- name: kube-sim\n  context:\n    cluster: kube-sim\n    user: kube-sim\n"
      "    namespace: default\ncurrent-context: kube-sim\npreferences: {}\n";
  return out;
}

Result<void> SimServer::write_kubeconfig(const std::string& path) const {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::trunc);
    if (!f) return make_error("kube-sim: cannot write " + tmp);
    f << kubeconfig();
    if (!f) return make_error("kube-sim: cannot write " + tmp);
  }
  std::error_code ec;
  std::filesystem::permissions(
      tmp, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write, ec);
  std::filesystem::rename(tmp, path, ec);
  if (ec) return make_error("kube-sim: cannot write " + path + ": " + ec.message());
  return {};
}

asio::awaitable<void> SimServer::tick_loop() {
  auto running = running_;
  asio::steady_timer timer(executor_);
  while (*running) {
    timer.expires_after(kTickInterval);
    co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
    if (!*running) break;
    api_->tick();
    if (api_->has_background_work()) api_->run_background();
  }
}

asio::awaitable<void> SimServer::stop() {
  // New connections are refused and idle ones closed at once; watches keep streaming
  // (ticks, bookmarks) until the grace ends, when each ends cleanly; the extra second
  // lets them finish their last chunk before the server closes what is left.
  stop_deadline_ = std::chrono::steady_clock::now() + options_.shutdown_grace;
  co_await http_->stop(options_.shutdown_grace + std::chrono::seconds(1));
  *running_ = false;
}

asio::awaitable<void> SimServer::serve(const net::ServerRequest& sreq, net::ResponseWriter& w) {
  Request req;
  req.method = std::string(net::method_name(sreq.method));
  req.target = sreq.target;
  req.body = sreq.body;
  req.content_type = std::string(sreq.headers.get("Content-Type").value_or(""));
  req.accept = std::string(sreq.headers.get("Accept").value_or(""));
  req.user_agent = std::string(sreq.headers.get("User-Agent").value_or(""));
  req.authorization = std::string(sreq.headers.get("Authorization").value_or(""));
  req.from_loopback = loopback_peer(sreq.peer);

  Response resp = api_->handle(req);
  // Garbage collection and other consequences of a write run right after it, like the
  // API server's controllers (but before the next request is handled).
  if (api_->has_background_work()) api_->run_background();

  if (resp.delay.count() > 0) {
    asio::steady_timer t(co_await asio::this_coro::executor);
    t.expires_after(resp.delay);
    co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
  }
  net::Headers headers;
  headers.add("Content-Type", resp.content_type);
  headers.add("Cache-Control", "no-cache, private");
  for (auto& [k, v] : resp.headers) headers.add(k, v);

  if (!resp.watch) {
    net::HttpResponse hr;
    hr.status = resp.status;
    hr.headers = std::move(headers);
    hr.body = resp.body.size() == 1 ? std::string(resp.body.front().data) : flatten(resp.body);
    resp.body.clear();
    co_await w.respond(std::move(hr));
    co_return;
  }

  WatcherPtr watcher = resp.watch;
  watcher->set_wakeup(w.notifier());
  if (auto ec = co_await w.start_stream(200, std::move(headers)); !ec) {
    bool stopping = false;
    while (true) {
      auto pieces = watcher->take();
      if (!pieces.empty()) {
        const std::string chunk = flatten(pieces);
        pieces.clear();
        if (co_await w.write_chunk(chunk)) break;
      }
      if (watcher->closed() && !watcher->has_pending()) {
        co_await w.end_stream();
        break;
      }
      auto poll = std::chrono::duration_cast<net::Duration>(kStreamPoll);
      if (stopping) {
        const auto left = stop_deadline_ - std::chrono::steady_clock::now();
        if (left <= std::chrono::steady_clock::duration::zero()) {
          co_await w.end_stream();
          break;
        }
        poll = std::min(poll, std::chrono::duration_cast<net::Duration>(left));
      }
      const auto reason = co_await w.wait(poll);
      if (reason == net::WakeReason::client_gone) break;
      if (reason == net::WakeReason::stopping) stopping = true;  // reported once
    }
  }
  watcher->set_wakeup(nullptr);
  api_->end_watch(watcher);
}

}  // namespace aop::sim
