// Throughput of decoding a Kubernetes watch stream into JSON values: the framer alone
// at several read sizes, the floor (parsing each event on its own, already split), and
// the whole client path (HttpServer -> loopback -> HttpStream -> JsonStreamDecoder).
#include <benchmark/benchmark.h>

#include <ctime>
#include <thread>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/parse.hpp>

#include "net/http_client.hpp"
#include "net/http_server.hpp"
#include "net/json_stream.hpp"
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

}  // namespace

BENCHMARK_MAIN();
