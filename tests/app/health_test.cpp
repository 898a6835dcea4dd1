// The health and metrics endpoints, served by the real HTTP server and read by the real
// client over loopback, with a fake clock for the heartbeat.
#include "app/health.hpp"
#include "app/metrics_server.hpp"

#include <gtest/gtest.h>

#include "../net/async_test_util.hpp"
#include "net/http_client.hpp"
#include "net/metrics.hpp"

using namespace aop;
using aop::net::testing::IoThreads;
namespace asio = boost::asio;

namespace {

struct Served {
  std::unique_ptr<net::HttpServer> server;
  std::shared_ptr<net::HttpClient> client;
};

Served serve(IoThreads& io, net::Router router) {
  net::HttpServerOptions o;
  auto server = net::HttpServer::create(io.executor(), o, std::move(router));
  EXPECT_TRUE(server.has_value());
  (*server)->start();
  auto client = net::HttpClient::create(io.executor(),
                                        "http://127.0.0.1:" + std::to_string((*server)->port()));
  EXPECT_TRUE(client.has_value());
  return {std::move(*server), *client};
}

net::HttpResponse get(IoThreads& io, net::HttpClient& client, std::string target) {
  net::HttpRequest req;
  req.target = std::move(target);
  auto r = io.run(client.request(std::move(req)));
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message());
  return r ? *r : net::HttpResponse{};
}

void stop(IoThreads& io, Served& s) {
  io.run(s.server->stop(std::chrono::seconds(1)));
}

}  // namespace

TEST(BindAddress, Forms) {
  auto all = app::parse_bind_address(":8081");
  ASSERT_TRUE(all.has_value());
  EXPECT_EQ(all->host, "0.0.0.0");
  EXPECT_EQ(all->port, 8081);
  auto v6 = app::parse_bind_address("[::1]:0");
  ASSERT_TRUE(v6.has_value());
  EXPECT_EQ(v6->host, "::1");
  EXPECT_FALSE(app::parse_bind_address("8081").has_value());
  EXPECT_FALSE(app::parse_bind_address(":http").has_value());
  EXPECT_FALSE(app::parse_bind_address(":70000").has_value());
}

TEST(Health, ReadyzReflectsEveryCheckAndHealthzTheHeartbeat) {
  IoThreads io;
  net::FakeClock clock;
  auto state = std::make_shared<app::HealthState>(clock);
  std::atomic<bool> synced{false};
  state->add_readiness_check("informers", [&] {
    return synced.load() ? std::string() : std::string("waiting for caches: ServiceMonitor");
  });
  auto s = serve(io, app::health_routes(state));

  // Repeated requests on one keep-alive connection and on new ones.
  for (int i = 0; i < 3; ++i) {
    auto r = get(io, *s.client, "/readyz");
    EXPECT_EQ(r.status, 503);
    EXPECT_NE(r.body.find("[-]informers: waiting for caches: ServiceMonitor"), std::string::npos);
  }
  synced = true;
  auto ready = get(io, *s.client, "/readyz");
  EXPECT_EQ(ready.status, 200);
  EXPECT_NE(ready.body.find("[+]informers ok"), std::string::npos);

  state->heartbeat();
  EXPECT_EQ(get(io, *s.client, "/healthz").status, 200);
  clock.advance(std::chrono::seconds(31));  // the event loop stopped ticking
  auto dead = get(io, *s.client, "/healthz");
  EXPECT_EQ(dead.status, 500);
  EXPECT_NE(dead.body.find("heartbeat silent for 31s"), std::string::npos);
  auto dead_livez = get(io, *s.client, "/livez");
  EXPECT_EQ(dead_livez.status, 500);
  EXPECT_NE(dead_livez.body.find("[-]event-loop: event loop heartbeat silent for 31s"),
            std::string::npos)
      << dead_livez.body;
  state->heartbeat();
  EXPECT_EQ(get(io, *s.client, "/healthz").status, 200);
  auto live = get(io, *s.client, "/livez");
  EXPECT_EQ(live.status, 200);
  EXPECT_EQ(live.body, "[+]event-loop ok\nlivez check passed\n");

  EXPECT_EQ(get(io, *s.client, "/nope").status, 404);
  stop(io, s);
}

TEST(Metrics, ServesTheRegistryInTextFormat) {
  IoThreads io;
  net::metrics::registry()
      .counter("agent_operator_test_requests_total", "A test counter", {"code"})
      .with({"200"})
      .inc(3);
  auto s = serve(io, app::metrics_routes(nullptr));
  auto r = get(io, *s.client, "/metrics");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.headers.get("Content-Type").value_or(""), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_NE(r.body.find("# TYPE agent_operator_test_requests_total counter"), std::string::npos);
  EXPECT_NE(r.body.find("agent_operator_test_requests_total{code=\"200\"} 3"), std::string::npos);
  stop(io, s);
}
