// The informer cache: watch events per second decoded into the store, and memory per
// cached object for 100,000 objects, full and metadata-only, next to the objects' JSON.
//
// Decoding is measured on both of the informer's paths: the stream decoders it uses
// (k8s/object_stream.hpp: a LIST page's items, a watch stream's events, encoded
// straight from the parser's tokens) and, for comparison, the older one through a JSON
// tree (net::JsonStreamDecoder, then Object::from_json). Either way each object is
// upserted into a Store (a LIST replaces the store's contents once). Memory is measured as heap in
// use (mallinfo2) after filling a store from the event text and dropping everything
// else, so it counts exactly what the cache holds: the objects, the store's tree
// nodes and its namespace index. The Boost.JSON DOM of the same objects is measured the
// same way for comparison.
#include <malloc.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <boost/json.hpp>

#include "k8s/object.hpp"
#include "k8s/object_stream.hpp"
#include "k8s/store.hpp"
#include "net/json_stream.hpp"
#include "tests/k8s/object_fixtures.hpp"

namespace json = boost::json;
using namespace aop;
using namespace aop::k8s;

namespace {

constexpr int kObjects = 100000;

enum class Kind { service_monitor, pod, secret };

json::value make(Kind kind, int i, std::mt19937& rng) {
  switch (kind) {
    case Kind::service_monitor:
      return fixtures::service_monitor(i, rng);
    case Kind::pod:
      return fixtures::pod(i, rng);
    case Kind::secret:
      return fixtures::secret(i, rng);
  }
  return nullptr;
}

GroupVersionKind gvk_of(Kind kind) {
  switch (kind) {
    case Kind::service_monitor:
      return {"monitoring.coreos.com", "v1", "ServiceMonitor"};
    case Kind::pod:
      return {"", "v1", "Pod"};
    case Kind::secret:
      return {"", "v1", "Secret"};
  }
  return {};
}

// A watch stream of ADDED events for `n` objects, and the JSON sizes of the objects as
// sent and as the cache keeps them (after its transform).
struct Stream {
  std::string text;
  double json_bytes = 0;       // average object JSON size as sent
  double kept_json_bytes = 0;  // ... after the transform (what the cache represents)
};

const Stream& stream(Kind kind, bool metadata_only) {
  static std::map<std::pair<int, bool>, Stream> cache;
  auto& s = cache[{static_cast<int>(kind), metadata_only}];
  if (!s.text.empty()) return s;
  std::mt19937 rng(12345);
  Transform t;
  t.metadata_only = metadata_only;
  std::size_t total = 0, kept = 0;
  for (int i = 0; i < kObjects; ++i) {
    json::value obj = make(kind, i, rng);
    const std::string text = json::serialize(obj);
    total += text.size();
    kept += json::serialize(Object::from_json(obj, t)->to_json()).size();
    s.text += R"({"type":"ADDED","object":)";
    s.text += text;
    s.text += "}\n";
  }
  s.json_bytes = static_cast<double>(total) / kObjects;
  s.kept_json_bytes = static_cast<double>(kept) / kObjects;
  return s;
}

std::size_t heap_in_use() {
  malloc_trim(0);
  return mallinfo2().uordblks;
}

long rss_bytes() {
  long pages = 0, resident = 0;
  if (std::FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return resident * sysconf(_SC_PAGESIZE);
}

// Feeds the stream in 64 KiB reads (as the HTTP layer delivers it) into a store.
void decode_into(Store& store, const std::string& text, const Transform& t,
                 const GroupVersionKind& gvk) {
  net::JsonStreamDecoder decoder;
  std::vector<json::value> events;
  constexpr std::size_t kRead = 64 * 1024;
  for (std::size_t off = 0; off < text.size(); off += kRead) {
    events.clear();
    decoder.feed(std::string_view(text).substr(off, kRead), events);
    for (auto& e : events) {
      store.upsert(Object::from_json(e.at("object"), t, gvk));
    }
  }
}

void BM_DecodeIntoCache(benchmark::State& state, Kind kind, bool metadata_only) {
  const Stream& s = stream(kind, metadata_only);
  Transform t;
  t.metadata_only = metadata_only;
  const auto gvk = gvk_of(kind);
  for (auto _ : state) {
    auto store = std::make_unique<Store>();
    decode_into(*store, s.text, t, gvk);
    benchmark::DoNotOptimize(store->size());
    state.PauseTiming();
    store.reset();  // freeing is not decoding
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * kObjects);
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(s.text.size()));
  state.counters["json_bytes_per_object"] = s.json_bytes;
}

// The informer's watch path: WatchDecoder fed 64 KiB reads, each object upserted.
void BM_WatchDecoderIntoCache(benchmark::State& state, Kind kind, bool metadata_only) {
  const Stream& s = stream(kind, metadata_only);
  Transform t;
  t.metadata_only = metadata_only;
  const auto gvk = gvk_of(kind);
  for (auto _ : state) {
    auto store = std::make_unique<Store>();
    WatchDecoder decoder(t, gvk);
    std::vector<DecodedWatchEvent> events;
    constexpr std::size_t kRead = 64 * 1024;
    for (std::size_t off = 0; off < s.text.size(); off += kRead) {
      events.clear();
      if (decoder.feed(std::string_view(s.text).substr(off, kRead), events)) {
        state.SkipWithError("decode failed");
      }
      for (auto& e : events) store->upsert(std::move(e.object));
    }
    benchmark::DoNotOptimize(store->size());
    state.PauseTiming();
    store.reset();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * kObjects);
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(s.text.size()));
}

// The informer's LIST path: pages of 500 items (as the API server sends them: items
// without apiVersion and kind) through ListDecoder in 64 KiB reads, then one
// Store::replace with every item.
void BM_ListDecoderIntoCache(benchmark::State& state, Kind kind, bool metadata_only) {
  static std::map<std::pair<int, bool>, std::vector<std::string>> all_pages;
  auto& pages = all_pages[{static_cast<int>(kind), metadata_only}];
  std::size_t bytes = 0;
  if (pages.empty()) {
    std::mt19937 rng(12345);
    std::vector<json::value> objects;
    for (int i = 0; i < kObjects; ++i) {
      json::value obj = make(kind, i, rng);
      obj.as_object().erase("apiVersion");
      obj.as_object().erase("kind");
      objects.push_back(std::move(obj));
    }
    // In the API server's order: by namespace, then name.
    const auto key = [](const json::value& v) {
      const auto& md = v.at("metadata");
      return std::pair(std::string(md.at("namespace").as_string()),
                       std::string(md.at("name").as_string()));
    };
    std::sort(objects.begin(), objects.end(),
              [&](const json::value& a, const json::value& b) { return key(a) < key(b); });
    json::array items;
    for (std::size_t i = 0; i < objects.size(); ++i) {
      items.push_back(std::move(objects[i]));
      if (items.size() == 500 || i + 1 == objects.size()) {
        json::object page{{"kind", "List"},
                          {"apiVersion", "v1"},
                          {"metadata", json::object{{"resourceVersion", "1"}}},
                          {"items", std::move(items)}};
        pages.push_back(json::serialize(page));
        items = json::array();
      }
    }
  }
  for (const auto& p : pages) bytes += p.size();
  Transform t;
  t.metadata_only = metadata_only;
  const auto gvk = gvk_of(kind);
  for (auto _ : state) {
    auto store = std::make_unique<Store>();
    std::vector<ObjectPtr> all;
    for (const auto& page : pages) {
      ListDecoder decoder(t, gvk);
      constexpr std::size_t kRead = 64 * 1024;
      for (std::size_t off = 0; off < page.size(); off += kRead) {
        decoder.feed(std::string_view(page).substr(off, kRead));
      }
      if (decoder.finish()) state.SkipWithError("decode failed");
      for (auto& o : decoder.items()) all.push_back(std::move(o));
    }
    benchmark::DoNotOptimize(store->replace(std::move(all)).size());
    state.PauseTiming();
    store.reset();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * kObjects);
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes));
}

// Only the framing and JSON parsing, for the split of the decode cost.
void BM_ParseOnly(benchmark::State& state, Kind kind) {
  const Stream& s = stream(kind, false);
  for (auto _ : state) {
    net::JsonStreamDecoder decoder;
    std::vector<json::value> events;
    constexpr std::size_t kRead = 64 * 1024;
    std::size_t n = 0;
    for (std::size_t off = 0; off < s.text.size(); off += kRead) {
      events.clear();
      decoder.feed(std::string_view(s.text).substr(off, kRead), events);
      n += events.size();
    }
    benchmark::DoNotOptimize(n);
  }
  state.SetItemsProcessed(state.iterations() * kObjects);
}

// Memory per cached object: one measurement of 100,000 objects.
void BM_CacheMemory(benchmark::State& state, Kind kind, bool metadata_only) {
  const Stream& s = stream(kind, metadata_only);
  Transform t;
  t.metadata_only = metadata_only;
  const auto gvk = gvk_of(kind);
  for (auto _ : state) {
    const std::size_t heap_before = heap_in_use();
    const long rss_before = rss_bytes();
    auto store = std::make_unique<Store>();
    decode_into(*store, s.text, t, gvk);
    const std::size_t heap_after = heap_in_use();
    const long rss_after = rss_bytes();
    std::size_t reported = 0;
    for (const auto& o : store->list()) reported += o->memory_bytes();
    state.counters["objects"] = static_cast<double>(store->size());
    state.counters["cache_bytes_per_object"] =
        static_cast<double>(heap_after - heap_before) / kObjects;
    state.counters["rss_bytes_per_object"] = static_cast<double>(rss_after - rss_before) / kObjects;
    state.counters["object_bytes_per_object"] = static_cast<double>(reported) / kObjects;
    state.counters["json_bytes_per_object"] = s.json_bytes;
    state.counters["kept_json_bytes_per_object"] = s.kept_json_bytes;
    state.counters["ratio_to_kept_json"] =
        static_cast<double>(heap_after - heap_before) / kObjects / s.kept_json_bytes;
    store.reset();
  }
}

// The same objects as Boost.JSON DOM values (what a naive cache would hold).
void BM_DomMemory(benchmark::State& state, Kind kind) {
  const Stream& s = stream(kind, false);
  for (auto _ : state) {
    const std::size_t heap_before = heap_in_use();
    std::vector<json::value> objects;
    objects.reserve(kObjects);
    {
      net::JsonStreamDecoder decoder;
      std::vector<json::value> events;
      for (std::size_t off = 0; off < s.text.size(); off += 64 * 1024) {
        events.clear();
        decoder.feed(std::string_view(s.text).substr(off, 64 * 1024), events);
        for (auto& e : events) objects.push_back(json::value(e.at("object")));  // a fresh copy
      }
    }
    const std::size_t heap_after = heap_in_use();
    state.counters["dom_bytes_per_object"] =
        static_cast<double>(heap_after - heap_before) / kObjects;
    state.counters["json_bytes_per_object"] = s.json_bytes;
  }
}

}  // namespace

BENCHMARK_CAPTURE(BM_DecodeIntoCache, service_monitor_full, Kind::service_monitor, false)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_DecodeIntoCache, service_monitor_metadata, Kind::service_monitor, true)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_DecodeIntoCache, pod_full, Kind::pod, false)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_DecodeIntoCache, secret_metadata, Kind::secret, true)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_WatchDecoderIntoCache, service_monitor_full, Kind::service_monitor, false)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_WatchDecoderIntoCache, pod_full, Kind::pod, false)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_WatchDecoderIntoCache, secret_full, Kind::secret, false)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_WatchDecoderIntoCache, secret_metadata, Kind::secret, true)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ListDecoderIntoCache, service_monitor_full, Kind::service_monitor, false)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ListDecoderIntoCache, secret_full, Kind::secret, false)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ParseOnly, service_monitor, Kind::service_monitor)
    ->Unit(benchmark::kMillisecond);

BENCHMARK_CAPTURE(BM_CacheMemory, service_monitor_full, Kind::service_monitor, false)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_CacheMemory, service_monitor_metadata, Kind::service_monitor, true)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_CacheMemory, pod_full, Kind::pod, false)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_CacheMemory, pod_metadata, Kind::pod, true)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_CacheMemory, secret_full, Kind::secret, false)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_CacheMemory, secret_metadata, Kind::secret, true)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_DomMemory, service_monitor, Kind::service_monitor)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_DomMemory, pod, Kind::pod)->Iterations(1)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
