// kube-sim benchmarks: LIST throughput for 100,000 objects (in process and over HTTP),
// watch fan-out (in process, and end to end over HTTP with several watching clients),
// and memory per stored object against its JSON size.
//
// The HTTP benchmarks run the server on its own thread (its own io_context, as the
// kube-sim binary does) and the clients on the benchmark thread: two busy threads on a
// two-core machine. "server_cpu_us_per_event" is the server thread's CPU time divided
// by the events it fanned out, the figure that says how far it is from being the
// bottleneck.
#include <malloc.h>
#include <pthread.h>
#include <time.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <thread>

#include <benchmark/benchmark.h>
#include <boost/asio.hpp>
#include <boost/json.hpp>

#include "net/http_client.hpp"
#include "net/json_stream.hpp"
#include "tools/kube-sim/api.hpp"
#include "tools/kube-sim/server.hpp"

namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using aop::sim::ApiServer;
using aop::sim::Request;
using aop::sim::Response;

constexpr int kNamespaces = 100;

// A Secret of about 700 bytes of JSON once stored: labels, an annotation, three keys.
std::string secret_json(int i) {
  char buf[1024];
  std::snprintf(
      buf, sizeof buf,
      R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"secret-%06d","namespace":"ns-%03d",)"
      R"("labels":{"app.kubernetes.io/name":"app-%d","app.kubernetes.io/part-of":"bench","tier":"%s"},)"
      R"("annotations":{"bench.example.com/owner":"team-%d"}},"type":"Opaque",)"
      R"("data":{"username":"YWRtaW4tdXNlci0wMDAwMQ==","password":"c2VjcmV0LXBhc3N3b3JkLXZhbHVlLTEyMzQ1Njc4OTA=",)"
      R"("config.yaml":"c2VydmVyOgogIHVybDogaHR0cHM6Ly9leGFtcGxlLmNvbS9hcGkvdjEKICB0aW1lb3V0OiAzMHMKICByZXRyaWVzOiA1Cg=="}})",
      i, i % kNamespaces, i % 50, (i % 3 == 0) ? "front" : "back", i % 20);
  return buf;
}

Response call(ApiServer& api, std::string method, std::string target, std::string body = {},
              std::string content_type = "application/json", std::string accept = {}) {
  Request r;
  r.method = std::move(method);
  r.target = std::move(target);
  r.body = std::move(body);
  r.content_type = std::move(content_type);
  r.accept = std::move(accept);
  r.user_agent = "sim-bench";
  return api.handle(r);
}

void fill(ApiServer& api, int objects) {
  for (int n = 0; n < kNamespaces; ++n) {
    char ns[64];
    std::snprintf(ns, sizeof ns, R"({"metadata":{"name":"ns-%03d"}})", n);
    call(api, "POST", "/api/v1/namespaces", ns);
  }
  for (int i = 0; i < objects; ++i) {
    char target[128];
    std::snprintf(target, sizeof target, "/api/v1/namespaces/ns-%03d/secrets", i % kNamespaces);
    auto r = call(api, "POST", target, secret_json(i));
    if (r.status != 201) {
      std::fprintf(stderr, "fill: %d %s\n", r.status, r.body_string().c_str());
      std::abort();
    }
  }
}

// One server with 100,000 Secrets, built once.
ApiServer& big_store() {
  static std::unique_ptr<ApiServer> api = [] {
    aop::sim::ServerOptions o;
    o.seed = 1;
    auto a = std::make_unique<ApiServer>(o);
    fill(*a, 100'000);
    return a;
  }();
  return *api;
}

void BM_ListInProcess(benchmark::State& state) {
  auto& api = big_store();
  const bool metadata = state.range(0) == 1;
  const std::string accept =
      metadata ? "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1" : "";
  std::size_t bytes = 0;
  for (auto _ : state) {
    auto r = call(api, "GET", "/api/v1/secrets", {}, {}, accept);
    std::string body = aop::sim::flatten(r.body);  // what the HTTP edge sends
    bytes = body.size();
    benchmark::DoNotOptimize(body.data());
  }
  state.counters["objects"] = 100'000;
  state.counters["MB"] = static_cast<double>(bytes) / 1e6;
  state.SetBytesProcessed(static_cast<int64_t>(bytes) * state.iterations());
  state.SetItemsProcessed(100'000 * state.iterations());
}
BENCHMARK(BM_ListInProcess)
    ->Arg(0)
    ->Arg(1)
    ->ArgName("metadata_only")
    ->Unit(benchmark::kMillisecond);

void BM_ListPagedInProcess(benchmark::State& state) {
  auto& api = big_store();
  const int limit = static_cast<int>(state.range(0));
  int pages = 0;
  for (auto _ : state) {
    std::string cont;
    pages = 0;
    do {
      std::string target = "/api/v1/secrets?limit=" + std::to_string(limit);
      if (!cont.empty()) target += "&continue=" + cont;
      auto r = call(api, "GET", target);
      std::string body = aop::sim::flatten(r.body);
      // Only the list metadata is needed to continue.
      const auto mdpos = body.find(R"("continue":")");
      cont.clear();
      if (mdpos != std::string::npos && mdpos < body.find(R"("items":)")) {
        const auto start = mdpos + 12;
        cont = body.substr(start, body.find('"', start) - start);
      }
      ++pages;
    } while (!cont.empty());
  }
  state.counters["pages"] = pages;
  state.SetItemsProcessed(100'000 * state.iterations());
}
BENCHMARK(BM_ListPagedInProcess)->Arg(500)->ArgName("limit")->Unit(benchmark::kMillisecond);

void BM_ListSelectorInProcess(benchmark::State& state) {
  auto& api = big_store();
  std::size_t items = 0;
  for (auto _ : state) {
    auto r = call(
        api, "GET",
        "/api/v1/secrets?labelSelector=tier%3Dfront,app.kubernetes.io/name%20in%20(app-3,app-6)");
    std::string body = aop::sim::flatten(r.body);
    items = static_cast<std::size_t>(std::count(body.begin(), body.end(), '\n'));
    benchmark::DoNotOptimize(body.data());
  }
  (void)items;
  state.SetItemsProcessed(100'000 * state.iterations());  // objects examined
}
BENCHMARK(BM_ListSelectorInProcess)->Unit(benchmark::kMillisecond);

// Memory per stored object versus its JSON size. Uses malloc statistics around loading
// 100,000 Secrets into a fresh store (the default watch history of 10,000 events per
// resource included).
void BM_MemoryPerObject(benchmark::State& state) {
  const int n = 100'000;
  double per_object = 0;
  double json_size = 0;
  for (auto _ : state) {
    malloc_trim(0);
    const auto before = mallinfo2().uordblks;
    aop::sim::ServerOptions o;
    o.seed = 1;
    auto api = std::make_unique<ApiServer>(o);
    fill(*api, n);
    const auto after = mallinfo2().uordblks;
    std::size_t json_bytes = 0;
    for (const auto& [k, c] : api->store().collections()) {
      if (k != "secrets") continue;
      for (const auto& obj : c->objects()) json_bytes += obj->json().size();
    }
    per_object = static_cast<double>(after - before) / n;
    json_size = static_cast<double>(json_bytes) / n;
  }
  state.counters["bytes_per_object"] = per_object;
  state.counters["json_bytes_per_object"] = json_size;
  state.counters["ratio"] = per_object / json_size;
}
BENCHMARK(BM_MemoryPerObject)->Iterations(1)->Unit(benchmark::kMillisecond);

// Write + fan-out in process: each update is serialized once and handed to every
// watcher, which the connection then drains.
void BM_WatchFanoutInProcess(benchmark::State& state) {
  const int watchers = static_cast<int>(state.range(0));
  aop::sim::ServerOptions o;
  o.seed = 1;
  ApiServer api(o);
  for (int i = 0; i < 1000; ++i) {
    call(api, "POST", "/api/v1/namespaces/default/configmaps",
         R"({"metadata":{"name":"cm-)" + std::to_string(i) +
             R"(","labels":{"app":"bench"}},"data":{"counter":"0"}})");
  }
  std::vector<aop::sim::WatcherPtr> ws;
  for (int i = 0; i < watchers; ++i) {
    ws.push_back(call(api, "GET",
                      "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=" +
                          std::to_string(api.store().rv()))
                     .watch);
  }
  std::int64_t i = 0;
  std::size_t bytes = 0;
  for (auto _ : state) {
    const std::string body = R"({"data":{"counter":")" + std::to_string(i) + R"("}})";
    call(api, "PATCH", "/api/v1/namespaces/default/configmaps/cm-" + std::to_string(i % 1000), body,
         "application/merge-patch+json");
    for (auto& w : ws) {
      auto pieces = w->take();
      for (auto& p : pieces) bytes += p.data.size();
    }
    ++i;
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["watchers"] = watchers;
  state.counters["events_delivered_per_s"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * watchers, benchmark::Counter::kIsRate);
  (void)bytes;
}
BENCHMARK(BM_WatchFanoutInProcess)->Arg(1)->Arg(5)->Arg(20)->ArgName("watchers");

// ---------------------------------------------------------------------------------------
// Over HTTP

double thread_cpu_seconds(pthread_t t) {
  clockid_t cid;
  if (pthread_getcpuclockid(t, &cid) != 0) return 0;
  timespec ts{};
  clock_gettime(cid, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// A kube-sim on its own thread.
class ServerThread {
 public:
  explicit ServerThread(std::function<void(ApiServer&)> setup) {
    aop::sim::SimServerOptions o;
    o.api.seed = 1;
    auto s = aop::sim::SimServer::create(io_.get_executor(), o);
    if (!s) std::abort();
    server_ = std::move(*s);
    setup(server_->api());
    server_->start();
    url_ = server_->url();
    thread_ = std::thread([this] {
      auto guard = asio::make_work_guard(io_);
      io_.run();
    });
  }
  ~ServerThread() {
    io_.stop();
    thread_.join();
  }
  const std::string& url() const { return url_; }
  double cpu_seconds() { return thread_cpu_seconds(thread_.native_handle()); }

 private:
  asio::io_context io_{1};
  std::unique_ptr<aop::sim::SimServer> server_;
  std::string url_;
  std::thread thread_;
};

template <class F>
void run_client(F&& body) {
  asio::io_context io{1};
  bool done = false;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        co_await body(io);
        done = true;
      },
      asio::detached);
  io.run();
  if (!done) std::abort();
}

void BM_ListHttp(benchmark::State& state) {
  static ServerThread server([](ApiServer& api) { fill(api, 100'000); });
  std::size_t bytes = 0;
  const double cpu0 = server.cpu_seconds();
  for (auto _ : state) {
    run_client([&](asio::io_context& io) -> asio::awaitable<void> {
      auto client = *aop::net::HttpClient::create(io.get_executor(), server.url());
      aop::net::HttpRequest req;
      req.target = "/api/v1/secrets";
      auto r = co_await client->request(req);
      if (!r || r->status != 200) std::abort();
      bytes = r->body.size();
      client->close();
    });
  }
  state.counters["MB"] = static_cast<double>(bytes) / 1e6;
  state.counters["server_cpu_ms_per_list"] =
      (server.cpu_seconds() - cpu0) * 1e3 / static_cast<double>(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(bytes) * state.iterations());
  state.SetItemsProcessed(100'000 * state.iterations());
}
BENCHMARK(BM_ListHttp)->Unit(benchmark::kMillisecond)->UseRealTime();

// Opens `watchers` watches of the default namespace's ConfigMaps from `rv`; each decodes
// its stream until it has seen `events` events, then increments `finished`. The streams
// are returned so that the caller keeps them open.
asio::awaitable<std::vector<std::shared_ptr<aop::net::HttpStream>>> open_watchers(
    aop::net::HttpClient& client, asio::io_context& io, std::string rv, int watchers, int events,
    std::atomic<int>& finished) {
  std::vector<std::shared_ptr<aop::net::HttpStream>> streams;
  for (int w = 0; w < watchers; ++w) {
    aop::net::HttpRequest wr;
    wr.target = "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=" + rv;
    auto st = co_await client.open_stream(wr);
    if (!st) std::abort();
    streams.push_back(*st);
    asio::co_spawn(
        io,
        [st = *st, events, &finished]() -> asio::awaitable<void> {
          aop::net::JsonStreamDecoder decoder;
          std::vector<json::value> decoded;
          int seen = 0;
          while (seen < events) {
            auto piece = co_await st->read_some();
            if (!piece || piece->empty()) std::abort();
            decoded.clear();
            decoder.feed(*piece, decoded);
            seen += static_cast<int>(decoded.size());
          }
          ++finished;
        },
        asio::detached);
  }
  co_return streams;
}

// End to end: `writers` concurrent clients update ConfigMaps through the API while
// `watchers` clients each stream and decode every event. One iteration = 10,000 writes,
// done when every watcher has decoded all 10,000 events.
void BM_WatchFanoutHttp(benchmark::State& state) {
  const int watchers = static_cast<int>(state.range(0));
  static constexpr int kWrites = 10'000;
  constexpr int kWriters = 16;
  ServerThread server([](ApiServer& api) {
    for (int i = 0; i < 1000; ++i) {
      call(api, "POST", "/api/v1/namespaces/default/configmaps",
           R"({"metadata":{"name":"cm-)" + std::to_string(i) +
               R"(","labels":{"app":"bench"}},"data":{"counter":"0"}})");
    }
  });
  double server_cpu = 0;
  double elapsed = 0;
  std::int64_t round = 0;
  for (auto _ : state) {
    const double cpu0 = server.cpu_seconds();
    run_client([&](asio::io_context& io) -> asio::awaitable<void> {
      aop::net::HttpClientOptions co;
      co.max_connections = kWriters;
      auto client = *aop::net::HttpClient::create(io.get_executor(), server.url(), co);
      aop::net::HttpRequest lr;
      lr.target = "/api/v1/namespaces/default/configmaps?limit=1";
      auto list = co_await client->request(lr);
      const std::string rv(
          json::parse(list->body).at("metadata").at("resourceVersion").as_string());
      std::atomic<int> finished{0};
      const auto streams = co_await open_watchers(*client, io, rv, watchers, kWrites, finished);
      const auto t0 = std::chrono::steady_clock::now();
      int next = 0;
      int writers_done = 0;
      asio::steady_timer all_written(io, std::chrono::steady_clock::time_point::max());
      for (int k = 0; k < kWriters; ++k) {
        asio::co_spawn(
            io,
            [&]() -> asio::awaitable<void> {
              while (next < kWrites) {
                const int i = next++;
                aop::net::HttpRequest pr;
                pr.method = aop::net::Method::patch;
                pr.target = "/api/v1/namespaces/default/configmaps/cm-" + std::to_string(i % 1000);
                pr.headers.add("Content-Type", "application/merge-patch+json");
                pr.body = R"({"data":{"counter":")" + std::to_string(round) + "-" +
                          std::to_string(i) + R"("}})";
                auto r = co_await client->request(pr);
                if (!r || r->status != 200) std::abort();
              }
              if (++writers_done == kWriters) all_written.cancel();
            },
            asio::detached);
      }
      asio::steady_timer poll(io);
      while (finished < watchers) {
        poll.expires_after(std::chrono::milliseconds(1));
        co_await poll.async_wait(asio::as_tuple(asio::use_awaitable));
      }
      elapsed += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      for (auto& s : streams) s->close();
      client->close();
    });
    server_cpu += server.cpu_seconds() - cpu0;
    ++round;
  }
  const double iters = static_cast<double>(state.iterations());
  state.counters["watchers"] = watchers;
  state.counters["writes_per_s"] = kWrites * iters / elapsed;
  state.counters["events_delivered_per_s"] = kWrites * iters * watchers / elapsed;
  state.counters["server_cpu_us_per_write"] = server_cpu * 1e6 / (kWrites * iters);
}
BENCHMARK(BM_WatchFanoutHttp)
    ->Arg(1)
    ->Arg(5)
    ->ArgName("watchers")
    ->Iterations(3)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// Fan-out capacity of the server alone over HTTP: events are generated on the server
// thread itself (no HTTP writers competing for the CPU) and streamed to `watchers`
// clients that decode every event.
void BM_WatchFanoutServerOnly(benchmark::State& state) {
  const int watchers = static_cast<int>(state.range(0));
  static constexpr int kEvents = 20'000;
  aop::sim::SimServerOptions so;
  so.api.seed = 1;
  asio::io_context server_io{1};
  auto sim = std::move(*aop::sim::SimServer::create(server_io.get_executor(), so));
  for (int i = 0; i < 1000; ++i) {
    call(sim->api(), "POST", "/api/v1/namespaces/default/configmaps",
         R"({"metadata":{"name":"cm-)" + std::to_string(i) + R"("},"data":{"counter":"0"}})");
  }
  sim->start();
  std::thread server_thread([&] {
    auto guard = asio::make_work_guard(server_io);
    server_io.run();
  });
  double elapsed = 0;
  double server_cpu = 0;
  std::int64_t round = 0;
  for (auto _ : state) {
    const double cpu0 = thread_cpu_seconds(server_thread.native_handle());
    run_client([&](asio::io_context& io) -> asio::awaitable<void> {
      auto client = *aop::net::HttpClient::create(io.get_executor(), sim->url());
      aop::net::HttpRequest lr;
      lr.target = "/api/v1/namespaces/default/configmaps?limit=1";
      auto list = co_await client->request(lr);
      const std::string rv(
          json::parse(list->body).at("metadata").at("resourceVersion").as_string());
      std::atomic<int> finished{0};
      const auto streams = co_await open_watchers(*client, io, rv, watchers, kEvents, finished);
      const auto t0 = std::chrono::steady_clock::now();
      // Generate the events on the server thread, in batches so streams interleave.
      asio::post(server_io, [&sim, r = round] {
        for (int i = 0; i < kEvents; ++i) {
          call(sim->api(), "PATCH",
               "/api/v1/namespaces/default/configmaps/cm-" + std::to_string(i % 1000),
               R"({"data":{"counter":")" + std::to_string(r) + "-" + std::to_string(i) + R"("}})",
               "application/merge-patch+json");
        }
      });
      asio::steady_timer poll(io);
      while (finished < watchers) {
        poll.expires_after(std::chrono::milliseconds(1));
        co_await poll.async_wait(asio::as_tuple(asio::use_awaitable));
      }
      elapsed += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      for (auto& s : streams) s->close();
      client->close();
    });
    server_cpu += thread_cpu_seconds(server_thread.native_handle()) - cpu0;
    ++round;
  }
  server_io.stop();
  server_thread.join();
  const double iters = static_cast<double>(state.iterations());
  state.counters["watchers"] = watchers;
  state.counters["events_per_s_per_watcher"] = kEvents * iters / elapsed;
  state.counters["events_delivered_per_s"] = kEvents * iters * watchers / elapsed;
  state.counters["server_cpu_us_per_event"] = server_cpu * 1e6 / (kEvents * iters);
}
BENCHMARK(BM_WatchFanoutServerOnly)
    ->Arg(5)
    ->Arg(20)
    ->ArgName("watchers")
    ->Iterations(3)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
