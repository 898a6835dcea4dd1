// HttpServer and HttpClient talking over loopback: keep-alive, streaming, the pool
// cap, deadlines, limits, routing, stopping, and bad responses from a scripted peer.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <random>

#include "net/error.hpp"
#include "net/http_client.hpp"
#include "net/http_server.hpp"
#include "net/json_stream.hpp"
#include "tests/net/async_test_util.hpp"
#include "tests/net/watch_events.hpp"

namespace aop::net {
namespace {

namespace asio = boost::asio;
using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::IoThreads;
using testing::ScriptedServer;
using testing::wait_until;

// Handlers park here until the test opens the gate. Thread-safe.
class Gate {
 public:
  asio::awaitable<WakeReason> pass(ResponseWriter& w) {
    {
      const std::lock_guard lock(mutex_);
      if (open_) co_return WakeReason::notified;
      wakers_.push_back(w.notifier());
      ++parked_;
    }
    for (;;) {
      if (is_open()) co_return WakeReason::notified;
      const WakeReason r = co_await w.wait(seconds(1));
      if (r == WakeReason::client_gone || r == WakeReason::stopping) co_return r;
    }
  }
  void open() {
    const std::lock_guard lock(mutex_);
    open_ = true;
    for (auto& wake : wakers_) wake();
  }
  bool is_open() {
    const std::lock_guard lock(mutex_);
    return open_;
  }
  int parked() {
    const std::lock_guard lock(mutex_);
    return parked_;
  }

 private:
  std::mutex mutex_;  // owns everything below
  bool open_ = false;
  int parked_ = 0;
  std::vector<std::function<void()>> wakers_;
};

Headers json_headers() {
  Headers h;
  h.set("Content-Type", "application/json");
  return h;
}

HttpResponse text(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.headers.set("Content-Type", "text/plain");
  r.body = std::move(body);
  return r;
}

class Loopback : public ::testing::Test {
 protected:
  void start(Router router, HttpServerOptions options = {}) {
    auto created = HttpServer::create(io.executor(), std::move(options), std::move(router));
    ASSERT_TRUE(created) << created.error().message;
    server = std::move(*created);
    server->start();
    url = "http://127.0.0.1:" + std::to_string(server->port());
  }

  std::shared_ptr<HttpClient> client(HttpClientOptions options = {}) {
    auto c = HttpClient::create(io.executor(), url, std::move(options));
    EXPECT_TRUE(c) << c.error().message;
    return *c;
  }

  boost::system::result<HttpResponse> get(HttpClient& c, std::string target) {
    HttpRequest req;
    req.target = std::move(target);
    return io.run(c.request(std::move(req)));
  }

  void TearDown() override {
    if (server) io.run(server->stop(seconds(5)));
  }

  // Handlers may still touch these after a test body ends (until TearDown stops the
  // server), so they live in the fixture, destroyed after the io threads.
  Gate gate;
  Gate never;
  IoThreads io{2};
  std::unique_ptr<HttpServer> server;
  std::string url;
};

TEST_F(Loopback, RequestAndResponseWithHeadersAndBody) {
  Router router;
  router.add(Method::post, "/echo",
             [](const ServerRequest& req, ResponseWriter& w) -> asio::awaitable<void> {
               HttpResponse r =
                   text(201, req.body + "|" + std::string(req.headers.get("X-Test").value_or("")) +
                                 "|" + req.query + "|" +
                                 std::string(req.headers.get("Authorization").value_or("")));
               r.headers.set("X-Reply", "yes");
               co_await w.respond(std::move(r));
             });
  start(std::move(router));
  auto c = client();
  HttpRequest req;
  req.method = Method::post;
  req.target = "/echo?a=1&b=2";
  req.headers.set("X-Test", "hello");
  req.headers.set("Authorization", "Bearer secret-token");
  req.body = "payload";
  auto res = io.run(c->request(std::move(req)));
  ASSERT_TRUE(res) << res.error().message();
  EXPECT_EQ(res->status, 201);
  EXPECT_EQ(res->body, "payload|hello|a=1&b=2|Bearer secret-token");
  EXPECT_EQ(res->headers.get("x-reply"), "yes");
}

TEST_F(Loopback, KeepAliveReusesOneConnection) {
  Router router;
  router.add(Method::get, "/n",
             [](const ServerRequest&, ResponseWriter& w) -> asio::awaitable<void> {
               co_await w.respond(text(200, "ok"));
             });
  start(std::move(router));
  auto c = client();
  for (int i = 0; i < 10; ++i) {
    auto res = get(*c, "/n");
    ASSERT_TRUE(res) << res.error().message();
    EXPECT_EQ(res->body, "ok");
  }
  EXPECT_EQ(server->stats().accepted, 1u);
  EXPECT_EQ(server->stats().requests, 10u);
  EXPECT_EQ(c->stats().connections_opened, 1u);
  EXPECT_EQ(c->stats().reused, 9u);
  EXPECT_EQ(c->stats().idle, 1u);
}

TEST_F(Loopback, ChunkedStreamIsDeliveredIncrementally) {
  std::atomic<bool> last_sent{false};
  Router router;
  router.add(
      Method::get, "/watch", [&](const ServerRequest&, ResponseWriter& w) -> asio::awaitable<void> {
        co_await w.start_stream(200, json_headers());
        co_await w.write_chunk("{\"first\":1}\n");
        co_await gate.pass(w);  // the test opens it only after the client saw the first chunk
        last_sent = true;
        co_await w.write_chunk("{\"last\":2}\n");
        co_await w.end_stream();
      });
  start(std::move(router));
  auto c = client();
  io.run([&]() -> asio::awaitable<void> {
    HttpRequest req;
    req.target = "/watch";
    auto opened = co_await c->open_stream(std::move(req));
    EXPECT_TRUE(opened) << opened.error().message();
    if (!opened) co_return;
    auto stream = *opened;
    EXPECT_EQ(stream->status(), 200);
    EXPECT_EQ(stream->headers().get("Transfer-Encoding"), "chunked");
    auto first = co_await stream->read_some();
    EXPECT_TRUE(first);
    EXPECT_EQ(*first, "{\"first\":1}\n");
    EXPECT_FALSE(last_sent.load()) << "the client must see the first chunk before the last is sent";
    gate.open();
    std::string rest;
    for (;;) {
      auto piece = co_await stream->read_some();
      EXPECT_TRUE(piece) << piece.error().message();
      if (!piece || piece->empty()) break;
      rest += *piece;
    }
    EXPECT_EQ(rest, "{\"last\":2}\n");
  }());
}

TEST_F(Loopback, WatchEventsSplitAcrossChunksDecodeThroughTheFramer) {
  const auto recorded = testing::record_watch_stream(300, 7);
  Router router;
  router.add(Method::get, "/api/v1/pods",
             [&](const ServerRequest&, ResponseWriter& w) -> asio::awaitable<void> {
               co_await w.start_stream(200, json_headers());
               std::mt19937 rng(3);
               std::string_view rest = recorded.bytes;
               while (!rest.empty()) {
                 const std::size_t n = std::min<std::size_t>(rest.size(), 1 + rng() % 900);
                 if (co_await w.write_chunk(rest.substr(0, n))) co_return;
                 rest.remove_prefix(n);
               }
               co_await w.end_stream();
             });
  start(std::move(router));
  auto c = client();
  const auto values = io.run([&]() -> asio::awaitable<std::vector<boost::json::value>> {
    std::vector<boost::json::value> out;
    HttpRequest req;
    req.target = "/api/v1/pods?watch=1";
    auto stream = co_await c->open_stream(std::move(req));
    EXPECT_TRUE(stream);
    if (!stream) co_return out;
    JsonStreamDecoder decoder;
    for (;;) {
      auto piece = co_await (*stream)->read_some();
      EXPECT_TRUE(piece) << piece.error().message();
      if (!piece || piece->empty()) break;
      EXPECT_FALSE(decoder.feed(*piece, out)) << decoder.error_message();
    }
    EXPECT_FALSE(decoder.finish(out));
    co_return out;
  }());
  EXPECT_EQ(values, recorded.events);
}

TEST_F(Loopback, PoolCapIsHonouredAndExtraRequestsWait) {
  std::atomic<int> in_flight{0}, max_in_flight{0};
  Router router;
  router.add(Method::get, "/slow",
             [&](const ServerRequest&, ResponseWriter& w) -> asio::awaitable<void> {
               const int now = ++in_flight;
               int seen = max_in_flight.load();
               while (now > seen && !max_in_flight.compare_exchange_weak(seen, now)) {
               }
               co_await gate.pass(w);
               --in_flight;
               co_await w.respond(text(200, "done"));
             });
  start(std::move(router));
  HttpClientOptions options;
  options.max_connections = 2;
  auto c = client(options);
  std::atomic<int> ok{0};
  for (int i = 0; i < 6; ++i) {
    asio::co_spawn(
        io.io(),
        [&]() -> asio::awaitable<void> {
          HttpRequest req;
          req.target = "/slow";
          auto res = co_await c->request(std::move(req));
          if (res && res->body == "done") ++ok;
        },
        asio::detached);
  }
  ASSERT_TRUE(wait_until([&] { return gate.parked() == 2 && c->stats().waiting == 4; }))
      << "parked " << gate.parked() << " waiting " << c->stats().waiting;
  gate.open();
  ASSERT_TRUE(wait_until([&] { return ok.load() == 6; }));
  EXPECT_EQ(max_in_flight.load(), 2);
  EXPECT_EQ(server->stats().accepted, 2u);
  EXPECT_EQ(c->stats().connections_opened, 2u);
}

TEST_F(Loopback, ManyConcurrentRequestsFromManyThreads) {
  Router router;
  router.add(Method::get, "/n",
             [](const ServerRequest& req, ResponseWriter& w) -> asio::awaitable<void> {
               co_await w.respond(text(200, req.query));
             });
  start(std::move(router));
  HttpClientOptions options;
  options.max_connections = 8;
  auto c = client(options);
  IoThreads callers(4);
  std::atomic<int> ok{0};
  for (int i = 0; i < 200; ++i) {
    asio::co_spawn(
        callers.io(),
        [&, i]() -> asio::awaitable<void> {
          HttpRequest req;
          req.target = "/n?" + std::to_string(i);
          auto res = co_await c->request(std::move(req));
          if (res && res->body == std::to_string(i)) ++ok;
        },
        asio::detached);
  }
  ASSERT_TRUE(wait_until([&] { return ok.load() == 200; })) << ok.load();
  EXPECT_LE(server->stats().accepted, 8u);
}

TEST_F(Loopback, DeadlineFiresOnAStalledServer) {
  Router router;
  router.add(Method::get, "/stall",
             [&](const ServerRequest&, ResponseWriter& w) -> asio::awaitable<void> {
               co_await never.pass(w);
               co_await w.respond(text(200, "too late"));
             });
  start(std::move(router));
  HttpClientOptions options;
  options.io_timeout = milliseconds(200);
  auto c = client(options);
  auto res = get(*c, "/stall");
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error(), Errc::read_timeout) << res.error().message();
  EXPECT_TRUE(is_timeout(res.error()));
  never.open();
}

TEST_F(Loopback, StreamIdleTimeout) {
  Router router;
  router.add(Method::get, "/watch",
             [&](const ServerRequest&, ResponseWriter& w) -> asio::awaitable<void> {
               co_await w.start_stream(200, net::Headers{});
               co_await never.pass(w);
             });
  start(std::move(router));
  auto c = client();
  auto err = io.run([&]() -> asio::awaitable<boost::system::error_code> {
    HttpRequest req;
    req.target = "/watch";
    req.timeout = milliseconds(200);
    auto stream = co_await c->open_stream(std::move(req));
    if (!stream) co_return stream.error();
    auto piece = co_await (*stream)->read_some();
    co_return piece ? boost::system::error_code{} : piece.error();
  }());
  EXPECT_EQ(err, Errc::idle_timeout) << err.message();
  never.open();
}

TEST_F(Loopback, ClosingAStreamFromAnotherCoroutineAbortsThePendingRead) {
  std::atomic<bool> server_saw_disconnect{false};
  Router router;
  router.add(Method::get, "/watch",
             [&](const ServerRequest&, ResponseWriter& w) -> asio::awaitable<void> {
               co_await w.start_stream(200, net::Headers{});
               co_await w.write_chunk("hello");
               if (co_await never.pass(w) == WakeReason::client_gone) server_saw_disconnect = true;
             });
  start(std::move(router));
  auto c = client();
  auto stream = io.run([&]() -> asio::awaitable<std::shared_ptr<HttpStream>> {
    HttpRequest req;
    req.target = "/watch";
    auto s = co_await c->open_stream(std::move(req));
    co_return s ? *s : nullptr;
  }());
  ASSERT_TRUE(stream);
  IoThreads other(1);  // the closer runs on another io_context and thread
  auto err = io.run([&]() -> asio::awaitable<boost::system::error_code> {
    auto first = co_await stream->read_some();
    EXPECT_TRUE(first && *first == "hello");
    asio::co_spawn(
        other.io(),
        [&]() -> asio::awaitable<void> {
          asio::steady_timer t(co_await asio::this_coro::executor, milliseconds(50));
          co_await t.async_wait(asio::use_awaitable);
          stream->close();
        },
        asio::detached);
    auto piece = co_await stream->read_some();  // nothing comes: only close() ends it
    co_return piece ? boost::system::error_code{} : piece.error();
  }());
  EXPECT_EQ(err, asio::error::operation_aborted) << err.message();
  auto again = io.run(stream->read_some());
  EXPECT_EQ(again.error(), asio::error::operation_aborted);
  EXPECT_EQ(c->stats().idle, 0u) << "a closed stream's connection must not be pooled";
  EXPECT_TRUE(wait_until([&] { return server_saw_disconnect.load(); }))
      << "the server handler learns that the client went away";
}

TEST_F(Loopback, ResponseOverTheBodyLimitIsAnError) {
  Router router;
  router.add(Method::get, "/big",
             [](const ServerRequest&, ResponseWriter& w) -> asio::awaitable<void> {
               co_await w.respond(text(200, std::string(5000, 'x')));
             });
  router.add(Method::get, "/big-chunked",
             [](const ServerRequest&, ResponseWriter& w) -> asio::awaitable<void> {
               co_await w.start_stream(200, net::Headers{});
               for (int i = 0; i < 10; ++i) co_await w.write_chunk(std::string(500, 'y'));
               co_await w.end_stream();
             });
  router.add(Method::get, "/small",
             [](const ServerRequest&, ResponseWriter& w) -> asio::awaitable<void> {
               co_await w.respond(text(200, std::string(1000, 'z')));
             });
  start(std::move(router));
  HttpClientOptions options;
  options.body_limit = 1000;
  auto c = client(options);
  auto big = get(*c, "/big");
  ASSERT_FALSE(big);
  EXPECT_EQ(big.error(), Errc::body_too_large);
  EXPECT_EQ(big.error().message(), "response body exceeds the configured limit");
  auto chunked = get(*c, "/big-chunked");
  ASSERT_FALSE(chunked);
  EXPECT_EQ(chunked.error(), Errc::body_too_large);
  auto small = get(*c, "/small");
  ASSERT_TRUE(small) << small.error().message();
  EXPECT_EQ(small->body.size(), 1000u);
}

TEST_F(Loopback, LargeResponseBeyondBeastsDefaultLimit) {
  Router router;
  const std::string body(20u << 20, 'b');  // 20 MiB > Beast's 8 MB default
  router.add(Method::get, "/list",
             [&](const ServerRequest&, ResponseWriter& w) -> asio::awaitable<void> {
               co_await w.respond(text(200, body));
             });
  start(std::move(router));
  auto c = client();
  auto res = get(*c, "/list");
  ASSERT_TRUE(res) << res.error().message();
  EXPECT_EQ(res->body.size(), body.size());
}

// Collects what request_streamed delivers; fails with `fail_at` after that many bytes.
class CollectingSink final : public BodySink {
 public:
  boost::system::error_code on_body(std::string_view piece) override {
    ++pieces;
    text.append(piece);
    if (fail_at != 0 && text.size() >= fail_at) return Errc::invalid_json;
    return {};
  }
  std::string text;
  std::size_t pieces = 0;
  std::size_t fail_at = 0;
};

TEST_F(Loopback, StreamedRequestDeliversLargeBodiesInPiecesAndOtherStatusesWhole) {
  Router router;
  std::string body;
  for (int i = 0; body.size() < (3u << 20); ++i) body += "{\"n\":" + std::to_string(i) + "}\n";
  router.add(Method::get, "/list",
             [&](const ServerRequest&, ResponseWriter& w) -> asio::awaitable<void> {
               co_await w.respond(text(200, body));
             });
  router.add(Method::get, "/chunked",
             [&](const ServerRequest&, ResponseWriter& w) -> asio::awaitable<void> {
               co_await w.start_stream(200, json_headers());
               for (std::size_t at = 0; at < body.size(); at += 100000) {
                 co_await w.write_chunk(body.substr(at, 100000));
               }
               co_await w.end_stream();
             });
  router.add(Method::get, "/missing",
             [](const ServerRequest&, ResponseWriter& w) -> asio::awaitable<void> {
               co_await w.respond(text(404, "{\"reason\":\"NotFound\"}"));
             });
  start(std::move(router));
  auto c = client();
  for (const char* target : {"/list", "/chunked"}) {
    CollectingSink sink;
    HttpRequest req;
    req.target = target;
    auto res = io.run(c->request_streamed(std::move(req), sink));
    ASSERT_TRUE(res) << res.error().message();
    EXPECT_EQ(res->status, 200);
    EXPECT_TRUE(res->body.empty());
    EXPECT_EQ(sink.text.size(), body.size()) << target;
    EXPECT_TRUE(sink.text == body) << target;
    EXPECT_GT(sink.pieces, 10u) << "delivered as it arrives, not at the end";
  }
  CollectingSink sink;
  HttpRequest req;
  req.target = "/missing";
  auto res = io.run(c->request_streamed(std::move(req), sink));
  ASSERT_TRUE(res) << res.error().message();
  EXPECT_EQ(res->status, 404);
  EXPECT_EQ(res->body, "{\"reason\":\"NotFound\"}");
  EXPECT_EQ(sink.pieces, 0u);
}

TEST_F(Loopback, StreamedRequestEndsWithTheSinksError) {
  Router router;
  const std::string body(1u << 20, 'x');
  router.add(Method::get, "/list",
             [&](const ServerRequest&, ResponseWriter& w) -> asio::awaitable<void> {
               co_await w.respond(text(200, body));
             });
  start(std::move(router));
  auto c = client();
  CollectingSink sink;
  sink.fail_at = 1000;
  HttpRequest req;
  req.target = "/list";
  auto res = io.run(c->request_streamed(std::move(req), sink));
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error(), Errc::invalid_json);
  EXPECT_LT(sink.text.size(), body.size());
  // The half-read connection is not reused.
  auto again = get(*c, "/list");
  ASSERT_TRUE(again) << again.error().message();
  EXPECT_TRUE(again->body == body);
  EXPECT_EQ(c->stats().connections_opened, 2u);
}

TEST_F(Loopback, StalePooledConnectionIsRetriedOnce) {
  Router router;
  router.add(Method::get, "/n",
             [](const ServerRequest&, ResponseWriter& w) -> asio::awaitable<void> {
               co_await w.respond(text(200, "ok"));
             });
  HttpServerOptions options;
  options.keep_alive_timeout = milliseconds(50);  // the server drops idle connections fast
  start(std::move(router), options);
  auto c = client();
  ASSERT_TRUE(get(*c, "/n"));
  ASSERT_TRUE(wait_until([&] { return server->stats().active == 0; }));
  auto res = get(*c, "/n");  // goes out on the pooled, now closed connection
  ASSERT_TRUE(res) << res.error().message();
  EXPECT_EQ(res->body, "ok");
  EXPECT_EQ(c->stats().retries, 1u);
  EXPECT_EQ(server->stats().accepted, 2u);
}

TEST_F(Loopback, RoutingExactPrefixFallback405AndHead) {
  const auto reply = [](std::string body) {
    return [body](const ServerRequest&, ResponseWriter& w) -> asio::awaitable<void> {
      co_await w.respond(text(200, body));
    };
  };
  Router router;
  router.add(Method::get, "/healthz", reply("healthz"));
  router.add(Method::put, "/healthz", reply("put"));
  router.add_prefix("/api/", reply("api"));
  router.add_prefix("/api/v1/namespaces/", reply("namespaces"));
  start(std::move(router));
  auto c = client();
  EXPECT_EQ(get(*c, "/healthz")->body, "healthz");
  EXPECT_EQ(get(*c, "/api/v1/pods")->body, "api");
  EXPECT_EQ(get(*c, "/api/v1/namespaces/x/pods")->body, "namespaces");
  EXPECT_EQ(get(*c, "/nothing")->status, 404);
  HttpRequest del;
  del.method = Method::delete_;
  del.target = "/healthz";
  auto not_allowed = io.run(c->request(std::move(del)));
  ASSERT_TRUE(not_allowed);
  EXPECT_EQ(not_allowed->status, 405);
  EXPECT_EQ(not_allowed->headers.get("Allow"), "GET, PUT");
  HttpRequest head;
  head.method = Method::head;
  head.target = "/healthz";
  auto h = io.run(c->request(std::move(head)));
  ASSERT_TRUE(h) << h.error().message();
  EXPECT_EQ(h->status, 200);
  EXPECT_EQ(h->headers.get("Content-Length"), "7");
  EXPECT_TRUE(h->body.empty());
  EXPECT_EQ(get(*c, "/healthz")->body, "healthz") << "connection still in sync after HEAD";
}

TEST_F(Loopback, FallbackHandlerAndPeerAddress) {
  Router router;
  router.set_fallback([](const ServerRequest& req, ResponseWriter& w) -> asio::awaitable<void> {
    co_await w.respond(text(200, req.path + " from " + req.peer));
  });
  start(std::move(router));
  auto c = client();
  auto res = get(*c, "/any/path?x=1");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->body.rfind("/any/path from 127.0.0.1:", 0), 0u) << res->body;
}

TEST_F(Loopback, RequestBodyLimitGives413) {
  Router router;
  router.add(Method::post, "/upload",
             [](const ServerRequest&, ResponseWriter& w) -> asio::awaitable<void> {
               co_await w.respond(text(200, "stored"));
             });
  HttpServerOptions options;
  options.body_limit = 100;
  start(std::move(router), options);
  auto c = client();
  HttpRequest req;
  req.method = Method::post;
  req.target = "/upload";
  req.body = std::string(1000, 'x');
  auto res = io.run(c->request(std::move(req)));
  ASSERT_TRUE(res) << res.error().message();
  EXPECT_EQ(res->status, 413);
  EXPECT_EQ(res->body, "request body exceeds 100 bytes\n");
}

TEST_F(Loopback, HandlerBugsBecome500) {
  Router router;
  router.add(Method::get, "/throws",
             [](const ServerRequest&, ResponseWriter&) -> asio::awaitable<void> {
               throw std::runtime_error("boom");
               co_return;
             });
  router.add(Method::get, "/silent",
             [](const ServerRequest&, ResponseWriter&) -> asio::awaitable<void> { co_return; });
  router.add(Method::get, "/twice",
             [](const ServerRequest&, ResponseWriter& w) -> asio::awaitable<void> {
               co_await w.respond(text(200, "one"));
               const auto second = co_await w.respond(text(200, "two"));
               if (second != Errc::response_already_sent)
                 throw std::logic_error("second respond accepted");
             });
  start(std::move(router));
  auto c = client();
  EXPECT_EQ(get(*c, "/throws")->status, 500);
  EXPECT_EQ(get(*c, "/silent")->status, 500);
  auto twice = get(*c, "/twice");
  EXPECT_EQ(twice->body, "one");
  EXPECT_EQ(get(*c, "/silent")->status, 500) << "server still serving";
}

TEST_F(Loopback, GracefulStopLetsInFlightRequestsFinishAndEndsStreams) {
  std::atomic<int> streams_told{0};
  Router router;
  router.add(
      Method::get, "/slow", [&](const ServerRequest&, ResponseWriter& w) -> asio::awaitable<void> {
        const WakeReason why = co_await gate.pass(w);
        co_await w.respond(text(200, why == WakeReason::stopping ? "finished on stop" : "opened"));
      });
  router.add(Method::get, "/watch",
             [&](const ServerRequest&, ResponseWriter& w) -> asio::awaitable<void> {
               co_await w.start_stream(200, net::Headers{});
               co_await w.write_chunk("event\n");
               while (co_await w.wait(seconds(30)) != WakeReason::stopping) {
               }
               ++streams_told;
               co_await w.end_stream();
             });
  start(std::move(router));
  auto c = client();
  auto s = client();
  std::atomic<bool> slow_done{false};
  std::string slow_body;
  asio::co_spawn(
      io.io(),
      [&]() -> asio::awaitable<void> {
        HttpRequest req;
        req.target = "/slow";
        auto res = co_await c->request(std::move(req));
        if (res) slow_body = res->body;
        slow_done = true;
      },
      asio::detached);
  auto stream = io.run([&]() -> asio::awaitable<std::shared_ptr<HttpStream>> {
    HttpRequest req;
    req.target = "/watch";
    auto opened = co_await s->open_stream(std::move(req));
    if (!opened) co_return nullptr;
    co_await (*opened)->read_some();
    co_return *opened;
  }());
  ASSERT_TRUE(stream);
  ASSERT_TRUE(wait_until([&] { return gate.parked() == 1; }));
  io.run(server->stop(seconds(10)));
  EXPECT_TRUE(wait_until([&] { return slow_done.load(); }));
  EXPECT_EQ(slow_body, "finished on stop");
  EXPECT_EQ(streams_told.load(), 1);
  auto end = io.run(stream->read_some());
  ASSERT_TRUE(end) << end.error().message();
  EXPECT_TRUE(end->empty()) << "the stream ended cleanly";
  EXPECT_EQ(server->stats().active, 0u);
  auto refused = get(*client(), "/slow");
  EXPECT_FALSE(refused) << "no longer accepting";
  server.reset();
}

TEST_F(Loopback, StopClosesWhatIgnoresTheGracePeriod) {
  std::atomic<bool> handler_entered{false};
  Router router;
  router.add(Method::get, "/stubborn",
             [&](const ServerRequest&, ResponseWriter& w) -> asio::awaitable<void> {
               co_await w.start_stream(200, net::Headers{});
               handler_entered = true;
               // Ignores `stopping`; only the forced close (client_gone) ends it.
               while (co_await w.wait(seconds(30)) != WakeReason::client_gone) {
               }
             });
  start(std::move(router));
  auto c = client();
  auto stream = io.run([&]() -> asio::awaitable<std::shared_ptr<HttpStream>> {
    HttpRequest req;
    req.target = "/stubborn";
    auto opened = co_await c->open_stream(std::move(req));
    co_return opened ? *opened : nullptr;
  }());
  ASSERT_TRUE(stream);
  ASSERT_TRUE(wait_until([&] { return handler_entered.load(); }));
  io.run(server->stop(milliseconds(100)));
  EXPECT_EQ(server->stats().active, 0u);
  auto piece = io.run(stream->read_some());
  EXPECT_FALSE(piece) << "the client sees the connection end without the final chunk";
  if (!piece) {
    EXPECT_EQ(piece.error(), Errc::truncated_response) << piece.error().message();
  }
  server.reset();
}

// Bad responses from a scripted peer.

class BadPeer : public ::testing::Test {
 protected:
  boost::system::error_code request_error(ScriptedServer& peer, HttpClientOptions options = {}) {
    auto c = HttpClient::create(io.executor(), "http://127.0.0.1:" + std::to_string(peer.port()),
                                std::move(options));
    EXPECT_TRUE(c);
    HttpRequest req;
    auto res = io.run((*c)->request(std::move(req)));
    return res ? boost::system::error_code{} : res.error();
  }
  boost::system::error_code stream_error(ScriptedServer& peer) {
    auto c = HttpClient::create(io.executor(), "http://127.0.0.1:" + std::to_string(peer.port()));
    EXPECT_TRUE(c);
    return io.run([&]() -> asio::awaitable<boost::system::error_code> {
      auto stream = co_await (*c)->open_stream(HttpRequest{});
      if (!stream) co_return stream.error();
      for (;;) {
        auto piece = co_await (*stream)->read_some();
        if (!piece) co_return piece.error();
        if (piece->empty()) co_return boost::system::error_code{};
      }
    }());
  }
  IoThreads io{2};
};

TEST_F(BadPeer, MalformedChunkHeader) {
  ScriptedServer peer(
      io.executor(),
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\nZZ\r\nxx\r\n");
  EXPECT_EQ(request_error(peer), Errc::malformed_chunk);
  EXPECT_EQ(stream_error(peer), Errc::malformed_chunk);
}

TEST_F(BadPeer, NotHttpAtAll) {
  ScriptedServer peer(io.executor(), "SSH-2.0-OpenSSH_9.2\r\n\r\n");
  const auto ec = request_error(peer);
  EXPECT_EQ(ec, Errc::malformed_response) << ec.message();
}

TEST_F(BadPeer, TruncatedBody) {
  ScriptedServer peer(io.executor(), "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten..");
  EXPECT_EQ(request_error(peer), Errc::truncated_response);
  EXPECT_EQ(stream_error(peer), Errc::truncated_response);
}

TEST_F(BadPeer, ChunkedStreamCutMidChunk) {
  ScriptedServer peer(io.executor(),
                      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n{\"type\":");
  EXPECT_EQ(stream_error(peer), Errc::truncated_response);
}

TEST_F(BadPeer, ClosedWithoutResponse) {
  ScriptedServer peer(io.executor(), "");
  const auto ec = request_error(peer);
  EXPECT_EQ(ec, Errc::connection_closed) << ec.message();
}

TEST_F(BadPeer, BodyUntilCloseIsAccepted) {
  ScriptedServer peer(io.executor(), "HTTP/1.1 200 OK\r\n\r\nuntil close");
  EXPECT_FALSE(request_error(peer));
  EXPECT_FALSE(stream_error(peer));
}

TEST_F(BadPeer, InvalidJsonInAStreamIsAClearError) {
  ScriptedServer peer(io.executor(),
                      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                      "11\r\n{\"type\":\"ADDED\"}\n\r\n"
                      "9\r\n{\"type\":]\r\n0\r\n\r\n");
  auto c = HttpClient::create(io.executor(), "http://127.0.0.1:" + std::to_string(peer.port()));
  ASSERT_TRUE(c);
  auto message = io.run([&]() -> asio::awaitable<std::string> {
    auto stream = co_await (*c)->open_stream(HttpRequest{});
    if (!stream) co_return "open failed";
    JsonStreamDecoder decoder;
    std::vector<boost::json::value> values;
    for (;;) {
      auto piece = co_await (*stream)->read_some();
      if (!piece || piece->empty()) co_return "no error";
      if (decoder.feed(*piece, values)) co_return decoder.error_message();
    }
  }());
  EXPECT_EQ(message, "invalid JSON at byte 25 of the stream: syntax error");
}

TEST_F(BadPeer, ConnectionRefused) {
  std::uint16_t port = 0;
  {
    ScriptedServer gone(io.executor(), "");
    port = gone.port();
  }
  auto c = HttpClient::create(io.executor(), "http://127.0.0.1:" + std::to_string(port));
  ASSERT_TRUE(c);
  auto res = io.run((*c)->request(HttpRequest{}));
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error(), asio::error::connection_refused) << res.error().message();
}

TEST(HttpEndpoint, ParsesUrls) {
  auto e = HttpEndpoint::parse("https://10.0.0.1:6443");
  ASSERT_TRUE(e);
  EXPECT_TRUE(e->tls);
  EXPECT_EQ(e->host, "10.0.0.1");
  EXPECT_EQ(e->port, 6443);
  EXPECT_EQ(e->path_prefix, "");
  EXPECT_EQ(e->authority(), "10.0.0.1:6443");
  auto d = HttpEndpoint::parse("https://rancher.example/k8s/clusters/c-1/");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->port, 443);
  EXPECT_EQ(d->path_prefix, "/k8s/clusters/c-1");
  EXPECT_EQ(d->authority(), "rancher.example");
  auto v6 = HttpEndpoint::parse("http://[::1]:8080");
  ASSERT_TRUE(v6);
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->authority(), "[::1]:8080");
  EXPECT_FALSE(HttpEndpoint::parse("ftp://x"));
  EXPECT_FALSE(HttpEndpoint::parse("not a url"));
  auto bad = HttpEndpoint::parse("https://:6443");
  EXPECT_FALSE(bad);
}

TEST(HttpClient, RejectsHeaderInjection) {
  IoThreads io(1);
  auto c = HttpClient::create(io.executor(), "http://127.0.0.1:1");
  ASSERT_TRUE(c);
  HttpRequest req;
  req.headers.set("Authorization", "Bearer x\r\nX-Evil: 1");
  auto res = io.run((*c)->request(std::move(req)));
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error(), boost::system::errc::invalid_argument);
}

}  // namespace
}  // namespace aop::net

namespace aop::net {
namespace {

TEST(HttpServer, ListenErrorsSayWhere) {
  IoThreads io(1);
  HttpServerOptions bad;
  bad.host = "not-an-ip";
  auto s1 = HttpServer::create(io.executor(), bad, Router{});
  ASSERT_FALSE(s1);
  EXPECT_EQ(s1.error().message, "listen address not-an-ip:0: not an IP address");

  HttpServerOptions any;
  any.host = "";  // all interfaces, free port
  auto first = HttpServer::create(io.executor(), any, Router{});
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_NE((*first)->port(), 0);
  HttpServerOptions same;
  same.host = "localhost";
  same.port = (*first)->port();
  auto second = HttpServer::create(io.executor(), same, Router{});
  ASSERT_FALSE(second);
  EXPECT_NE(second.error().message.find("listen on localhost:"), std::string::npos)
      << second.error().message;
}

}  // namespace
}  // namespace aop::net
