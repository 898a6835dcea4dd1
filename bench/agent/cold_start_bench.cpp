// Cold start of the live Grafana Agent controller against kube-sim: 100
// GrafanaAgents, each with one MetricsInstance selecting 50 ServiceMonitors (2 endpoints
// each) in its namespace — 5,000 monitors — plus a remote_write basic-auth Secret per
// namespace and 2,000 Secrets nobody references.
//
// Timed: from starting the operator's caches to every root reconciled (its StatefulSet
// created, Reconciled=True written, the queue idle): list+watch of every cache, discovery
// and rendering of every root, the GETs of the referenced Secrets, and every create and
// status write. Then an unchanged resync of all 100 roots (no write, no GET).
//
// kube-sim runs in process on its own thread (the way the kube-sim binary runs it), the
// operator on its own io_context threads.
#include <pthread.h>
#include <time.h>

#include <atomic>
#include <filesystem>
#include <future>
#include <thread>

#include <benchmark/benchmark.h>
#include <boost/asio.hpp>
#include <boost/json.hpp>

#include "k8s/api_client.hpp"
#include "k8s/base64.hpp"
#include "k8s/informer_factory.hpp"
#include "k8s/kubeconfig.hpp"
#include "net/log.hpp"
#include "reconcile/agent/controller.hpp"
#include "reconcile/agent/kinds.hpp"
#include "tools/kube-sim/server.hpp"

namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using namespace std::chrono_literals;
using aop::agent::Kind;

constexpr int kNamespaces = 10;
constexpr int kRoots = 100;           // 10 per namespace
constexpr int kMonitorsPerRoot = 50;  // 5,000 ServiceMonitors
constexpr int kUnreferencedSecrets = 2000;
constexpr const char* kOperatorAgent = "agent-operator-bench";

std::string ns_of(int root) {
  return "team-" + std::to_string(root % kNamespaces);
}
std::string root_name(int root) {
  return "agent-" + std::to_string(root);
}

json::value parse(const std::string& s) {
  return json::parse(s);
}

json::object resource(std::string_view api_version, std::string_view kind, const std::string& ns,
                      const std::string& name, json::object labels, json::object spec) {
  json::object md{{"name", name}, {"namespace", ns}};
  if (!labels.empty()) md["labels"] = std::move(labels);
  return json::object{{"apiVersion", api_version},
                      {"kind", kind},
                      {"metadata", std::move(md)},
                      {"spec", std::move(spec)}};
}

void must_create(aop::sim::ApiServer& api, json::value obj) {
  auto r = api.create_object(std::move(obj), "bench-setup");
  if (!r) {
    std::fprintf(stderr, "setup: create failed: %s\n", r.error().message.c_str());
    std::abort();
  }
}

void populate(aop::sim::ApiServer& api) {
  const auto crds = std::filesystem::path(AOP_SOURCE_DIR) / "deploy" / "crds";
  if (auto r = api.preload(crds.string()); !r) {
    std::fprintf(stderr, "setup: %s\n", r.error().message.c_str());
    std::abort();
  }
  for (int n = 0; n < kNamespaces; ++n) {
    const std::string ns = "team-" + std::to_string(n);
    must_create(api, json::object{{"apiVersion", "v1"},
                                  {"kind", "Namespace"},
                                  {"metadata", json::object{{"name", ns}}}});
    must_create(
        api, json::object{{"apiVersion", "v1"},
                          {"kind", "Secret"},
                          {"metadata", json::object{{"name", "remote-write"}, {"namespace", ns}}},
                          {"data", json::object{{"username", aop::k8s::base64_encode("writer")},
                                                {"password", aop::k8s::base64_encode("secret")}}}});
  }
  for (int i = 0; i < kUnreferencedSecrets; ++i) {
    must_create(api, json::object{{"apiVersion", "v1"},
                                  {"kind", "Secret"},
                                  {"metadata", json::object{{"name", "other-" + std::to_string(i)},
                                                            {"namespace", ns_of(i)}}},
                                  {"data", json::object{{"token", "dG9rZW4="}}}});
  }
  for (int r = 0; r < kRoots; ++r) {
    const std::string ns = ns_of(r);
    const std::string name = root_name(r);
    json::object agent_spec = parse(R"({"metrics": {"shards": 1, "replicas": 1,
        "instanceSelector": {"matchLabels": {}}}})")
                                  .as_object();
    agent_spec["metrics"].as_object()["instanceSelector"].as_object()["matchLabels"] =
        json::object{{"agent", name}};
    must_create(api, resource("monitoring.grafana.com/v1alpha1", "GrafanaAgent", ns, name, {},
                              std::move(agent_spec)));
    json::object instance_spec = parse(R"({"remoteWrite": [{"url": "http://mimir:9009/api/v1/push",
        "basicAuth": {"username": {"name": "remote-write", "key": "username"},
                      "password": {"name": "remote-write", "key": "password"}}}]})")
                                     .as_object();
    instance_spec["serviceMonitorSelector"] =
        json::object{{"matchLabels", json::object{{"group", name}}}};
    must_create(api, resource("monitoring.grafana.com/v1alpha1", "MetricsInstance", ns, name,
                              json::object{{"agent", name}}, std::move(instance_spec)));
    for (int m = 0; m < kMonitorsPerRoot; ++m) {
      std::string mon = name;
      mon += "-mon-";
      mon += std::to_string(m);
      json::object spec = parse(R"({"selector": {
            "matchExpressions": [{"key": "tier", "operator": "In", "values": ["web", "api"]}]},
          "jobLabel": "app", "targetLabels": ["team"],
          "endpoints": [
            {"port": "http", "interval": "30s", "relabelings": [
              {"sourceLabels": ["__meta_kubernetes_pod_node_name"], "targetLabel": "node"}]},
            {"port": "metrics", "path": "/internal/metrics", "scheme": "https",
             "tlsConfig": {"insecureSkipVerify": true}}]})")
                              .as_object();
      spec["selector"].as_object()["matchLabels"] = json::object{{"app", mon}};
      must_create(api, resource("monitoring.coreos.com/v1", "ServiceMonitor", ns, mon,
                                json::object{{"group", name}}, std::move(spec)));
    }
  }
}

double cpu_seconds(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

double process_cpu_seconds() {
  return cpu_seconds(CLOCK_PROCESS_CPUTIME_ID);
}

// kube-sim on its own thread.
class ServerThread {
 public:
  ServerThread() {
    aop::sim::SimServerOptions o;
    o.api.seed = 1;
    auto s = aop::sim::SimServer::create(io_.get_executor(), o);
    if (!s) std::abort();
    server_ = std::move(*s);
    populate(server_->api());
    server_->start();
    thread_ = std::thread([this] {
      auto guard = asio::make_work_guard(io_);
      io_.run();
    });
  }
  ~ServerThread() {
    io_.stop();
    thread_.join();
  }
  std::string url() const { return server_->url(); }
  // CPU time of the server's thread: the process's CPU time minus this is the operator's.
  double cpu_seconds() {
    clockid_t cid;
    if (pthread_getcpuclockid(thread_.native_handle(), &cid) != 0) return 0;
    return ::cpu_seconds(cid);
  }
  // Writes recorded for the operator's User-Agent (read on the server's thread).
  std::uint64_t operator_writes() {
    std::promise<std::uint64_t> p;
    asio::post(io_, [&] {
      const auto stats = server_->api().stats_json();
      const auto* by = stats.at("writes").as_object().if_contains("by_user_agent");
      const auto* n = by != nullptr ? by->as_object().if_contains(kOperatorAgent) : nullptr;
      p.set_value(n != nullptr ? n->to_number<std::uint64_t>() : 0);
    });
    return p.get_future().get();
  }

 private:
  asio::io_context io_;
  std::unique_ptr<aop::sim::SimServer> server_;
  std::thread thread_;
};

class OperatorThreads {
 public:
  explicit OperatorThreads(unsigned n) : work_(asio::make_work_guard(io_)) {
    for (unsigned i = 0; i < n; ++i) threads_.emplace_back([this] { io_.run(); });
  }
  ~OperatorThreads() { stop(); }
  void stop() {
    work_.reset();
    io_.stop();
    for (auto& t : threads_) {
      if (t.joinable()) t.join();
    }
  }
  asio::io_context& io() { return io_; }

 private:
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  std::vector<std::thread> threads_;
};

bool wait_for(const std::function<bool()>& cond, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!cond()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(2ms);  // polling interval of the measurement
  }
  return true;
}

bool reconciled(const aop::k8s::ObjectPtr& agent) {
  const auto conds = agent->at({"status", "conditions"});
  if (!conds || !conds->is_array()) return false;
  for (const auto& c : conds->get_array()) {
    const auto& o = c.as_object();
    if (o.at("type").as_string() == "Reconciled") return o.at("status").as_string() == "True";
  }
  return false;
}

void BM_ColdStart100Roots5000Monitors(benchmark::State& state) {
  aop::net::log::configure(aop::net::log::Level::error, aop::net::log::Format::text);
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores)
    state.PauseTiming();
    ServerThread server;
    OperatorThreads threads(std::max(2u, std::thread::hardware_concurrency()));
    aop::k8s::ClientConfig config;
    config.server = server.url();
    aop::k8s::ApiClientOptions co;
    co.user_agent = kOperatorAgent;
    co.qps = 0;  // measure the controller, not the client-side rate limit
    auto client = aop::k8s::make_api_client(threads.io().get_executor(), config, co);
    if (!asio::co_spawn(threads.io(), client->discover(), asio::use_future).get()) std::abort();
    aop::k8s::InformerFactory informers(threads.io().get_executor(), *client, {});
    aop::runtime::ModuleContext ctx;
    ctx.executor = threads.io().get_executor();
    ctx.client = client.get();
    ctx.informers = &informers;
    ctx.may_write = [] { return true; };
    ctx.workers = 4;
    ctx.resync_period = aop::runtime::Duration::zero();
    aop::agent::AgentModuleOptions options;
    options.agent.operator_version = "bench";
    auto module = std::make_unique<aop::agent::AgentController>(ctx, options);
    aop::k8s::CacheSpec sts;
    sts.gvk = aop::agent::gvk(Kind::stateful_set);
    sts.label_selector = "app.kubernetes.io/managed-by=grafana-agent-operator";
    aop::k8s::KindCache& owned_sts = informers.cache(sts);  // the module's cache (same spec)
    aop::k8s::CacheSpec agents_spec;
    agents_spec.gvk = aop::agent::gvk(Kind::grafana_agent);
    aop::k8s::KindCache& agents = informers.cache(agents_spec);
    state.ResumeTiming();

    const double cpu0 = process_cpu_seconds();
    const double server0 = server.cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    informers.start();
    if (!wait_for([&] { return module->not_ready_reason().empty(); }, 300s)) std::abort();
    const auto synced = std::chrono::steady_clock::now();
    module->start_reconciling();
    const bool done = wait_for(
        [&] {
          if (owned_sts.size() != static_cast<std::size_t>(kRoots) || !module->idle()) return false;
          const auto all = agents.list();
          return all.size() == static_cast<std::size_t>(kRoots) &&
                 std::all_of(all.begin(), all.end(), reconciled);
        },
        600s);
    const auto t1 = std::chrono::steady_clock::now();
    const double cpu1 = process_cpu_seconds();
    const double server1 = server.cpu_seconds();
    if (!done) state.SkipWithError("the roots were not all reconciled within 10 minutes");

    state.PauseTiming();
    const auto writes = server.operator_writes();
    const auto fetches = module->asset_fetches();
    const auto reconciles = module->reconciles();
    // An unchanged resync of every root.
    const auto r0 = std::chrono::steady_clock::now();
    const double cpu_r0 = process_cpu_seconds();
    const double server_r0 = server.cpu_seconds();
    const auto before = module->reconciles();
    module->controller().resync_now();
    wait_for([&] { return module->reconciles() >= before + kRoots && module->idle(); }, 300s);
    const auto r1 = std::chrono::steady_clock::now();
    const double cpu2 = process_cpu_seconds();
    const double server2 = server.cpu_seconds();
    const auto resync_writes = server.operator_writes() - writes;
    const auto resync_fetches = module->asset_fetches() - fetches;
    module->stop_reconciling();
    informers.stop();
    threads.stop();
    module.reset();
    state.ResumeTiming();

    using ms = std::chrono::duration<double, std::milli>;
    state.counters["cache_sync_ms"] = ms(synced - t0).count();
    state.counters["cold_start_ms"] = ms(t1 - t0).count();
    state.counters["writes"] = static_cast<double>(writes);
    state.counters["secret_gets"] = static_cast<double>(fetches);
    state.counters["reconciles"] = static_cast<double>(reconciles);
    state.counters["operator_cpu_ms"] = ((cpu1 - cpu0) - (server1 - server0)) * 1000;
    state.counters["kube_sim_cpu_ms"] = (server1 - server0) * 1000;
    state.counters["resync_ms"] = ms(r1 - r0).count();
    state.counters["resync_operator_cpu_ms"] = ((cpu2 - cpu_r0) - (server2 - server_r0)) * 1000;
    state.counters["resync_writes"] = static_cast<double>(resync_writes);
    state.counters["resync_gets"] = static_cast<double>(resync_fetches);
  }
}
BENCHMARK(BM_ColdStart100Roots5000Monitors)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
