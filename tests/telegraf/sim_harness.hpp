// The telegraf controller against kube-sim, wired the way app/ wires it: a real
// ApiClient on the kubeconfig kube-sim writes, a shared InformerFactory, an
// EventRecorder, and the module driven through its life cycle (construct, caches sync,
// start_reconciling, stop). Writes are counted by kube-sim per User-Agent: the
// controller's client has its own, the Event recorder another, the test's requests a
// third, so "no write" means no write by the controller.
#pragma once

#include <unistd.h>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "k8s/api_client.hpp"
#include "k8s/informer_factory.hpp"
#include "net/log.hpp"
#include "net/metrics.hpp"
#include "reconcile/telegraf/controller.hpp"
#include "tests/k8s/async_helpers.hpp"
#include "tests/k8s/sim_fixture.hpp"
#include "tests/telegraf/counting_event_recorder.hpp"

namespace aop::telegraf::testing {

namespace json = boost::json;
namespace tst = aop::testing;

inline constexpr const char* kControllerAgent = "telegraf-controller-test";
inline constexpr const char* kEventsAgent = "telegraf-events-test";

struct HarnessOptions {
  std::vector<std::string> sim_args;
  TelegrafOptions options;
  TelegrafModuleSettings settings;
  int workers = 4;
  int io_threads = 4;
};

class Harness {
 public:
  explicit Harness(HarnessOptions h)
      : sim(std::move(h.sim_args)), io(h.io_threads), setup(std::move(h)) {
    k8s::ApiClientOptions co;
    co.user_agent = kControllerAgent;
    co.qps = 0;  // unlimited: the tests count writes, they do not measure pacing
    client = k8s::make_api_client(io.executor(), sim.client_config(), co);
    k8s::ApiClientOptions eo = co;
    eo.user_agent = kEventsAgent;
    events_client = k8s::make_api_client(io.executor(), sim.client_config(), eo);
    k8s::EventRecorderOptions ro;
    ro.component = "rubin-telegraf-operator";
    events = std::make_unique<CountingEventRecorder>(
        k8s::make_event_recorder(io.executor(), *events_client, ro));
    make_module();
  }

  // A fresh factory and module on the same server and client, as after a restart of the
  // operator (the apply engine remembers nothing of the previous run).
  void make_module() {
    factory =
        std::make_unique<k8s::InformerFactory>(io.executor(), *client, std::vector<std::string>{});
    runtime::ModuleContext ctx;
    ctx.executor = io.executor();
    ctx.client = client.get();
    ctx.informers = factory.get();
    ctx.events = events.get();
    ctx.may_write = [] { return true; };
    ctx.operator_namespace = "operator";
    ctx.workers = setup.workers;
    ctx.resync_period = net::Duration::zero();  // the tests resync by hand
    TelegrafModuleSettings settings = setup.settings;
    settings.registry = &registry;
    module = std::make_unique<TelegrafController>(ctx, setup.options, settings);
  }

  // The operator goes down: the module stops, then its caches.
  void shut_down() {
    io.run(module->stop(std::chrono::seconds(30)));
    factory->stop();
    module.reset();
    factory.reset();
  }

  ~Harness() {
    if (module) io.run(module->stop(std::chrono::seconds(30)));
    if (factory) factory->stop();
    io.stop();
  }

  // Caches start, the module reports ready, then reconciles (what app/ does).
  void start() {
    factory->start();
    ASSERT_TRUE(tst::wait_until([&] { return module->not_ready_reason().empty(); },
                                std::chrono::seconds(120)))
        << module->not_ready_reason();
    module->start_reconciling();
  }

  // --- the test's own view of the server (User-Agent kube-sim-fixture) ----------------

  json::value get(const std::string& path) const {
    const auto r = sim.request("GET", path);
    if (r.status == 404) return nullptr;
    EXPECT_EQ(r.status, 200) << path << ": " << r.body;
    return json::parse(r.body);
  }
  json::value config_map(const std::string& ns) const {
    return get("/api/v1/namespaces/" + ns + "/configmaps/rubin-telegraf");
  }
  json::value secret(const std::string& ns) const {
    return get("/api/v1/namespaces/" + ns + "/secrets/rubin-telegraf-token");
  }
  json::value deployment(const std::string& ns) const {
    return get("/apis/apps/v1/namespaces/" + ns + "/deployments/rubin-telegraf");
  }
  std::string config(const std::string& ns) const {
    const auto cm = config_map(ns);
    if (cm.is_null()) return {};
    return std::string(cm.at("data").at("telegraf.conf").as_string());
  }
  static std::string pod_annotation(const json::value& deployment, std::string_view key) {
    if (deployment.is_null()) return {};
    const auto* a =
        deployment.at("spec").at("template").at("metadata").as_object().if_contains("annotations");
    if (a == nullptr) return {};
    const auto* v = a->as_object().if_contains(key);
    return v != nullptr ? std::string(v->as_string()) : std::string();
  }
  static std::string annotation(const json::value& object, std::string_view key) {
    if (object.is_null()) return {};
    const auto* a = object.at("metadata").as_object().if_contains("annotations");
    if (a == nullptr) return {};
    const auto* v = a->as_object().if_contains(key);
    return v != nullptr ? std::string(v->as_string()) : std::string();
  }
  static std::string resource_version(const json::value& object) {
    return object.is_null() ? std::string()
                            : std::string(object.at("metadata").at("resourceVersion").as_string());
  }

  void send(std::string_view method, const std::string& path, const json::value& body,
            int expect_status, std::string_view content_type = "application/json") const {
    const auto r = sim.request(method, path, json::serialize(body), content_type);
    ASSERT_EQ(r.status, expect_status) << method << " " << path << ": " << r.body;
  }
  void merge_patch(const std::string& path, const json::value& patch) const {
    send("PATCH", path, patch, 200, "application/merge-patch+json");
  }
  // Sets (a string) or removes (null) the telegraf annotation of a Namespace.
  void annotate_namespace(const std::string& ns, const json::value& value,
                          const std::string& key = TelegrafOptions{}.annotation_key) const {
    merge_patch(
        "/api/v1/namespaces/" + ns,
        json::object{{"metadata", json::object{{"annotations", json::object{{key, value}}}}}});
  }

  std::uint64_t controller_writes() const { return sim.writes_by(kControllerAgent); }
  // The controller's writes as kube-sim logged them (verb, resource, name), for messages.
  std::string controller_write_log() const {
    return sim.request("GET", std::string("/admin/writes?user_agent=") + kControllerAgent).body;
  }

  // Waits until the controller's queue has nothing queued, delayed or in flight.
  bool settle(std::chrono::milliseconds timeout = std::chrono::seconds(120)) {
    return tst::wait_until([&] { return module->idle(); }, timeout);
  }

  // Warning Events about `kind`/`name` with `reason`, as the server holds them.
  std::vector<json::object> server_events(std::string_view kind, std::string_view name,
                                          std::string_view reason) const {
    std::vector<json::object> out;
    const auto list = get("/api/v1/events");
    if (list.is_null()) return out;
    for (const auto& item : list.at("items").as_array()) {
      const auto& e = item.as_object();
      const auto& involved = e.at("involvedObject").as_object();
      if (involved.at("kind").as_string() == kind && involved.at("name").as_string() == name &&
          e.at("reason").as_string() == reason && e.at("type").as_string() == "Warning") {
        out.push_back(e);
      }
    }
    return out;
  }

  tst::KubeSim sim;
  tst::IoThreads io;
  HarnessOptions setup;
  std::unique_ptr<k8s::ApiClient> client;
  std::unique_ptr<k8s::ApiClient> events_client;
  std::unique_ptr<CountingEventRecorder> events;
  std::unique_ptr<k8s::InformerFactory> factory;
  net::metrics::Registry registry;
  std::unique_ptr<TelegrafController> module;
};

// Writes a file for kube-sim's --preload (YAML documents) in gtest's temporary directory.
inline std::string write_preload(const std::string& name, const std::string& yaml) {
  const std::string path =
      ::testing::TempDir() + "telegraf-" + std::to_string(::getpid()) + "-" + name + ".yaml";
  std::ofstream(path) << yaml;
  return path;
}

}  // namespace aop::telegraf::testing
