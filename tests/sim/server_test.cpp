// kube-sim's HTTP edge over loopback: plain and TLS serving, bearer tokens, the
// kubeconfig, chunked watch streams with live events, and stream faults.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <boost/asio.hpp>
#include <boost/json.hpp>

#include "net/http_client.hpp"
#include "net/json_stream.hpp"
#include "tools/kube-sim/server.hpp"

namespace aop::sim {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;

class ServerTest : public ::testing::Test {
 protected:
  std::unique_ptr<SimServer> start(SimServerOptions o = {}) {
    o.api.seed = 7;
    auto s = SimServer::create(io_.get_executor(), std::move(o));
    EXPECT_TRUE(s) << (s ? "" : s.error().message);
    (*s)->start();
    return std::move(*s);
  }

  std::shared_ptr<net::HttpClient> client(SimServer& s, const std::string& token = {}) {
    net::HttpClientOptions o;
    o.tls.ca_pem = s.ca_pem();
    o.user_agent = "sim-server-test";
    auto c = net::HttpClient::create(io_.get_executor(), s.url(), o);
    EXPECT_TRUE(c);
    token_ = token;
    return *c;
  }

  net::HttpRequest req(net::Method m, std::string target, std::string body = {}) {
    net::HttpRequest r;
    r.method = m;
    r.target = std::move(target);
    r.body = std::move(body);
    r.headers.add("Content-Type", "application/json");
    if (!token_.empty()) r.headers.add("Authorization", "Bearer " + token_);
    return r;
  }

  // Runs the test body to completion (with a generous deadline), then stops the server.
  void run(SimServer& s, std::function<awaitable<void>()> body) {
    bool done = false;
    std::exception_ptr error;
    asio::co_spawn(
        io_,
        [&]() -> awaitable<void> {
          co_await body();
          done = true;
          co_await s.stop();
        },
        [&](std::exception_ptr e) { error = e; });
    io_.run_for(std::chrono::seconds(60));
    if (error) std::rethrow_exception(error);
    EXPECT_TRUE(done) << "the test body did not finish in time";
  }

  // Reads watch events until `n` arrived or the stream ended.
  static awaitable<std::vector<json::value>> read_events(net::HttpStream& st, std::size_t n,
                                                         bool& ended) {
    net::JsonStreamDecoder decoder;
    std::vector<json::value> out;
    ended = false;
    while (out.size() < n) {
      auto piece = co_await st.read_some();
      if (!piece) {
        ADD_FAILURE() << "stream read failed: " << piece.error().message();
        break;
      }
      if (piece->empty()) {
        ended = true;
        break;
      }
      EXPECT_FALSE(decoder.feed(*piece, out));
    }
    co_return out;
  }

  asio::io_context io_{1};
  std::string token_;
};

constexpr const char* kConfigMap =
    R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"NAME"},"data":{"a":"b"}})";

std::string cm(const std::string& name) {
  std::string s = kConfigMap;
  s.replace(s.find("NAME"), 4, name);
  return s;
}

TEST_F(ServerTest, ServesRequestsAndLiveWatchStreams) {
  auto sim = start();
  auto c = client(*sim);
  run(*sim, [&]() -> awaitable<void> {
    auto v = co_await c->request(req(net::Method::get, "/version"));
    EXPECT_TRUE(v && v->status == 200);
    auto created = co_await c->request(
        req(net::Method::post, "/api/v1/namespaces/default/configmaps", cm("one")));
    EXPECT_TRUE(created && created->status == 201);
    auto list = co_await c->request(req(net::Method::get, "/api/v1/namespaces/default/configmaps"));
    EXPECT_TRUE(list && list->status == 200);
    const auto rv = json::parse(list->body).at("metadata").at("resourceVersion").as_string();

    auto stream = co_await c->open_stream(
        req(net::Method::get,
            "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=" + std::string(rv)));
    EXPECT_TRUE(stream);
    if (!stream) co_return;
    EXPECT_EQ((*stream)->status(), 200);
    EXPECT_EQ((*stream)->headers().get("Content-Type").value_or(""), "application/json");
    auto c2 = co_await c->request(
        req(net::Method::post, "/api/v1/namespaces/default/configmaps", cm("two")));
    EXPECT_TRUE(c2 && c2->status == 201);
    auto d =
        co_await c->request(req(net::Method::delete_, "/api/v1/namespaces/default/configmaps/one"));
    EXPECT_TRUE(d && d->status == 200);
    bool ended = false;
    auto events = co_await read_events(**stream, 2, ended);
    EXPECT_EQ(events.size(), 2u);
    if (events.size() == 2) {
      EXPECT_EQ(events[0].at("type"), "ADDED");
      EXPECT_EQ(events[0].at("object").at("metadata").at("name"), "two");
      EXPECT_EQ(events[1].at("type"), "DELETED");
    }
    auto stats = co_await c->request(req(net::Method::get, "/admin/stats"));
    auto sj = json::parse(stats->body);
    EXPECT_EQ(sj.at("watches"), 1);
    EXPECT_EQ(sj.at("writes").at("by_user_agent").at("sim-server-test"), 3);
    (*stream)->close();
  });
}

TEST_F(ServerTest, TlsTokenAndKubeconfig) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("kube-sim-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  SimServerOptions o;
  o.tls = true;
  o.api.token = "tok3n";
  o.kubeconfig_out = (dir / "kubeconfig").string();
  auto sim = start(o);
  ASSERT_TRUE(sim->write_kubeconfig(o.kubeconfig_out));
  EXPECT_TRUE(sim->url().starts_with("https://127.0.0.1:"));
  std::ifstream f(o.kubeconfig_out);
  std::stringstream text;
  text << f.rdbuf();
  EXPECT_NE(text.str().find("server: " + sim->url()), std::string::npos);
  EXPECT_NE(text.str().find("certificate-authority-data: "), std::string::npos);
  EXPECT_NE(text.str().find("token: tok3n"), std::string::npos);
  auto anonymous = client(*sim);
  run(*sim, [&]() -> awaitable<void> {
    auto r = co_await anonymous->request(req(net::Method::get, "/api/v1/namespaces"));
    EXPECT_TRUE(r);
    EXPECT_EQ(r->status, 401);
    token_ = "tok3n";
    r = co_await anonymous->request(req(net::Method::get, "/api/v1/namespaces"));
    EXPECT_TRUE(r);
    EXPECT_EQ(r->status, 200);
  });
  std::filesystem::remove_all(dir);
}

TEST_F(ServerTest, InjectedStreamCloseEndsTheChunkedResponse) {
  auto sim = start();
  auto c = client(*sim);
  run(*sim, [&]() -> awaitable<void> {
    auto f =
        co_await c->request(req(net::Method::post, "/admin/faults", R"({"close_watch_after":1})"));
    EXPECT_TRUE(f && f->status == 200);
    auto stream = co_await c->open_stream(
        req(net::Method::get, "/api/v1/namespaces/default/configmaps?watch=1"));
    EXPECT_TRUE(stream);
    if (!stream) co_return;
    co_await c->request(req(net::Method::post, "/api/v1/namespaces/default/configmaps", cm("x")));
    bool ended = false;
    auto events = co_await read_events(**stream, 5, ended);
    EXPECT_EQ(events.size(), 1u);
    EXPECT_TRUE(ended) << "the stream must end cleanly after the injected close";
  });
}

TEST_F(ServerTest, LatencyFaultDelaysTheResponse) {
  auto sim = start();
  auto c = client(*sim);
  run(*sim, [&]() -> awaitable<void> {
    co_await c->request(req(net::Method::post, "/admin/faults", R"({"latency_ms":200})"));
    const auto t0 = std::chrono::steady_clock::now();
    auto r = co_await c->request(req(net::Method::get, "/api/v1/namespaces"));
    EXPECT_TRUE(r && r->status == 200);
    // A lower bound only: the delay must have happened.
    EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(200));
  });
}

// SIGTERM (stop()) as kube-apiserver handles it: new connections are refused at once,
// an open watch keeps receiving events for the grace period and then ends cleanly.
TEST_F(ServerTest, OnStopOpenWatchesAreServedForTheGraceThenEnd) {
  SimServerOptions o;
  o.shutdown_grace = std::chrono::seconds(1);
  auto sim = start(o);
  auto c = client(*sim);
  auto fresh = client(*sim);
  bool done = false;
  bool stopped = false;
  std::exception_ptr error;
  asio::co_spawn(
      io_,
      [&]() -> awaitable<void> {
        auto stream = co_await c->open_stream(
            req(net::Method::get, "/api/v1/namespaces/default/configmaps?watch=1"));
        EXPECT_TRUE(stream);
        if (!stream) co_return;
        asio::co_spawn(
            io_,
            [&]() -> awaitable<void> {
              co_await sim->stop();
              stopped = true;
            },
            asio::detached);
        // Stopping: a new connection is refused ...
        auto refused = co_await fresh->request(req(net::Method::get, "/api/v1/namespaces"));
        EXPECT_FALSE(refused) << "a new connection was served after stop()";
        // ... while the open watch still gets events (a write made in the process, as one
        // on a connection that was open already).
        auto late = json::parse(cm("late"));
        late.as_object()["metadata"].as_object()["namespace"] = "default";
        EXPECT_TRUE(sim->api().create_object(std::move(late), "test"));
        bool ended = false;
        auto events = co_await read_events(**stream, 1, ended);
        EXPECT_EQ(events.size(), 1u);
        if (!events.empty()) {
          EXPECT_EQ(events[0].at("object").at("metadata").at("name"), "late");
        }
        EXPECT_FALSE(stopped) << "stop() completed with a watch still open";
        // After the grace the stream ends cleanly, and stop() completes.
        events = co_await read_events(**stream, 1, ended);
        EXPECT_TRUE(ended);
        EXPECT_TRUE(events.empty());
        done = true;
      },
      [&](std::exception_ptr e) { error = e; });
  io_.run_for(std::chrono::seconds(60));
  if (error) std::rethrow_exception(error);
  EXPECT_TRUE(done) << "the test body did not finish in time";
  EXPECT_TRUE(stopped);
}

}  // namespace
}  // namespace aop::sim
