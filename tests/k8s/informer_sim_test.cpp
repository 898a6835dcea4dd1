// Informers against the test cluster: the cache stays equal to the server through
// injected faults, deletes made while disconnected are observed, metadata-only and
// streaming-list informers. The cases that inject faults or size kube-sim's watch
// history (or, streaming lists, need a server newer than the test kube-apiserver 1.24)
// are InformerKubeSimOnly; InformerSim runs on both servers.
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <set>

#include <gtest/gtest.h>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>

#include "k8s/api_client.hpp"
#include "k8s/informer.hpp"
#include "k8s/informer_factory.hpp"
#include "net/metrics.hpp"
#include "tests/k8s/async_helpers.hpp"
#include "tests/k8s/cluster.hpp"
#include "tests/k8s/gate_client.hpp"
#include "tests/k8s/sim_fixture.hpp"

namespace json = boost::json;
namespace asio = boost::asio;
namespace tst = aop::testing;
using namespace aop::k8s;
using namespace std::chrono_literals;

namespace {

using aop::testing::kConfigMap;
const GroupVersionKind kSecret{"", "v1", "Secret"};
constexpr int kNamespaces = 20;

// Writes a YAML file with the namespaces and `count` ConfigMaps, for --preload.
std::string write_preload(const std::string& dir, int count) {
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/objects.yaml";
  std::ofstream out(path);
  for (int n = 0; n < kNamespaces; ++n) {
    out << "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ns-" << n << "\n---\n";
  }
  for (int i = 0; i < count; ++i) {
    out << "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-" << i << "\n  namespace: ns-"
        << (i % kNamespaces) << "\n  labels:\n    app: app-" << (i % 7) << "\ndata:\n  value: \""
        << i << "\"\n  config.yaml: |\n    key: value-" << i << "\n    other: [1, 2, 3]\n---\n";
  }
  return path;
}

std::string temp_dir(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          (name + "-" + std::to_string(::getpid()) + "-" +
           std::to_string(std::chrono::steady_clock::now().time_since_epoch().count())))
      .string();
}

ApiClientOptions fast_client(std::string user_agent) {
  ApiClientOptions o;
  o.user_agent = std::move(user_agent);
  o.qps = 0;
  o.retry_backoff.initial = 10ms;
  o.retry_backoff.cap = 200ms;
  return o;
}

InformerOptions fast_informer(GroupVersionKind gvk) {
  InformerOptions o;
  o.gvk = std::move(gvk);
  o.backoff.initial = 20ms;
  o.backoff.cap = 500ms;
  o.min_watch_timeout = 5s;
  o.max_watch_timeout = 10s;
  return o;
}

// What the handlers saw, replayed into a map: must end equal to the server too.
struct HandlerView {
  std::mutex mutex;  // owns everything below (handlers run on the informer's strand)
  std::map<std::string, std::string> rv_by_key;
  std::set<std::string> deleted;
  int adds = 0, updates = 0, deletes = 0;
  std::vector<std::string> errors;

  EventHandler handler() {
    EventHandler h;
    h.on_add = [this](const ObjectPtr& o) {
      const std::lock_guard lock(mutex);
      ++adds;
      const auto key = o->key().str();
      if (rv_by_key.count(key)) errors.push_back("add of a present key " + key);
      rv_by_key[key] = std::string(o->resource_version());
    };
    h.on_update = [this](const ObjectPtr& old_obj, const ObjectPtr& new_obj) {
      const std::lock_guard lock(mutex);
      ++updates;
      const auto key = new_obj->key().str();
      const auto it = rv_by_key.find(key);
      if (it == rv_by_key.end()) {
        errors.push_back("update of an absent key " + key);
      } else if (it->second != old_obj->resource_version()) {
        errors.push_back("update of " + key + " with a stale old object");
      }
      rv_by_key[key] = std::string(new_obj->resource_version());
    };
    h.on_delete = [this](const ObjectPtr& o) {
      const std::lock_guard lock(mutex);
      ++deletes;
      const auto key = o->key().str();
      if (rv_by_key.erase(key) == 0) errors.push_back("delete of an absent key " + key);
      deleted.insert(key);
    };
    return h;
  }
};

// The server's objects (by key: resourceVersion) read with a fresh client.
std::map<std::string, json::value> server_objects(tst::IoThreads& io, ApiClient& client,
                                                  const GroupVersionKind& gvk) {
  auto list = io.run(client.list(gvk, "", {}));
  EXPECT_TRUE(list) << list.error().describe();
  std::map<std::string, json::value> out;
  if (!list) return out;
  for (auto& item : list->items) {
    const auto& md = item.at("metadata");
    std::string key =
        std::string(md.at("namespace").as_string()) + "/" + std::string(md.at("name").as_string());
    out.emplace(std::move(key), std::move(item));
  }
  return out;
}

// Differences between the cache and the server's objects (full contents), as text.
std::vector<std::string> differences(Store& store, const std::map<std::string, json::value>& server,
                                     const GroupVersionKind& gvk, const Transform& transform = {}) {
  std::vector<std::string> diffs;
  std::set<std::string> seen;
  for (const auto& obj : store.list()) {
    const auto key = obj->key().str();
    seen.insert(key);
    const auto it = server.find(key);
    if (it == server.end()) {
      diffs.push_back("cached but not on the server: " + key);
      continue;
    }
    const auto expected = Object::from_json(it->second, transform, gvk)->to_json();
    if (obj->to_json() != expected) {
      diffs.push_back("differs: " + key + " cached rv " + std::string(obj->resource_version()) +
                      " server rv " +
                      std::string(it->second.at("metadata").at("resourceVersion").as_string()));
    }
  }
  for (const auto& [key, v] : server) {
    if (!seen.count(key)) diffs.push_back("on the server but not cached: " + key);
  }
  return diffs;
}

bool cache_equals_server(Store& store, const std::map<std::string, json::value>& server) {
  if (store.size() != server.size()) return false;
  for (const auto& [key, v] : server) {
    const auto slash = key.find('/');
    const auto obj = store.get({key.substr(0, slash), key.substr(slash + 1)});
    if (!obj || obj->resource_version() != v.at("metadata").at("resourceVersion").as_string()) {
      return false;
    }
  }
  return true;
}

json::value new_configmap(int id) {
  json::object md;
  md["name"] = "new-" + std::to_string(id);
  md["namespace"] = "ns-" + std::to_string(id % kNamespaces);
  json::object data;
  data["value"] = std::to_string(id);
  json::object o;
  o["apiVersion"] = "v1";
  o["kind"] = "ConfigMap";
  o["metadata"] = std::move(md);
  o["data"] = std::move(data);
  return o;
}

json::value value_patch(std::uint64_t v) {
  json::object data;
  data["value"] = std::to_string(v);
  json::object p;
  p["data"] = std::move(data);
  return p;
}

// One mutator: random creates, patches and deletes of ConfigMaps. Failures (injected
// faults) are ignored: the final comparison is against the server's list.
asio::awaitable<void> mutate_worker(ApiClient& client, std::uint64_t seed, int ops,
                                    std::atomic<int>& next_name, std::atomic<int>& running) {
  std::mt19937_64 r(seed);
  for (int i = 0; i < ops; ++i) {
    const int pick = static_cast<int>(r() % 10);
    const int n = static_cast<int>(r() % 10000);
    const ObjectKey key{"ns-" + std::to_string(n % kNamespaces), "cm-" + std::to_string(n)};
    if (pick < 3) {
      const json::value obj = new_configmap(next_name++);
      co_await client.create(obj);
    } else if (pick < 8) {
      const json::value patch = value_patch(r());
      co_await client.patch(kConfigMap, key, PatchType::merge, patch);
    } else {
      const DeleteOptions options;
      co_await client.remove(kConfigMap, key, options);
    }
  }
  --running;
}

asio::awaitable<void> mutate(ApiClient& client, std::uint64_t seed, int ops, int concurrency,
                             std::atomic<int>& next_name) {
  std::mt19937_64 rng(seed);
  std::atomic<int> running{concurrency};
  auto ex = co_await asio::this_coro::executor;
  for (int c = 0; c < concurrency; ++c) {
    asio::co_spawn(ex, mutate_worker(client, rng(), ops / concurrency, next_name, running),
                   asio::detached);
  }
  while (running.load() > 0) {
    asio::steady_timer t(ex, 5ms);
    co_await t.async_wait(asio::use_awaitable);
  }
}

}  // namespace

TEST(InformerKubeSimOnly, TenThousandObjectsStayEqualThroughFaults) {
  const std::string dir = temp_dir("aop-informer-sim");
  const std::string preload = write_preload(dir, 10000);
  tst::KubeSim sim({"--preload", preload, "--watch-history", "2000", "--bookmark-interval", "1s",
                    "--seed", "7"});
  std::filesystem::remove_all(dir);
  tst::IoThreads io(2);
  auto informer_client =
      make_api_client(io.executor(), sim.client_config(), fast_client("informer"));
  auto mutator = make_api_client(io.executor(), sim.client_config(), fast_client("mutator"));

  HandlerView view;
  auto informer = make_informer(io.executor(), *informer_client, fast_informer(kConfigMap));
  informer->add_handler(view.handler());
  informer->add_index("app", [](const Object& o) {
    std::vector<std::string> v;
    if (auto l = o.label("app")) v.emplace_back(*l);
    return v;
  });
  informer->start();
  ASSERT_TRUE(tst::wait_until([&] { return informer->has_synced(); }, 120s)) << "never synced";
  EXPECT_EQ(informer->store().size(), 10000u);
  EXPECT_EQ(informer->store().list_namespace("ns-3").size(), 500u);
  EXPECT_EQ(informer->store().by_index("app", "app-2").size(), 1429u);

  // Fault phases. Each runs mutations, then waits until its fault has fired and the
  // informer has opened new watches under it (streams are closed every few events so
  // that the informer keeps making requests that meet the fault).
  struct Phase {
    const char* faults;
    const char* mode;  // the fault counter that must move
    int ops;
  };
  const Phase phases[] = {
      {R"({"reset": true, "close_watch_after": 25})", "close_watch_after", 400},
      {R"({"reset": true, "close_watch_probability": 0.05})", "close_watch_probability", 400},
      {R"({"reset": true, "gone_in_stream_next_watch": 3, "expire_watches": true})",
       "gone_in_stream_next_watch", 300},
      {R"({"reset": true, "gone_next_watch": 3, "expire_watches": true})", "gone_next_watch", 300},
      {R"({"reset": true, "http_429": 0.5, "retry_after_seconds": 1, "close_watch_after": 20})",
       "http_429", 150},
      {R"({"reset": true, "http_500": 0.3, "close_watch_after": 20})", "http_500", 400},
      {R"({"reset": true, "http_503": 0.3, "retry_after_seconds": 0, "close_watch_after": 20})",
       "http_503", 400},
  };
  auto counter = [&](const char* mode) {
    return sim.stats().at("faults").at(mode).to_number<std::int64_t>();
  };
  auto watches_started = [&] {
    return sim.stats().at("watches_started").to_number<std::int64_t>();
  };
  std::atomic<int> next_name{0};
  std::uint64_t seed = 1;
  for (const Phase& phase : phases) {
    const auto fired_before = counter(phase.mode);
    const auto watches_before = watches_started();
    sim.set_faults(phase.faults);
    io.run(mutate(*mutator, seed++, phase.ops, 16, next_name));
    EXPECT_TRUE(tst::wait_until([&] {
      if (counter(phase.mode) > fired_before && watches_started() >= watches_before + 2)
        return true;
      io.run(mutate(*mutator, seed++, 32, 16, next_name));  // keep events flowing
      return false;
    })) << "phase "
        << phase.faults << ": the fault did not meet the informer";
  }
  sim.clear_faults();

  const auto server = server_objects(io, *mutator, kConfigMap);
  ASSERT_GT(server.size(), 9000u);
  EXPECT_TRUE(tst::wait_until([&] { return cache_equals_server(informer->store(), server); }, 120s))
      << "the cache did not converge";
  const auto diffs = differences(informer->store(), server, kConfigMap);
  EXPECT_TRUE(diffs.empty()) << diffs.size() << " differences, first: " << diffs.front();

  {
    const std::lock_guard lock(view.mutex);
    EXPECT_TRUE(view.errors.empty())
        << view.errors.size() << " handler inconsistencies, first: " << view.errors.front();
    EXPECT_EQ(view.rv_by_key.size(), server.size());
    for (const auto& [key, v] : server) {
      ASSERT_EQ(view.rv_by_key[key], v.at("metadata").at("resourceVersion").as_string()) << key;
    }
    EXPECT_GT(view.deletes, 0);
    EXPECT_GT(view.updates, 0);
  }
  // The index follows the final contents.
  std::size_t app2 = 0;
  for (const auto& [key, v] : server) {
    const auto* labels = v.at("metadata").as_object().if_contains("labels");
    if (labels && labels->as_object().if_contains("app") &&
        labels->at("app").as_string() == "app-2") {
      ++app2;
    }
  }
  EXPECT_EQ(informer->store().by_index("app", "app-2").size(), app2);
  informer->stop();
}

namespace {

void deletes_while_disconnected(int history, int modifications) {
  const std::string dir = temp_dir("aop-informer-gate");
  const std::string preload = write_preload(dir, 500);
  tst::KubeSim sim({"--preload", preload, "--watch-history", std::to_string(history)});
  std::filesystem::remove_all(dir);
  // Declared before the io_context: a watch stream it handed out may be released only
  // when the io_context's last handlers are destroyed.
  std::unique_ptr<tst::GateClient> gate_holder;
  tst::IoThreads io(2);
  auto real = make_api_client(io.executor(), sim.client_config(), fast_client("informer"));
  auto mutator = make_api_client(io.executor(), sim.client_config(), fast_client("mutator"));
  gate_holder = std::make_unique<tst::GateClient>(*real);
  tst::GateClient& gate = *gate_holder;
  HandlerView view;
  auto informer = make_informer(io.executor(), gate, fast_informer(kConfigMap));
  informer->add_handler(view.handler());
  informer->start();
  ASSERT_TRUE(tst::wait_until([&] { return informer->has_synced(); })) << "never synced";

  gate.set(tst::GateClient::Mode::refuse);
  std::set<std::string> deleted;
  for (int i = 0; i < 500; i += 10) {
    const ObjectKey key{"ns-" + std::to_string(i % kNamespaces), "cm-" + std::to_string(i)};
    ASSERT_TRUE(io.run(mutator->remove(kConfigMap, key)));
    deleted.insert(key.str());
  }
  for (int m = 0; m < modifications; ++m) {
    const int i = 1 + (m * 7) % 499;
    if (i % 10 == 0) continue;
    ASSERT_TRUE(io.run(mutator->patch(
        kConfigMap, {"ns-" + std::to_string(i % kNamespaces), "cm-" + std::to_string(i)},
        PatchType::merge, json::object{{"data", {{"value", std::to_string(m)}}}})));
  }
  EXPECT_EQ(informer->store().size(), 500u) << "the cache changed while disconnected";
  gate.set(tst::GateClient::Mode::open);

  const auto server = server_objects(io, *mutator, kConfigMap);
  ASSERT_EQ(server.size(), 450u);
  EXPECT_TRUE(tst::wait_until([&] { return cache_equals_server(informer->store(), server); }))
      << "the cache did not converge";
  const auto diffs = differences(informer->store(), server, kConfigMap);
  EXPECT_TRUE(diffs.empty()) << diffs.front();
  const std::lock_guard lock(view.mutex);
  EXPECT_EQ(view.deleted, deleted) << "every delete made while disconnected is reported";
  EXPECT_TRUE(view.errors.empty()) << view.errors.front();
  informer->stop();
}

}  // namespace

TEST(InformerKubeSimOnly, DeletesWhileDisconnectedAreObservedOnResume) {
  // The watch history still covers the outage: resuming replays the DELETED events.
  deletes_while_disconnected(10000, 100);
}

TEST(InformerKubeSimOnly, DeletesWhileDisconnectedAreObservedOnRelist) {
  // More changes than the history keeps: resuming gets 410 Gone, and the relist's
  // atomic replace reports the deletions.
  deletes_while_disconnected(50, 300);
}

TEST(InformerSim, MetadataOnlyInformerKeepsNoData) {
  auto cluster = tst::start_cluster();
  tst::TestObjects objects(*cluster);
  const std::string ns = objects.test_namespace("informer");
  tst::IoThreads io(2);
  auto client = make_api_client(io.executor(), cluster->client_config(), fast_client("informer"));
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(io.run(client->create(json::object{{"apiVersion", "v1"},
                                                   {"kind", "Secret"},
                                                   {"metadata",
                                                    {{"name", "s" + std::to_string(i)},
                                                     {"namespace", ns},
                                                     {"labels", {{"team", i % 2 ? "a" : "b"}}}}},
                                                   {"data", {{"password", "c2VjcmV0LXZhbHVl"}}}})));
  }
  auto options = fast_informer(kSecret);
  options.ns = ns;
  options.transform.metadata_only = true;
  options.label_selector = "team=a";
  auto informer = make_informer(io.executor(), *client, options);
  informer->start();
  ASSERT_TRUE(tst::wait_until([&] { return informer->has_synced(); }));
  EXPECT_EQ(informer->store().size(), 10u);
  for (const auto& s : informer->store().list()) {
    EXPECT_EQ(s->label("team"), "a");
    EXPECT_FALSE(s->at({"data"}).has_value()) << "secret data must not be cached";
    EXPECT_FALSE(s->uid().empty());
  }
  // Later changes arrive by metadata-only watch, and a referenced Secret is fetched
  // whole on demand.
  ASSERT_TRUE(io.run(client->patch(kSecret, {ns, "s1"}, PatchType::merge,
                                   json::parse(R"({"metadata":{"labels":{"extra":"yes"}}})"))));
  EXPECT_TRUE(tst::wait_until([&] {
    auto s = informer->store().get({ns, "s1"});
    return s && s->label("extra") == "yes";
  }));
  EXPECT_FALSE(informer->store().get({ns, "s1"})->at({"data"}).has_value());
  auto full = io.run(client->get(kSecret, {ns, "s1"}));
  ASSERT_TRUE(full);
  EXPECT_EQ(full->at("data").at("password"), "c2VjcmV0LXZhbHVl");
  informer->stop();
}

TEST(InformerKubeSimOnly, StreamingListFillsTheCacheWithoutAList) {
  const std::string dir = temp_dir("aop-informer-stream");
  const std::string preload = write_preload(dir, 300);
  tst::KubeSim sim({"--preload", preload});
  std::filesystem::remove_all(dir);
  tst::IoThreads io(2);
  auto client = make_api_client(io.executor(), sim.client_config(), fast_client("informer"));
  sim.reset_stats();
  auto options = fast_informer(kConfigMap);
  options.streaming_list = true;
  HandlerView view;
  auto informer = make_informer(io.executor(), *client, options);
  informer->add_handler(view.handler());
  informer->start();
  ASSERT_TRUE(tst::wait_until([&] { return informer->has_synced(); }));
  EXPECT_EQ(informer->store().size(), 300u);
  {
    const std::lock_guard lock(view.mutex);
    EXPECT_EQ(view.adds, 300);
  }
  const auto stats = sim.stats();
  const auto* lists = stats.at("requests").at("by_verb").as_object().if_contains("list");
  EXPECT_TRUE(lists == nullptr || lists->to_number<int>() == 0) << json::serialize(stats);
  ASSERT_TRUE(io.run(client->remove(kConfigMap, {"ns-1", "cm-1"})));
  EXPECT_TRUE(tst::wait_until([&] { return informer->store().size() == 299u; }));
  informer->stop();
}

namespace {

json::value config_map(const std::string& name, const std::string& value) {
  return json::object{{"apiVersion", "v1"},
                      {"kind", "ConfigMap"},
                      {"metadata", {{"name", name}, {"namespace", "default"}}},
                      {"data", {{"value", value}}}};
}

std::uint64_t sim_fault_count(const tst::KubeSim& sim, std::string_view mode) {
  const auto stats = sim.stats();
  const auto* n = stats.at("faults").as_object().if_contains(mode);
  return n != nullptr ? n->to_number<std::uint64_t>() : 0;
}

// A sample of the metric for this test's informer (kind ConfigMap, all namespaces), or -1.
double metric_sample(const std::string& name) {
  const std::string text = aop::net::metrics::registry().expose();
  const std::string series = name + "{kind=\"ConfigMap\",namespace=\"\",selector=\"\"} ";
  const auto at = text.find(series);
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + series.size()));
}

}  // namespace

// A watch that goes silent without closing (a half-open connection, a dead load
// balancer) is noticed by the absence of bookmarks, closed and resumed from its last
// resourceVersion: a change made during the stall reaches the cache right after.
TEST(InformerSim, AStalledWatchIsReplacedAndTheChangeMadeDuringTheStallArrives) {
  tst::KubeSim sim({"--bookmark-interval", "100ms"});
  tst::IoThreads io(2);
  auto client = make_api_client(io.executor(), sim.client_config(), fast_client("informer"));
  ASSERT_TRUE(io.run(client->create(config_map("first", "0"))));
  auto options = fast_informer(kConfigMap);
  options.stall_timeout = 2s;  // twenty bookmark intervals
  auto informer = make_informer(io.executor(), *client, options);
  informer->start();
  ASSERT_TRUE(tst::wait_until([&] { return informer->has_synced(); }));
  const auto synced_at = informer->health().last_event_at;
  // Bookmarks keep a healthy idle watch alive past the stall timeout: the informer
  // hears from the same watch long after the timeout would have fired without them.
  ASSERT_TRUE(tst::wait_until([&] { return informer->health().last_event_at > synced_at + 3s; }));
  EXPECT_EQ(sim.stats().at("watches_started"), 1) << "a healthy idle watch was replaced";
  EXPECT_FALSE(informer->health().disconnected_since);
  const double age = metric_sample("informer_last_event_age_seconds");
  EXPECT_GE(age, 0);
  EXPECT_LT(age, 2.0) << "bookmarks count as signs of life";

  // Streams now go silent after their next event (no events, bookmarks or end), but
  // stay open.
  sim.set_faults(R"({"stall_watch_after": 1})");
  ASSERT_TRUE(io.run(client->create(config_map("before-stall", "1"))));
  ASSERT_TRUE(tst::wait_until([&] {
    return informer->store().get({"default", "before-stall"}) != nullptr;
  }));
  ASSERT_TRUE(tst::wait_until([&] { return sim_fault_count(sim, "stall_watch_after") == 1; }));
  const double stalls_before = std::max(0.0, metric_sample("informer_watch_stalls_total"));
  const auto changed_at = std::chrono::steady_clock::now();
  ASSERT_TRUE(io.run(client->create(config_map("during-stall", "2"))));
  // The stalled stream stays stalled; the next one will work.
  sim.clear_faults();

  ASSERT_TRUE(tst::wait_until([&] {
    return informer->store().get({"default", "during-stall"}) != nullptr;
  })) << "the change made during the stall never reached the cache";
  const auto replaced_in = std::chrono::steady_clock::now() - changed_at;
  std::printf(
      "stall timeout 2 s: the change made during the stall reached the cache %.2f s "
      "after it was made\n",
      std::chrono::duration<double>(replaced_in).count());
  const auto stats = sim.stats();
  EXPECT_EQ(stats.at("watches_started"), 2) << "resumed with one new watch";
  EXPECT_EQ(stats.at("requests").at("by_verb").at("list"), 1) << "resumed without a relist";
  EXPECT_EQ(metric_sample("informer_watch_stalls_total"), stalls_before + 1);
  EXPECT_FALSE(informer->health().disconnected_since);
  informer->stop();
}

// A cache that cannot get a working watch back for longer than the threshold is
// reported (the operator's /readyz "watches" check), and no longer once one opens.
TEST(InformerSim, ACacheWithoutAWorkingWatchIsReportedDisconnected) {
  tst::KubeSim sim({"--bookmark-interval", "100ms"});
  tst::IoThreads io(2);
  auto client = make_api_client(io.executor(), sim.client_config(), fast_client("informer"));
  ASSERT_TRUE(io.run(client->create(config_map("first", "0"))));
  InformerFactory factory(io.executor(), *client, {});
  CacheSpec spec;
  spec.gvk = kConfigMap;
  KindCache& cache = factory.cache(spec);
  factory.start();
  ASSERT_TRUE(tst::wait_until([&] { return cache.has_synced(); }));
  // Synced means listed; the watch opens just after (on a loaded machine, visibly later).
  ASSERT_TRUE(tst::wait_until([&] { return factory.disconnected(0s).empty(); }))
      << "the cache's watch never opened";

  // The open watch ends (410 in the stream) and every request fails from then on.
  sim.set_faults(R"({"http_503": 1.0, "retry_after_seconds": 0, "expire_watches": true})");
  ASSERT_TRUE(tst::wait_until([&] { return !factory.disconnected(1s).empty(); }))
      << "a cache cut off for more than the threshold was not reported";
  const auto reported = factory.disconnected(1s);
  EXPECT_NE(reported.front().find("ConfigMap (disconnected for "), std::string::npos)
      << reported.front();
  EXPECT_EQ(cache.size(), 1u) << "the cache keeps its contents while disconnected";

  sim.clear_faults();
  ASSERT_TRUE(tst::wait_until([&] { return factory.disconnected(0s).empty(); }));
  factory.stop();
}

// KindCache::select: with the label index the candidates of a selector come from the
// index, and the answer is the same as matching every object, for every kind of
// requirement, across namespaces and after labels change.
TEST(InformerSim, SelectingThroughTheLabelIndexFindsWhatMatchingEveryObjectFinds) {
  auto cluster = tst::start_cluster();
  tst::TestObjects objects(*cluster);
  const std::string a = objects.test_namespace("select-a");
  const std::string b = objects.test_namespace("select-b");
  tst::IoThreads io(2);
  auto client = make_api_client(io.executor(), cluster->client_config(), fast_client("informer"));
  const std::vector<std::string> groups = {"g0", "g1", "g2"};
  for (const auto& ns : {a, b}) {
    for (int i = 0; i < 30; ++i) {
      json::object labels{{"group", groups[i % 3]}};
      if (i % 4 == 0) labels["tier"] = "web";
      if (i % 5 == 0) labels["team"] = i % 2 == 0 ? "x" : "y";
      ASSERT_TRUE(io.run(client->create(json::object{
          {"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", {{"name", "c" + std::to_string(i)}, {"namespace", ns}, {"labels", labels}}},
          {"data", {{"k", "v"}}}})));
    }
  }
  InformerFactory factory(io.executor(), *client, {});
  CacheSpec spec;
  spec.gvk = kConfigMap;
  KindCache& indexed = factory.cache(spec);
  indexed.add_label_index();
  CacheSpec plain_spec = spec;
  plain_spec.transform.drop_last_applied = !spec.transform.drop_last_applied;  // another cache
  KindCache& plain = factory.cache(plain_spec);
  factory.start();
  ASSERT_TRUE(tst::wait_until([&] { return indexed.has_synced() && plain.has_synced(); }));
  const auto grouped = parse_label_selector_string("group");
  ASSERT_TRUE(grouped);
  ASSERT_TRUE(tst::wait_until([&] {
    return indexed.select("", *grouped).size() == 60 && plain.select("", *grouped).size() == 60;
  }));

  const auto keys = [](const std::vector<ObjectPtr>& objs) {
    std::vector<std::string> out;
    for (const auto& o : objs) out.push_back(o->key().str());
    std::sort(out.begin(), out.end());
    return out;
  };
  const std::vector<std::string> selectors = {"group=g1",
                                              "group in (g0,g2)",
                                              "group in (g0,g2),tier=web",
                                              "tier",
                                              "!tier",
                                              "team notin (x)",
                                              "group=g1,team",
                                              "group=nope",
                                              "",
                                              "group in (g0),tier notin (web)"};
  const auto compare = [&](bool first) {
    for (const auto& text : selectors) {
      const auto sel = parse_label_selector_string(text);
      ASSERT_TRUE(sel) << text;
      for (const std::string& ns : {std::string(), a, b}) {
        const auto got = keys(indexed.select(ns, *sel));
        EXPECT_EQ(got, keys(plain.select(ns, *sel)))
            << "selector '" << text << "' in '" << ns << "'";
        if (first && text == "group=g1") {
          // Ten per namespace: the index found them (and only those of `ns`).
          EXPECT_EQ(got.size(), ns.empty() ? 20u : 10u);
        }
      }
    }
  };
  compare(true);

  // A label changed: the object moves between the index's values.
  ASSERT_TRUE(io.run(client->patch(kConfigMap, {a, "c1"}, PatchType::merge,
                                   json::parse(R"({"metadata":{"labels":{"group":"g2"}}})"))));
  const auto g2 = parse_label_selector_string("group=g2");
  ASSERT_TRUE(g2);
  ASSERT_TRUE(tst::wait_until([&] {
    const auto found = keys(indexed.select(a, *g2));
    return std::find(found.begin(), found.end(), a + "/c1") != found.end() &&
           keys(plain.select(a, *g2)) == found;
  }));
  compare(false);
  factory.stop();
}
