// Throughput of decoding a Kubernetes watch stream into JSON values: the framer alone
// at several read sizes, the floor (parsing each event on its own, already split), and
// the whole client path (HttpServer -> loopback -> HttpStream -> JsonStreamDecoder).
// And the client's read path alone, plain and TLS: a large response read into a sink
// (a LIST page) and a watch stream, with the server on its own thread so that the
// client's CPU is measured apart.
#include <benchmark/benchmark.h>

#include <pthread.h>

#include <atomic>
#include <ctime>
#include <mutex>
#include <thread>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/parse.hpp>

#include "net/http_client.hpp"
#include "net/http_server.hpp"
#include "net/json_stream.hpp"
#include "net/tls_certs.hpp"
#include "tests/net/watch_events.hpp"

namespace {

namespace asio = boost::asio;
using aop::net::JsonStreamDecoder;

// 2,000 Pod events (~3 MB): big enough that per-call overheads vanish, small enough
// to stay a realistic burst after a relist.
const aop::net::testing::RecordedStream& stream() {
  static const auto recorded = aop::net::testing::record_watch_stream(2000, 42, false);
  return recorded;
}

// Fed in pieces of range(0) bytes, each decoded value consumed (dropped) right after
// the feed that completed it, as a reflector does.
void BM_FramerWatchStream(benchmark::State& state) {
  const std::string& bytes = stream().bytes;
  const auto piece = static_cast<std::size_t>(state.range(0));
  std::vector<boost::json::value> values;
  std::size_t decoded = 0;
  for (auto _ : state) {
    JsonStreamDecoder decoder;
    std::string_view rest = bytes;
    while (!rest.empty()) {
      const std::size_t n = std::min(piece, rest.size());
      if (decoder.feed(rest.substr(0, n), values)) state.SkipWithError("decode failed");
      rest.remove_prefix(n);
      decoded += values.size();
      benchmark::DoNotOptimize(values.data());
      values.clear();
    }
  }
  if (decoded != state.iterations() * stream().events.size()) state.SkipWithError("lost events");
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes.size()));
  state.counters["events/s"] =
      benchmark::Counter(static_cast<double>(decoded), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_FramerWatchStream)->ArgName("piece")->Arg(64 * 1024)->Arg(4096)->Arg(256)->Arg(16);

// The floor: boost::json::parse on each event, already cut at value boundaries.
void BM_ParseEachEventAlone(benchmark::State& state) {
  std::vector<std::string> events;
  std::size_t total = 0;
  for (const auto& e : stream().events) {
    events.push_back(boost::json::serialize(e));
    total += events.back().size() + 1;
  }
  for (auto _ : state) {
    for (const auto& e : events) benchmark::DoNotOptimize(boost::json::parse(e));
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * total));
}
BENCHMARK(BM_ParseEachEventAlone);

double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// End to end over loopback: the server writes the recorded stream one event per chunk
// (range(0) == 0, as the API server flushes each watch event) or in range(0)-byte
// chunks; the client reads it with HttpStream::read_some and frames it.
void BM_WatchOverLoopbackHttp(benchmark::State& state) {
  const std::string& bytes = stream().bytes;
  const auto chunk_bytes = static_cast<std::size_t>(state.range(0));
  asio::io_context io(2);
  auto work = asio::make_work_guard(io);
  std::vector<std::thread> threads;
  for (int i = 0; i < 2; ++i) threads.emplace_back([&] { io.run(); });

  aop::net::Router router;
  router.add(
      aop::net::Method::get, "/watch",
      [&](const aop::net::ServerRequest&, aop::net::ResponseWriter& w) -> asio::awaitable<void> {
        co_await w.start_stream(200, aop::net::Headers{});
        std::string_view rest = bytes;
        while (!rest.empty()) {
          const std::size_t n =
              chunk_bytes > 0 ? std::min(chunk_bytes, rest.size()) : rest.find('\n') + 1;
          if (co_await w.write_chunk(rest.substr(0, n))) co_return;
          rest.remove_prefix(n);
        }
        co_await w.end_stream();
      });
  auto server = aop::net::HttpServer::create(io.get_executor(), {}, std::move(router));
  if (!server) {
    state.SkipWithError("server");
    return;
  }
  (*server)->start();
  auto client = aop::net::HttpClient::create(
      io.get_executor(), "http://127.0.0.1:" + std::to_string((*server)->port()));

  const double cpu_start = process_cpu_seconds();
  for (auto _ : state) {
    auto done = asio::co_spawn(
        io,
        [&]() -> asio::awaitable<std::size_t> {
          aop::net::HttpRequest req;
          req.target = "/watch";
          auto s = co_await (*client)->open_stream(std::move(req));
          if (!s) co_return 0;
          JsonStreamDecoder decoder;
          std::vector<boost::json::value> values;
          std::size_t decoded = 0;
          for (;;) {
            auto piece = co_await (*s)->read_some();
            if (!piece || piece->empty()) break;
            if (decoder.feed(*piece, values)) break;
            decoded += values.size();
            values.clear();  // consumed
          }
          co_return decoded;
        },
        asio::use_future);
    if (done.get() != stream().events.size()) state.SkipWithError("lost events");
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes.size()));
  // Wall time suffers on a loaded machine; CPU of the whole process (server and client
  // threads) per byte does not.
  const double cpu = process_cpu_seconds() - cpu_start;
  state.counters["MB_per_cpu_s"] =
      static_cast<double>(state.iterations() * bytes.size()) / 1e6 / cpu;

  asio::co_spawn(io, (*server)->stop(std::chrono::seconds(1)), asio::use_future).get();
  work.reset();
  for (auto& t : threads) t.join();
}
BENCHMARK(BM_WatchOverLoopbackHttp)
    ->ArgName("chunk")
    ->Arg(0)
    ->Arg(16 * 1024)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// An io_context run by `n` threads whose CPU time can be read while they run.
class Threads {
 public:
  Threads(asio::io_context& io, int n) : work_(asio::make_work_guard(io)) {
    for (int i = 0; i < n; ++i) {
      threads_.emplace_back([this, &io] {
        clockid_t id{};
        pthread_getcpuclockid(pthread_self(), &id);
        {
          const std::lock_guard lock(mutex_);
          clocks_.push_back(id);
        }
        ready_.fetch_add(1);
        io.run();
      });
    }
    while (ready_.load() < n) std::this_thread::yield();
  }
  ~Threads() {
    work_.reset();
    for (auto& t : threads_) t.join();
  }
  double cpu_seconds() {
    const std::lock_guard lock(mutex_);
    double total = 0;
    for (const clockid_t id : clocks_) {
      timespec ts{};
      clock_gettime(id, &ts);
      total += static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
    }
    return total;
  }

 private:
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::vector<clockid_t> clocks_;
  std::atomic<int> ready_{0};
};

struct Pki {
  aop::net::CertificateAndKey ca, server;
};
const Pki& pki() {
  static const Pki p = [] {
    Pki out;
    out.ca = aop::net::generate_ca("bench CA").value();
    aop::net::CertificateRequest req;
    req.common_name = "localhost";
    req.ip_addresses = {"127.0.0.1"};
    out.server = aop::net::issue_certificate(out.ca, req).value();
    return out;
  }();
  return p;
}

// A server on its own thread and a client on two (as the operator runs its io_context),
// plain or TLS (range(0) == 1). The figure is the client threads' CPU per MB read.
class ClientReadBench {
 public:
  ClientReadBench(bool tls, aop::net::Router router)
      : server_threads_(server_io_, 1), client_threads_(client_io_, 2) {
    aop::net::HttpServerOptions options;
    if (tls) options.tls = aop::net::TlsServerOptions{pki().server.cert_pem, pki().server.key_pem};
    auto server =
        aop::net::HttpServer::create(server_io_.get_executor(), options, std::move(router));
    if (!server) return;
    server_ = std::move(*server);
    server_->start();
    aop::net::HttpClientOptions client_options;
    client_options.tls.ca_pem = pki().ca.cert_pem;
    auto client = aop::net::HttpClient::create(
        client_io_.get_executor(),
        std::string(tls ? "https" : "http") + "://127.0.0.1:" + std::to_string(server_->port()),
        client_options);
    if (client) client_ = std::move(*client);
  }
  ~ClientReadBench() {
    if (server_) {
      asio::co_spawn(server_io_, server_->stop(std::chrono::seconds(1)), asio::use_future).get();
    }
  }
  bool ok() const { return server_ && client_; }
  asio::io_context& client_io() { return client_io_; }
  aop::net::HttpClient& client() { return *client_; }
  double client_cpu() { return client_threads_.cpu_seconds(); }

 private:
  asio::io_context server_io_{1};
  asio::io_context client_io_{2};
  Threads server_threads_;
  Threads client_threads_;
  std::shared_ptr<aop::net::HttpServer> server_;
  std::shared_ptr<aop::net::HttpClient> client_;
};

// A LIST page as the informer reads it: a 16 MB response (Content-Length) handed to a
// BodySink piece by piece (HttpClient::request_streamed).
void BM_ClientReadsLargeResponse(benchmark::State& state) {
  static const std::string body = [] {
    std::string b;
    while (b.size() < (16u << 20)) b += stream().bytes;
    b.resize(16u << 20);
    return b;
  }();
  aop::net::Router router;
  router.add(
      aop::net::Method::get, "/list",
      [](const aop::net::ServerRequest&, aop::net::ResponseWriter& w) -> asio::awaitable<void> {
        aop::net::HttpResponse r;
        r.status = 200;
        r.body = body;
        co_await w.respond(std::move(r));
      });
  ClientReadBench bench(state.range(0) == 1, std::move(router));
  if (!bench.ok()) {
    state.SkipWithError("set-up failed");
    return;
  }
  struct Counting final : aop::net::BodySink {
    std::size_t bytes = 0;
    boost::system::error_code on_body(std::string_view piece) override {
      bytes += piece.size();
      return {};
    }
  };
  double cpu = 0;
  for (auto _ : state) {
    Counting sink;
    const double before = bench.client_cpu();
    auto done = asio::co_spawn(
        bench.client_io(),
        [&]() -> asio::awaitable<bool> {
          aop::net::HttpRequest req;
          req.target = "/list";
          auto r = co_await bench.client().request_streamed(std::move(req), sink);
          co_return r && r->status == 200;
        },
        asio::use_future);
    if (!done.get() || sink.bytes != body.size()) state.SkipWithError("bad response");
    cpu += bench.client_cpu() - before;
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * body.size()));
  state.counters["client_MB_per_cpu_s"] =
      static_cast<double>(state.iterations() * body.size()) / 1e6 / cpu;
}
BENCHMARK(BM_ClientReadsLargeResponse)
    ->ArgName("tls")
    ->Arg(0)
    ->Arg(1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// The watch stream of BM_WatchOverLoopbackHttp in 16 KiB chunks, plain and TLS, read
// with HttpStream::read_some and framed; the client's CPU only.
void BM_ClientReadsWatchStream(benchmark::State& state) {
  const std::string& bytes = stream().bytes;
  aop::net::Router router;
  router.add(
      aop::net::Method::get, "/watch",
      [&](const aop::net::ServerRequest&, aop::net::ResponseWriter& w) -> asio::awaitable<void> {
        co_await w.start_stream(200, aop::net::Headers{});
        std::string_view rest = bytes;
        while (!rest.empty()) {
          const std::size_t n = std::min<std::size_t>(16 * 1024, rest.size());
          if (co_await w.write_chunk(rest.substr(0, n))) co_return;
          rest.remove_prefix(n);
        }
        co_await w.end_stream();
      });
  ClientReadBench bench(state.range(0) == 1, std::move(router));
  if (!bench.ok()) {
    state.SkipWithError("set-up failed");
    return;
  }
  double cpu = 0;
  for (auto _ : state) {
    const double before = bench.client_cpu();
    auto done = asio::co_spawn(
        bench.client_io(),
        [&]() -> asio::awaitable<std::size_t> {
          aop::net::HttpRequest req;
          req.target = "/watch";
          auto s = co_await bench.client().open_stream(std::move(req));
          if (!s) co_return 0;
          JsonStreamDecoder decoder;
          std::vector<boost::json::value> values;
          std::size_t decoded = 0;
          for (;;) {
            auto piece = co_await (*s)->read_some();
            if (!piece || piece->empty()) break;
            if (decoder.feed(*piece, values)) break;
            decoded += values.size();
            values.clear();
          }
          co_return decoded;
        },
        asio::use_future);
    if (done.get() != stream().events.size()) state.SkipWithError("lost events");
    cpu += bench.client_cpu() - before;
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes.size()));
  state.counters["client_MB_per_cpu_s"] =
      static_cast<double>(state.iterations() * bytes.size()) / 1e6 / cpu;
}
BENCHMARK(BM_ClientReadsWatchStream)
    ->ArgName("tls")
    ->Arg(0)
    ->Arg(1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
