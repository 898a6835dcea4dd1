#include "app/health.hpp"

#include <charconv>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace aop::app {

namespace asio = boost::asio;

// /healthz fails when the heartbeat has been silent this long: long enough that a busy
// loop under load never trips it, short enough that a wedged process is restarted.
constexpr auto kMaxHeartbeatSilence = std::chrono::seconds(30);

Result<BindAddress> parse_bind_address(std::string_view text) {
  BindAddress out;
  std::string_view port_text;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return make_error("bind address \"" + std::string(text) + "\": expected [ipv6]:port");
    }
    out.host = std::string(text.substr(1, close - 1));
    port_text = text.substr(close + 2);
  } else {
    const auto colon = text.rfind(':');
    if (colon == std::string_view::npos) {
      return make_error("bind address \"" + std::string(text) + "\": expected host:port or :port");
    }
    out.host = std::string(text.substr(0, colon));
    port_text = text.substr(colon + 1);
  }
  if (out.host.empty()) out.host = "0.0.0.0";
  unsigned port = 0;
  const auto [ptr, ec] =
      std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || ptr != port_text.data() + port_text.size() || port > 65535) {
    return make_error("bind address \"" + std::string(text) + "\": bad port \"" +
                      std::string(port_text) + "\"");
  }
  out.port = static_cast<std::uint16_t>(port);
  return out;
}

net::HttpResponse text_response(int status, std::string body) {
  net::HttpResponse r;
  r.status = status;
  r.headers.set("Content-Type", "text/plain; charset=utf-8");
  r.headers.set("Cache-Control", "no-store");
  r.body = std::move(body);
  return r;
}

void HealthState::add_readiness_check(std::string name, std::function<std::string()> check) {
  const std::lock_guard lock(mutex_);
  checks_.emplace_back(std::move(name), std::move(check));
}

void HealthState::heartbeat() {
  last_heartbeat_.store(clock_.now().time_since_epoch().count(), std::memory_order_relaxed);
}

std::string HealthState::liveness(net::Duration max_silence) const {
  const auto last = last_heartbeat_.load(std::memory_order_relaxed);
  if (last == 0) return {};  // not started yet: the process is alive
  const auto silence = clock_.now() - net::TimePoint(net::Duration(last));
  if (silence > max_silence) {
    return "event loop heartbeat silent for " +
           std::to_string(std::chrono::duration_cast<std::chrono::seconds>(silence).count()) + "s";
  }
  return {};
}

std::pair<bool, std::string> HealthState::readiness() const {
  const std::lock_guard lock(mutex_);
  bool ok = true;
  std::string body;
  for (const auto& [name, check] : checks_) {
    const std::string reason = check();
    if (reason.empty()) {
      body += "[+]" + name + " ok\n";
    } else {
      ok = false;
      body += "[-]" + name + ": " + reason + "\n";
    }
  }
  body += ok ? "readyz check passed\n" : "readyz check failed\n";
  return {ok, body};
}

namespace {

// Handlers are coroutine *functions* taking their state by value, reached through
// non-coroutine lambdas: a capturing lambda that is itself a coroutine refers to its
// captures through the lambda object, which may not outlive the first suspension.
asio::awaitable<void> serve_healthz(std::shared_ptr<HealthState> state, net::ResponseWriter& w) {
  const std::string why = state->liveness(kMaxHeartbeatSilence);
  net::HttpResponse r = why.empty() ? text_response(200, "ok\n") : text_response(500, why + "\n");
  co_await w.respond(std::move(r));
}

// /livez, kube-apiserver's and controller-runtime's name for the liveness endpoint: the
// /healthz verdict in the checks format of /readyz.
asio::awaitable<void> serve_livez(std::shared_ptr<HealthState> state, net::ResponseWriter& w) {
  const std::string why = state->liveness(kMaxHeartbeatSilence);
  net::HttpResponse r =
      why.empty() ? text_response(200, "[+]event-loop ok\nlivez check passed\n")
                  : text_response(500, "[-]event-loop: " + why + "\nlivez check failed\n");
  co_await w.respond(std::move(r));
}

asio::awaitable<void> serve_readyz(std::shared_ptr<HealthState> state, net::ResponseWriter& w) {
  auto [ok, body] = state->readiness();
  net::HttpResponse r = text_response(ok ? 200 : 503, std::move(body));
  co_await w.respond(std::move(r));
}

}  // namespace

net::Router health_routes(std::shared_ptr<HealthState> state) {
  net::Router router;
  router.add(net::Method::get, "/healthz",
             [state](const net::ServerRequest&, net::ResponseWriter& w) {
               return serve_healthz(state, w);
             });
  router.add(
      net::Method::get, "/livez",
      [state](const net::ServerRequest&, net::ResponseWriter& w) { return serve_livez(state, w); });
  router.add(net::Method::get, "/readyz",
             [state](const net::ServerRequest&, net::ResponseWriter& w) {
               return serve_readyz(state, w);
             });
  return router;
}

asio::awaitable<void> run_heartbeat(std::shared_ptr<HealthState> state, net::Duration period) {
  asio::steady_timer timer(co_await asio::this_coro::executor);
  for (;;) {
    state->heartbeat();
    timer.expires_after(period);
    boost::system::error_code ec;
    co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (ec) co_return;
  }
}

}  // namespace aop::app
