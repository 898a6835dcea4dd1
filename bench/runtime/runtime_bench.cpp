// Runtime benchmarks: work-queue throughput (the pure core, and the asynchronous queue
// with workers on a thread pool), dependency-index lookups among 10,000 roots, and the
// reconciles per second of a no-op resync of 10,000 roots through the whole runtime
// (controller, per-key strands, dependency index, desired state, hashing, apply
// decision from the caches) with the example controller of the integration test.
#include <benchmark/benchmark.h>

#include <atomic>
#include <memory>
#include <thread>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/json.hpp>

#include "net/log.hpp"
#include "reconcile/runtime/controller.hpp"
#include "reconcile/runtime/dependency_index.hpp"
#include "reconcile/runtime/queue_core.hpp"
#include "reconcile/runtime/work_queue.hpp"
#include "tests/runtime/example_controller.hpp"
#include "tests/runtime/fake_api.hpp"

namespace {

using namespace aop;
using namespace aop::runtime;
namespace json = boost::json;

// prefix + n. (Spelled out: GCC 12 at -O3 warns falsely on `"literal" + std::to_string`.)
std::string numbered(std::string_view prefix, long n) {
  std::string s(prefix);
  s += std::to_string(n);
  return s;
}

std::vector<std::string> make_keys(int n) {
  std::vector<std::string> keys;
  keys.reserve(n);
  for (int i = 0; i < n; ++i) keys.push_back(numbered("ns-", i % 100) + numbered("/root-", i));
  return keys;
}

// add + get + done of distinct keys through the pure state machine.
void BM_QueueCore_AddGetDone(benchmark::State& state) {
  const auto keys = make_keys(10000);
  net::FakeClock clock;
  QueueCore q({}, clock.now());
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores)
    for (const auto& k : keys) q.add(k, clock.now());
    while (auto item = q.get(clock.now())) q.done(item->key, clock.now());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(keys.size()));
}
BENCHMARK(BM_QueueCore_AddGetDone);

// Adds of keys already pending (a resync storm over a backlog): deduplicated.
void BM_QueueCore_DedupAdd(benchmark::State& state) {
  const auto keys = make_keys(10000);
  net::FakeClock clock;
  QueueCore q({}, clock.now());
  for (const auto& k : keys) q.add(k, clock.now());
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores)
    for (const auto& k : keys) q.add(k, clock.now());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(keys.size()));
}
BENCHMARK(BM_QueueCore_DedupAdd);

// Keys through the asynchronous queue: one producer thread adding, `workers` coroutines
// on a 2-thread pool taking and finishing them (the workers do no work of their own).
void BM_RateLimitedQueue_Workers(benchmark::State& state) {
  const int workers = static_cast<int>(state.range(0));
  const auto keys = make_keys(20000);
  net::metrics::Registry registry;
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores)
    boost::asio::thread_pool pool(2);
    QueueOptions o;
    o.name = "bench";
    o.registry = &registry;
    RateLimitedQueue q(pool.get_executor(), o);
    std::atomic<long> done{0};
    for (int w = 0; w < workers; ++w) {
      boost::asio::co_spawn(
          boost::asio::make_strand(pool),
          [&]() -> boost::asio::awaitable<void> {
            while (auto key = co_await q.get()) {
              q.done(*key);
              ++done;
            }
          },
          boost::asio::detached);
    }
    for (const auto& k : keys) q.add(k);
    while (done.load() < static_cast<long>(keys.size())) {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    q.shut_down();
    pool.join();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(keys.size()));
}
BENCHMARK(BM_RateLimitedQueue_Workers)
    ->Arg(1)
    ->Arg(4)
    ->Arg(16)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime();

// An update event among 10,000 roots of one namespace, each selecting its own label.
void BM_DependencyIndex_UpdateLookup(benchmark::State& state) {
  DependencyIndex index;
  const GroupKind sm{"monitoring.coreos.com", "ServiceMonitor"};
  for (int i = 0; i < 10000; ++i) {
    RootDependencies d;
    KindSelection s;
    s.kind = sm;
    s.ns = "ns";
    s.selector = k8s::parse_label_selector_string(numbered("instance=i", i)).value();
    d.selections.push_back(s);
    d.objects.push_back({{"", "Secret"}, {"ns", numbered("creds-", i)}});
    index.set(numbered("ns/root-", i), d);
  }
  const Labels a{{"instance", "i17"}, {"app", "web"}};
  const Labels b{{"instance", "i18"}, {"app", "web"}};
  const k8s::MapLabels va(a), vb(b);
  std::size_t found = 0;
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores)
    found += index.affected(sm, "ns", "m", va, vb).size();
  }
  benchmark::DoNotOptimize(found);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DependencyIndex_UpdateLookup);

// The whole runtime on a no-op resync of 10,000 roots (100 namespaces, 10 dependency
// groups each, one owned Secret per root). Setup creates everything once through the
// fake API server and fills the caches; each iteration is one full resync, which must
// make no write. Items = reconciles.
class NoopResync {
 public:
  static constexpr int kRoots = 10000;

  NoopResync() : pool_(2) {
    net::log::configure(net::log::Level::warn, net::log::Format::text);
    for (int n = 0; n < 100; ++n) {
      for (int g = 0; g < 10; ++g) {
        api_.put(json::object{
            {"apiVersion", "v1"},
            {"kind", "ConfigMap"},
            {"metadata", json::object{{"namespace", numbered("ns-", n)},
                                      {"name", numbered("dep-g", g)},
                                      {"labels", json::object{{"dep-group", numbered("g", g)}}}}},
            {"data", json::object{{"value", numbered("v", n * 10 + g)}}}});
      }
    }
    for (int i = 0; i < kRoots; ++i) {
      api_.put(json::object{{"apiVersion", "v1"},
                            {"kind", "ConfigMap"},
                            {"metadata", json::object{{"namespace", numbered("ns-", i % 100)},
                                                      {"name", numbered("root-", i)},
                                                      {"labels", json::object{{"role", "root"}}}}},
                            {"data", json::object{{"group", numbered("g", (i / 100) % 10)}}}});
    }
    // Roots and dependencies are both ConfigMaps: split them into their two "informers".
    api_.sync("ConfigMap", all_configmaps_);
    std::vector<k8s::ObjectPtr> roots, deps;
    for (const auto& o : all_configmaps_.list()) {
      (o->label("role") ? roots : deps).push_back(o);
    }
    roots_.replace(std::move(roots));
    deps_.replace(std::move(deps));
    cache_.add({"", "Secret"}, owned_);
    ApplyOptions ao = testing::ExampleController::apply_options();
    ao.registry = &registry_;
    engine_ = std::make_unique<ApplyEngine>(api_, cache_, ao);
    example_ = std::make_unique<testing::ExampleController>(roots_, deps_, index_, *engine_);
    ControllerOptions co;
    co.name = "bench";
    co.workers = 4;
    co.resync_period = Duration::zero();
    co.registry = &registry_;
    controller_ = std::make_unique<Controller>(
        pool_.get_executor(), co,
        [this](std::string key) { return example_->reconcile(std::move(key)); },
        [this] {
          std::vector<std::string> keys;
          for (const auto& r : roots_.list()) keys.push_back(r->key().str());
          return keys;
        });
    controller_->start();
    resync_and_wait();  // cold: creates every owned Secret
    api_.sync("Secret", owned_);
    if (owned_.size() != static_cast<std::size_t>(kRoots)) {
      throw std::runtime_error("setup: expected one owned Secret per root");
    }
  }

  ~NoopResync() {
    controller_->shut_down();
    pool_.join();
  }

  // Enqueues every root and waits until each has been reconciled once more.
  void resync_and_wait() {
    const long target = example_->total() + kRoots;
    controller_->resync_now();
    auto& q = controller_->queue();
    while (example_->total() < target || q.len() > 0 || q.processing() > 0) {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }

  int writes() const { return api_.writes(); }

 private:
  boost::asio::thread_pool pool_;
  testing::FakeApi api_;
  k8s::Store all_configmaps_, roots_, deps_, owned_;
  InformerCache cache_;
  DependencyIndex index_;
  net::metrics::Registry registry_;
  std::unique_ptr<ApplyEngine> engine_;
  std::unique_ptr<testing::ExampleController> example_;
  std::unique_ptr<Controller> controller_;
};

void BM_NoopResync_10000Roots(benchmark::State& state) {
  NoopResync setup;
  const int writes = setup.writes();
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores)
    setup.resync_and_wait();
  }
  if (setup.writes() != writes) state.SkipWithError("a no-op resync wrote");
  state.SetItemsProcessed(state.iterations() * NoopResync::kRoots);
  state.counters["writes"] = setup.writes() - writes;
}
BENCHMARK(BM_NoopResync_10000Roots)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime();

}  // namespace

BENCHMARK_MAIN();
