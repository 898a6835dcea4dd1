// The runtime end to end against the test cluster (kube-sim, and the real kube-apiserver
// in the integration-real run), with the example controller
// (example_controller.hpp) on real informers, the work queue, the dependency index and
// the apply engine:
//   * 1,000 roots are reconciled and their objects created;
//   * a resync with nothing changed makes ZERO writes (the server counts them);
//   * changing one dependency reconciles exactly the roots that depend on it, and
//     relabelling it reconciles the roots it leaves and the roots it joins;
//   * an owned object deleted by hand is recreated;
//   * an owned object no longer desired is deleted.
#include <filesystem>
#include <fstream>
#include <set>

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "k8s/api_client.hpp"
#include "k8s/informer.hpp"
#include "net/log.hpp"
#include "reconcile/runtime/controller.hpp"
#include "reconcile/runtime/object_cache.hpp"
#include "tests/k8s/async_helpers.hpp"
#include "tests/k8s/cluster.hpp"
#include "tests/runtime/example_controller.hpp"

namespace aop::runtime {
namespace {

namespace json = boost::json;
namespace tst = aop::testing;
using namespace std::chrono_literals;

constexpr int kRoots = 1000;
constexpr int kNamespaces = 10;
constexpr int kGroups = 20;  // per namespace: 5 roots per (namespace, group)
constexpr const char* kUserAgent = "runtime-sim-test";

k8s::GroupVersionKind configmap_gvk() {
  return {"", "v1", "ConfigMap"};
}
k8s::GroupVersionKind secret_gvk() {
  return {"", "v1", "Secret"};
}

std::string ns_of(int i) {
  return "ns-" + std::to_string(i % kNamespaces);
}
std::string group_of(int i) {
  return "g" + std::to_string((i / kNamespaces) % kGroups);
}
std::string root_key(int i) {
  return ns_of(i) + "/root-" + std::to_string(i);
}
bool has_extra(int i) {
  return i % 100 == 5;
}

std::string write_preload() {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("runtime-sim-" + std::to_string(::getpid()) + "-" +
                    std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
  std::filesystem::create_directories(dir);
  auto path = (dir / "objects.yaml").string();
  std::ofstream out(path);
  for (int n = 0; n < kNamespaces; ++n) {
    out << "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ns-" << n << "\n---\n";
    for (int g = 0; g < kGroups; ++g) {
      out << "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dep-g" << g
          << "\n  namespace: ns-" << n << "\n  labels:\n    dep-group: g" << g
          << "\ndata:\n  value: \"v1-" << n << "-" << g << "\"\n---\n";
    }
  }
  for (int i = 0; i < kRoots; ++i) {
    out << "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: root-" << i
        << "\n  namespace: " << ns_of(i)
        << "\n  labels:\n    role: root\ndata:\n  group: " << group_of(i) << "\n  extra: \""
        << (has_extra(i) ? "true" : "false") << "\"\n---\n";
  }
  return path;
}

k8s::InformerOptions informer_options(k8s::GroupVersionKind gvk, std::string selector) {
  k8s::InformerOptions o;
  o.gvk = std::move(gvk);
  o.label_selector = std::move(selector);
  o.backoff.initial = 20ms;
  o.backoff.cap = 500ms;
  return o;
}

class RuntimeSimTest : public ::testing::Test {
 public:
  RuntimeSimTest() : cluster(tst::start_cluster({{write_preload()}})), io(4) {
    net::log::configure(net::log::Level::warn, net::log::Format::text);  // 2,000 "created" lines
    k8s::ApiClientOptions co;
    co.user_agent = kUserAgent;
    co.qps = 0;  // unlimited: the test measures writes, not pacing
    client = k8s::make_api_client(io.executor(), cluster->client_config(), co);
    roots =
        k8s::make_informer(io.executor(), *client, informer_options(configmap_gvk(), "role=root"));
    deps =
        k8s::make_informer(io.executor(), *client, informer_options(configmap_gvk(), "dep-group"));
    owned = k8s::make_informer(
        io.executor(), *client,
        informer_options(secret_gvk(), std::string("app.kubernetes.io/managed-by=") +
                                           testing::kExampleManagedBy));
    cache.add(*owned);
    engine =
        std::make_unique<ApplyEngine>(*client, cache, testing::ExampleController::apply_options());
    example =
        std::make_unique<testing::ExampleController>(roots->store(), deps->store(), index, *engine);
    ControllerOptions opts;
    opts.name = "example";
    opts.workers = 8;
    opts.resync_period = Duration::zero();  // resync_now() drives the test's resyncs
    controller = std::make_unique<Controller>(
        io.executor(), opts, [this](std::string key) { return example->reconcile(std::move(key)); },
        [this] {
          std::vector<std::string> keys;
          for (const auto& r : roots->store().list()) keys.push_back(r->key().str());
          return keys;
        });
    auto enqueue = [this](const std::string& key) { controller->enqueue(key); };
    k8s::EventHandler on_root;
    on_root.on_add = [enqueue](const k8s::ObjectPtr& o) { enqueue(o->key().str()); };
    on_root.on_update = [enqueue](const k8s::ObjectPtr&, const k8s::ObjectPtr& o) {
      enqueue(o->key().str());
    };
    on_root.on_delete = on_root.on_add;
    roots->add_handler(on_root);
    deps->add_handler(dependents_event_handler(index, {"", "ConfigMap"}, enqueue));
    // Owned objects: a deletion (by hand) reconciles the owner. Adds and updates are the
    // controller's own writes; drift is caught by the resync.
    k8s::EventHandler on_owned = owner_event_handler({"", "ConfigMap"}, true, true, enqueue);
    on_owned.on_add = nullptr;
    on_owned.on_update = nullptr;
    owned->add_handler(on_owned);
  }

  ~RuntimeSimTest() override {
    if (controller) {
      controller->shut_down();
      tst::wait_until([&] { return controller->stopped(); }, 30s);  // in-flight work ends
    }
    for (auto* inf : {roots.get(), deps.get(), owned.get()}) {
      if (inf) inf->stop();
    }
    io.stop();
  }

 protected:
  void start() {
    owned->start();
    deps->start();
    roots->start();
    ASSERT_TRUE(tst::wait_until([&] {
      return roots->has_synced() && deps->has_synced() && owned->has_synced();
    })) << "informers did not sync";
    controller->start();
  }

  bool queue_idle() {
    auto& q = controller->queue();
    return q.len() == 0 && q.processing() == 0 && q.waiting() == 0;
  }

  // The server's Secret, or null.
  json::value server_secret(const std::string& ns, const std::string& name) {
    const auto r = cluster->request("GET", "/api/v1/namespaces/" + ns + "/secrets/" + name);
    if (r.status == 404) return nullptr;
    EXPECT_EQ(r.status, 200) << r.body;
    return json::parse(r.body);
  }

  std::string out_value(int i) {
    const auto s = server_secret(ns_of(i), "root-" + std::to_string(i) + "-out");
    if (s.is_null()) return "<absent>";
    return *k8s::base64_decode(s.at("data").at("value").as_string());
  }

  void patch_configmap(const std::string& ns, const std::string& name, const json::object& patch) {
    const auto r = cluster->request("PATCH", "/api/v1/namespaces/" + ns + "/configmaps/" + name,
                                    json::serialize(patch), "application/merge-patch+json");
    ASSERT_EQ(r.status, 200) << r.body;
  }

  // Every root's count went up by `expected[root]` (0 for the others), once the queue has
  // gone idle after those reconciles.
  void expect_reconciled_exactly(const std::map<std::string, int>& before,
                                 const std::set<std::string>& roots_expected) {
    ASSERT_TRUE(tst::wait_until([&] {
      for (const auto& key : roots_expected) {
        if (example->reconciles(key) <= before.at(key)) return false;
      }
      return queue_idle();
    })) << "the dependent roots were not reconciled";
    const auto after = example->snapshot();
    for (const auto& [key, n] : after) {
      const int want = before.count(key) ? before.at(key) + (roots_expected.count(key) ? 1 : 0) : 1;
      EXPECT_EQ(n, want) << key;
    }
  }

  std::unique_ptr<tst::Cluster> cluster;
  tst::IoThreads io;
  std::unique_ptr<k8s::ApiClient> client;
  std::unique_ptr<k8s::Informer> roots, deps, owned;
  InformerCache cache;
  DependencyIndex index;
  std::unique_ptr<ApplyEngine> engine;
  std::unique_ptr<testing::ExampleController> example;
  std::unique_ptr<Controller> controller;
};

TEST_F(RuntimeSimTest, ReconcilesAThousandRootsAndAnUnchangedResyncWritesNothing) {
  int extras = 0;
  for (int i = 0; i < kRoots; ++i) extras += has_extra(i) ? 1 : 0;
  const std::size_t expected_owned = kRoots + extras;
  start();

  // 1. Every root reconciled, its objects created (one create each, nothing else).
  ASSERT_TRUE(tst::wait_until(
      [&] { return owned->store().size() == expected_owned && queue_idle(); }, 120s))
      << "owned objects cached: " << owned->store().size();
  for (int i = 0; i < kRoots; ++i) ASSERT_GE(example->reconciles(root_key(i)), 1) << i;
  EXPECT_EQ(cluster->writes_by(kUserAgent), expected_owned);
  EXPECT_EQ(out_value(42), "v1-2-" + std::to_string((42 / kNamespaces) % kGroups) + ";");

  // 2. A resync with nothing changed: every root reconciled again, zero writes.
  const auto writes_before = cluster->writes_by(kUserAgent);
  const auto before = example->snapshot();
  controller->resync_now();
  ASSERT_TRUE(tst::wait_until(
      [&] {
        for (int i = 0; i < kRoots; ++i) {
          if (example->reconciles(root_key(i)) <= before.at(root_key(i))) return false;
        }
        return queue_idle();
      },
      120s));
  EXPECT_EQ(cluster->writes_by(kUserAgent), writes_before) << "a no-op resync wrote";

  // 3. One dependency changes: exactly its 5 roots reconcile, and only their objects change.
  {
    const auto counts = example->snapshot();
    const auto w0 = cluster->writes_by(kUserAgent);
    patch_configmap("ns-3", "dep-g7", json::object{{"data", json::object{{"value", "v2"}}}});
    std::set<std::string> expected;
    for (int i = 0; i < kRoots; ++i) {
      if (ns_of(i) == "ns-3" && group_of(i) == "g7") expected.insert(root_key(i));
    }
    ASSERT_EQ(expected.size(), 5u);
    expect_reconciled_exactly(counts, expected);
    EXPECT_EQ(cluster->writes_by(kUserAgent), w0 + 5);
    EXPECT_EQ(out_value(73), "v2;");  // root-73: ns-3, g7
  }

  // 4. A dependency relabelled from g2 to g3 leaves one hierarchy and joins another: the
  //    roots of both reconcile.
  {
    const auto counts = example->snapshot();
    patch_configmap(
        "ns-4", "dep-g2",
        json::object{{"metadata", json::object{{"labels", json::object{{"dep-group", "g3"}}}}}});
    std::set<std::string> expected;
    for (int i = 0; i < kRoots; ++i) {
      if (ns_of(i) == "ns-4" && (group_of(i) == "g2" || group_of(i) == "g3")) {
        expected.insert(root_key(i));
      }
    }
    ASSERT_EQ(expected.size(), 10u);
    expect_reconciled_exactly(counts, expected);
    EXPECT_EQ(out_value(24), "");                // ns-4, g2: lost its dependency
    EXPECT_EQ(out_value(34), "v1-4-2;v1-4-3;");  // ns-4, g3: gained it
  }

  // 5. An owned object deleted by hand is recreated.
  {
    const auto r = cluster->request("DELETE", "/api/v1/namespaces/ns-7/secrets/root-17-out");
    ASSERT_EQ(r.status, 200) << r.body;
    ASSERT_TRUE(tst::wait_until([&] { return !server_secret("ns-7", "root-17-out").is_null(); }))
        << "not recreated";
  }

  // 6. An owned object no longer desired is deleted.
  {
    ASSERT_FALSE(server_secret("ns-5", "root-305-extra").is_null());
    patch_configmap("ns-5", "root-305", json::object{{"data", json::object{{"extra", "false"}}}});
    ASSERT_TRUE(tst::wait_until([&] { return server_secret("ns-5", "root-305-extra").is_null(); }))
        << "not pruned";
    EXPECT_FALSE(server_secret("ns-5", "root-305-out").is_null());
  }

  // 7. And after all that, another unchanged resync still writes nothing.
  ASSERT_TRUE(
      tst::wait_until([&] { return owned->store().size() == expected_owned - 1 && queue_idle(); }));
  const auto w1 = cluster->writes_by(kUserAgent);
  const auto c1 = example->total();
  controller->resync_now();
  ASSERT_TRUE(tst::wait_until([&] { return example->total() >= c1 + kRoots && queue_idle(); }));
  EXPECT_EQ(cluster->writes_by(kUserAgent), w1);
}

}  // namespace
}  // namespace aop::runtime
