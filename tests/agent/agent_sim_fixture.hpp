// The live Grafana Agent controller against a test cluster (tests/k8s/cluster.hpp:
// kube-sim, or the real kube-apiserver shared by the test process), for integration
// tests: the project's CRDs (deploy/crds) installed, an operator API client on the
// ServiceAccount token of deploy/'s RBAC (so a permission missing there fails the test),
// a separate "driver" client with administrator rights for the test's own writes (the
// server counts writes per User-Agent, which tells the operator's apart), shared
// informers, an in-memory Event recorder, and helpers to create, read, patch and delete
// objects and to wait for conditions.
//
// On the real server, shared by the tests of a process one after the other, the
// fixture cleans up after its test once the controllers stopped (tst::TestObjects): the
// namespaces the test created are emptied and the cluster-scoped objects it created
// (Nodes) deleted. A later test creating the same Namespace gets it back with the labels
// it asks for, and empty.
#pragma once

#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "k8s/api_client.hpp"
#include "k8s/base64.hpp"
#include "k8s/event_recorder.hpp"
#include "k8s/informer_factory.hpp"
#include "k8s/yaml.hpp"
#include "net/log.hpp"
#include "reconcile/agent/controller.hpp"
#include "reconcile/agent/encoding.hpp"
#include "reconcile/agent/kinds.hpp"
#include "reconcile/runtime/apply.hpp"
#include "tests/k8s/async_helpers.hpp"
#include "tests/k8s/cluster.hpp"
#include "tests/k8s/operator_rbac.hpp"
#include "tests/k8s/sim_fixture.hpp"

namespace aop::agent::testing {

namespace json = boost::json;
namespace tst = aop::testing;
using namespace std::chrono_literals;

inline constexpr const char* kOperatorAgent = "agent-operator-under-test";
inline constexpr const char* kDriverAgent = "agent-sim-test-driver";
// Generous: the machine is shared; a passing run takes a fraction of this.
inline constexpr auto kDeadline = std::chrono::milliseconds(120000);

inline const k8s::GroupVersionKind kNodeKind{"", "v1", "Node"};
inline const k8s::GroupVersionKind kEndpointsKind{"", "v1", "Endpoints"};

// Events recorded in memory (the operator's recorder writes them to the API; here the
// test reads what the controller reported).
class RecordingEvents final : public k8s::EventRecorder {
 public:
  struct Event {
    k8s::EventSubject subject;
    k8s::EventType type;
    std::string reason;
    std::string message;
  };
  void record(const k8s::EventSubject& subject, k8s::EventType type, std::string reason,
              std::string message) override {
    const std::lock_guard lock(mutex_);
    events_.push_back({subject, type, std::move(reason), std::move(message)});
  }
  std::vector<Event> events() const {
    const std::lock_guard lock(mutex_);
    return events_;
  }
  // Events about `kind` ns/name with `reason`.
  std::vector<Event> about(std::string_view kind, std::string_view ns, std::string_view name,
                           std::string_view reason) const {
    std::vector<Event> out;
    for (const auto& e : events()) {
      if (e.subject.kind == kind && e.subject.ns == ns && e.subject.name == name &&
          e.reason == reason) {
        out.push_back(e);
      }
    }
    return out;
  }

 private:
  mutable std::mutex mutex_;  // owns events_
  std::vector<Event> events_;
};

inline std::string crd_dir() {
  return (std::filesystem::path(AOP_SOURCE_DIR) / "deploy" / "crds").string();
}

class AgentSim {
 public:
  // `crds`: the CRDs to load (deploy/crds by default).
  explicit AgentSim(std::vector<std::string> sim_args = {}, std::string crds = crd_dir())
      : cluster_(tst::start_cluster({{std::move(crds)}, std::move(sim_args), true})),
        identity(tst::install_operator_rbac(*cluster_, AOP_SOURCE_DIR)),
        io(4) {
    net::log::configure(net::log::Level::warn, net::log::Format::text);
    k8s::ApiClientOptions co;
    co.qps = 0;  // unlimited: tests count writes, they do not measure pacing
    co.user_agent = kOperatorAgent;
    client = k8s::make_api_client(io.executor(), identity.config, co);
    co.user_agent = kDriverAgent;
    driver = k8s::make_api_client(io.executor(), cluster_->client_config(), co);
    for (auto* c : {client.get(), driver.get()}) {
      const auto d = io.run(c->discover());
      if (!d) throw std::runtime_error("API discovery failed: " + d.error().describe());
    }
    informers =
        std::make_unique<k8s::InformerFactory>(io.executor(), *client, std::vector<std::string>{});
  }

  // Stops the modules and caches and joins the I/O threads before the modules (declared
  // last) are destroyed: nothing runs on them any more by then.
  // Waits for the modules' workers to return, as app/ does on shutdown: stopping the I/O
  // threads under suspended workers would leave their frames and the controller state
  // they share unreleased (LeakSanitizer reports it in the asan preset).
  ~AgentSim() {
    for (auto& m : modules_) io.run(m->stop(std::chrono::seconds(30)));
    if (informers) informers->stop();
    objects_.clean_up();
    EXPECT_EQ(forbidden_requests(), std::vector<std::string>{})
        << "the operator was refused what deploy/'s RBAC does not grant";
    io.stop();
  }

  // The test cluster, and kube-sim's own interface (fault injection, admin endpoints)
  // when that is the backend (nullptr otherwise).
  tst::Cluster& cluster() { return *cluster_; }
  tst::KubeSim* kube_sim() { return dynamic_cast<tst::KubeSim*>(cluster_.get()); }

  // The operator's requests RBAC refused, as "verb resource in namespace ns".
  std::vector<std::string> forbidden_requests() const {
    std::vector<std::string> out;
    for (const auto& r : cluster_->requests(kOperatorAgent)) {
      if (r.denied) out.push_back(r.verb_and_resource() + " in namespace " + r.ns);
    }
    return out;
  }
  AgentSim(const AgentSim&) = delete;
  AgentSim& operator=(const AgentSim&) = delete;

  runtime::ModuleContext context(runtime::QueuePolicy policy = {}) {
    runtime::ModuleContext ctx;
    ctx.executor = io.executor();
    ctx.client = client.get();
    ctx.informers = informers.get();
    ctx.events = &events;
    ctx.may_write = [] { return true; };
    ctx.workers = 4;
    ctx.resync_period = runtime::Duration::zero();  // tests resync explicitly
    ctx.queue.policy = policy;
    return ctx;
  }

  // Adds a module (constructed against context(): it registers its caches); the fixture
  // owns it.
  template <class M>
  M& add(std::unique_ptr<M> module) {
    M& ref = *module;
    modules_.push_back(std::move(module));
    return ref;
  }
  AgentController& add_agent_controller(AgentModuleOptions options,
                                        runtime::QueuePolicy policy = {}) {
    return add(std::make_unique<AgentController>(context(policy), std::move(options)));
  }

  // Starts the caches, waits for them, then lets the modules reconcile.
  void start() {
    informers->start();
    ASSERT_TRUE(tst::wait_until(
        [&] {
          for (const auto& m : modules_) {
            if (!m->not_ready_reason().empty()) return false;
          }
          return true;
        },
        kDeadline))
        << "caches did not sync";
    for (const auto& m : modules_) m->start_reconciling();
  }

  // ---- objects --------------------------------------------------------------------------

  json::value create(json::value obj) {
    if (obj.at("kind").as_string() == "Namespace") return objects_.create(obj);
    auto r = io.run(driver->create(obj));
    EXPECT_TRUE(r.has_value()) << "create " << json::serialize(obj) << ": "
                               << (r ? std::string() : r.error().describe());
    if (!r) return json::value();
    objects_.note_created(r.value());
    return r.value();
  }
  // Creates every document of a YAML stream.
  void create_yaml(std::string_view yaml) {
    auto docs = k8s::yaml::parse_all(yaml);
    ASSERT_TRUE(docs.has_value()) << docs.error().message;
    for (auto& d : *docs) {
      if (!d.is_null()) create(std::move(d));
    }
  }
  std::optional<json::object> get(const k8s::GroupVersionKind& gvk, const std::string& ns,
                                  const std::string& name) {
    auto r = io.run(driver->get(gvk, k8s::ObjectKey{ns, name}));
    if (!r) {
      EXPECT_TRUE(r.error().not_found()) << r.error().describe();
      return std::nullopt;
    }
    return r.value().as_object();
  }
  std::optional<json::object> get(Kind kind, const std::string& ns, const std::string& name) {
    return get(gvk(kind), ns, name);
  }
  bool exists(Kind kind, const std::string& ns, const std::string& name) {
    return get(kind, ns, name).has_value();
  }
  std::vector<json::object> list(Kind kind, const std::string& ns = {}) {
    return list_gvk(gvk(kind), ns);
  }
  std::vector<json::object> list_gvk(const k8s::GroupVersionKind& kind, const std::string& ns) {
    auto r = io.run(driver->list(kind, ns, k8s::ListOptions{}));
    EXPECT_TRUE(r.has_value()) << (r ? std::string() : r.error().describe());
    std::vector<json::object> out;
    if (!r) return out;
    for (auto& item : r->items) {
      json::object o = item.as_object();
      o["apiVersion"] = kind.api_version();
      o["kind"] = kind.kind;
      out.push_back(std::move(o));
    }
    return out;
  }
  void patch(const k8s::GroupVersionKind& gvk, const std::string& ns, const std::string& name,
             const json::value& merge_patch, bool status = false) {
    auto r = io.run(
        driver->patch(gvk, k8s::ObjectKey{ns, name}, k8s::PatchType::merge, merge_patch, status));
    ASSERT_TRUE(r.has_value()) << "patch " << gvk.kind << " " << ns << "/" << name << ": "
                               << r.error().describe();
  }
  void patch(Kind kind, const std::string& ns, const std::string& name,
             const json::value& merge_patch, bool status = false) {
    patch(gvk(kind), ns, name, merge_patch, status);
  }
  void remove(Kind kind, const std::string& ns, const std::string& name) {
    auto r = io.run(driver->remove(gvk(kind), k8s::ObjectKey{ns, name}));
    ASSERT_TRUE(r.has_value()) << r.error().describe();
  }

  static json::object secret(const std::string& ns, const std::string& name,
                             const std::map<std::string, std::string>& data) {
    json::object d;
    for (const auto& [k, v] : data) d[k] = k8s::base64_encode(v);
    return json::object{{"apiVersion", "v1"},
                        {"kind", "Secret"},
                        {"metadata", json::object{{"name", name}, {"namespace", ns}}},
                        {"data", std::move(d)}};
  }

  // The decoded `agent.yml` of a config Secret, or "<absent>".
  std::string agent_yml(const std::string& ns, const std::string& secret_name) {
    const auto s = get(Kind::secret, ns, secret_name);
    if (!s) return "<absent>";
    const auto* data = s->if_contains("data");
    if (data == nullptr || !data->is_object() || !data->as_object().contains("agent.yml")) {
      return "<no agent.yml>";
    }
    auto bytes = k8s::base64_decode(data->as_object().at("agent.yml").as_string());
    if (!bytes) return "<bad base64>";
    if (bytes->size() >= 2 && static_cast<unsigned char>((*bytes)[0]) == 0x1f &&
        static_cast<unsigned char>((*bytes)[1]) == 0x8b) {
      return gzip_decompress(*bytes).value_or("<bad gzip>");
    }
    return *bytes;
  }

  // The status of a GrafanaAgent ({} when none).
  json::object agent_status(const std::string& ns, const std::string& name) {
    const auto a = get(Kind::grafana_agent, ns, name);
    if (!a) return {};
    const auto* s = a->if_contains("status");
    return s != nullptr && s->is_object() ? s->as_object() : json::object();
  }
  // A condition of a GrafanaAgent ({} when absent).
  json::object condition(const std::string& ns, const std::string& name, std::string_view type) {
    const auto status = agent_status(ns, name);
    const auto* conds = status.if_contains("conditions");
    if (conds == nullptr || !conds->is_array()) return {};
    for (const auto& c : conds->as_array()) {
      if (c.as_object().at("type").as_string() == type) return c.as_object();
    }
    return {};
  }
  std::string condition_status(const std::string& ns, const std::string& name,
                               std::string_view type) {
    return condition_field(ns, name, type, "status", "<none>");
  }
  std::string condition_reason(const std::string& ns, const std::string& name,
                               std::string_view type) {
    return condition_field(ns, name, type, "reason", "<none>");
  }
  std::string condition_message(const std::string& ns, const std::string& name,
                                std::string_view type) {
    return condition_field(ns, name, type, "message", "");
  }
  std::string condition_field(const std::string& ns, const std::string& name, std::string_view type,
                              std::string_view field, std::string_view absent) {
    const auto c = condition(ns, name, type);
    const auto* v = c.if_contains(field);
    return v != nullptr ? std::string(v->as_string()) : std::string(absent);
  }

  std::uint64_t operator_writes() const { return cluster_->writes_by(kOperatorAgent); }

  // The operator's Event recorder writing to the API server as app/ does (aggregation,
  // spam filter), for what `kubectl get events` shows; made on first use, destroyed after
  // the modules.
  k8s::EventRecorder& api_events() {
    if (!api_events_) api_events_ = k8s::make_event_recorder(io.executor(), *client, {});
    return *api_events_;
  }
  // The Events in `ns` about `kind` `name`, as the API server holds them.
  std::vector<json::object> events_about(const std::string& ns, std::string_view kind,
                                         std::string_view name) {
    std::vector<json::object> out;
    for (auto& e : list_gvk(k8s::GroupVersionKind{"", "v1", "Event"}, ns)) {
      const auto& involved = e.at("involvedObject").as_object();
      if (involved.at("kind").as_string() == kind && involved.at("name").as_string() == name) {
        out.push_back(std::move(e));
      }
    }
    return out;
  }

 private:
  std::unique_ptr<tst::Cluster> cluster_;
  tst::TestObjects objects_{*cluster_};  // cleaned up after the modules stopped

 public:
  tst::OperatorIdentity identity;  // the operator's ServiceAccount and token
  tst::IoThreads io;
  std::unique_ptr<k8s::ApiClient> client;  // the operator's
  std::unique_ptr<k8s::ApiClient> driver;  // the test's
  std::unique_ptr<k8s::InformerFactory> informers;
  RecordingEvents events;

 private:
  std::unique_ptr<k8s::EventRecorder> api_events_;  // outlives the modules that record
  std::vector<std::unique_ptr<runtime::ControllerModule>> modules_;
};

}  // namespace aop::agent::testing
