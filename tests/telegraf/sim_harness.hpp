// The telegraf controller against the test cluster (tests/k8s/cluster.hpp: kube-sim, and
// the real kube-apiserver in telegraf_sim_test.kube-apiserver), wired the way app/ wires
// it: a real ApiClient on the token of deploy/'s ServiceAccount, a shared
// InformerFactory, an EventRecorder, and the module driven through its life cycle
// (construct, caches sync, start_reconciling, stop). Writes are counted by the server per
// User-Agent: the controller's client has its own, the Event recorder another, the
// test's requests a third, so "no write" means no write by the controller. Every harness
// starts without the Application CRD; what a test creates is cleaned up after it
// (tst::TestObjects) so that the tests of a process can share the real control plane.
#pragma once

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
#include "tests/k8s/cluster.hpp"
#include "tests/k8s/operator_rbac.hpp"
#include "tests/telegraf/counting_event_recorder.hpp"

namespace aop::telegraf::testing {

namespace json = boost::json;
namespace tst = aop::testing;

inline constexpr const char* kControllerAgent = "telegraf-controller-test";
inline constexpr const char* kEventsAgent = "telegraf-events-test";

inline const std::string kApplicationCrd = "applications.argoproj.io";

struct HarnessOptions {
  // Objects (YAML documents) that exist before the controller starts.
  std::string objects;
  // Extra kube-sim flags (kube-sim only; the scale test preloads with them).
  std::vector<std::string> sim_args;
  TelegrafOptions options;
  TelegrafModuleSettings settings;
  int workers = 4;
  int io_threads = 4;
};

class Harness {
 public:
  explicit Harness(HarnessOptions h)
      : cluster(tst::start_cluster({{}, h.sim_args, true})),
        objects(*cluster),
        identity(tst::install_operator_rbac(*cluster, AOP_SOURCE_DIR)),
        io(h.io_threads),
        setup(std::move(h)) {
    remove_application_crd();
    objects.create_yaml(setup.objects);
    k8s::ApiClientOptions co;
    co.user_agent = kControllerAgent;
    co.qps = 0;  // unlimited: the tests count writes, they do not measure pacing
    client = k8s::make_api_client(io.executor(), identity.config, co);
    k8s::ApiClientOptions eo = co;
    eo.user_agent = kEventsAgent;
    events_client = k8s::make_api_client(io.executor(), identity.config, eo);
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
    objects.clean_up();
  }

  // The Application CRD, created (kube-sim: preloaded by no one; the real server: deleted
  // by an earlier test's harness), and waited for until served.
  void install_application_crd() {
    send("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", application_crd(), 201);
    ASSERT_TRUE(tst::wait_until([&] {
      return cluster->request("GET", "/apis/argoproj.io/v1alpha1/namespaces/argocd/applications")
                 .status == 200;
    })) << "the Application CRD was not served";
  }

  static boost::json::value application_crd() {
    return json::parse(R"({
      "apiVersion": "apiextensions.k8s.io/v1",
      "kind": "CustomResourceDefinition",
      "metadata": {"name": "applications.argoproj.io"},
      "spec": {
        "group": "argoproj.io",
        "scope": "Namespaced",
        "names": {"plural": "applications", "singular": "application", "kind": "Application",
                  "listKind": "ApplicationList", "shortNames": ["app"]},
        "versions": [{"name": "v1alpha1", "served": true, "storage": true,
                      "schema": {"openAPIV3Schema": {"type": "object",
                                                     "x-kubernetes-preserve-unknown-fields": true}}}]
      }
    })");
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
    const auto r = cluster->request("GET", path);
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
    const auto r = cluster->request(method, path, json::serialize(body), content_type);
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

  std::uint64_t controller_writes() const { return cluster->writes_by(kControllerAgent); }
  // The controller's writes as the server recorded them, for messages.
  std::string controller_write_log() const {
    std::string out;
    for (const auto& r : cluster->requests(kControllerAgent)) {
      if (tst::is_write_verb(r.verb)) {
        out += r.verb_and_resource() + " in " + r.ns + ": " + std::to_string(r.code) + "\n";
      }
    }
    return out;
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

  // On a server shared with earlier tests: no Application CRD (deleted and waited for).
  void remove_application_crd() {
    if (cluster->is_kube_sim()) return;
    const std::string path =
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/" + kApplicationCrd;
    if (cluster->request("DELETE", path).status == 404) return;
    EXPECT_TRUE(tst::wait_until([&] {
      return cluster->request("GET", path).status == 404 &&
             cluster->request("GET", "/apis/argoproj.io/v1alpha1").status == 404;
    })) << "the Application CRD of an earlier test was not deleted";
  }

  std::unique_ptr<tst::Cluster> cluster;
  tst::TestObjects objects;
  tst::OperatorIdentity identity;
  tst::IoThreads io;
  HarnessOptions setup;
  std::unique_ptr<k8s::ApiClient> client;
  std::unique_ptr<k8s::ApiClient> events_client;
  std::unique_ptr<CountingEventRecorder> events;
  std::unique_ptr<k8s::InformerFactory> factory;
  net::metrics::Registry registry;
  std::unique_ptr<TelegrafController> module;
};

}  // namespace aop::telegraf::testing
