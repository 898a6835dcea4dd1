// Rendering cost of one GrafanaAgent root with 1,000 ServiceMonitors × 3 endpoints
// (issue 6): the metrics configuration alone, and the whole pure pipeline of one
// reconcile (discovery over an in-memory cluster, asset resolution, config rendering and
// every generated object).
#include <benchmark/benchmark.h>

#include <boost/json.hpp>

#include "bench/agent/scale_root.hpp"
#include "reconcile/agent/config.hpp"
#include "reconcile/agent/decode.hpp"
#include "reconcile/agent/encoding.hpp"
#include "reconcile/agent/hierarchy.hpp"
#include "reconcile/agent/memory_cluster.hpp"
#include "reconcile/agent/objects.hpp"
#include "reconcile/agent/root.hpp"

namespace {

using boost::json::value;
namespace agent = aop::agent;

constexpr int kMonitors = 1000;
constexpr int kNamespaces = 20;

// A realistic ServiceMonitor: a label selector, three endpoints with relabelings, one
// with TLS from a Secret and one with a bearer token Secret.
value service_monitor(int i) {
  const std::string ns = "team-" + std::to_string(i % kNamespaces);
  const std::string name = "svc-" + std::to_string(i);
  return boost::json::parse(R"({
    "apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor",
    "metadata": {"name": ")" +
                            name + R"(", "namespace": ")" + ns + R"(",
                 "labels": {"monitoring": "enabled"}},
    "spec": {
      "jobLabel": "app.kubernetes.io/name",
      "targetLabels": ["team"],
      "selector": {"matchLabels": {"app": ")" +
                            name + R"("},
                   "matchExpressions": [{"key": "tier", "operator": "In", "values": ["web", "api"]}]},
      "endpoints": [
        {"port": "http", "interval": "30s", "path": "/metrics",
         "relabelings": [{"sourceLabels": ["__meta_kubernetes_pod_node_name"], "targetLabel": "node_name"}],
         "metricRelabelings": [{"sourceLabels": ["__name__"], "regex": "go_.*", "action": "drop"}]},
        {"port": "https", "scheme": "https",
         "tlsConfig": {"ca": {"secret": {"name": "tls", "key": "ca.crt"}}, "serverName": "svc"}},
        {"targetPort": 9102, "bearerTokenSecret": {"name": "token", "key": "token"}}
      ]
    }})");
}

agent::MemoryCluster make_cluster() {
  agent::MemoryCluster c;
  (void)c.add(boost::json::parse(R"({
    "apiVersion": "monitoring.grafana.com/v1alpha1", "kind": "GrafanaAgent",
    "metadata": {"name": "agent", "namespace": "monitoring", "uid": "u"},
    "spec": {"metrics": {"shards": 3, "instanceSelector": {},
             "remoteWrite": [{"url": "https://prometheus/api/v1/write"}]}}})"));
  (void)c.add(boost::json::parse(R"({
    "apiVersion": "monitoring.grafana.com/v1alpha1", "kind": "MetricsInstance",
    "metadata": {"name": "main", "namespace": "monitoring"},
    "spec": {"serviceMonitorSelector": {"matchLabels": {"monitoring": "enabled"}},
             "serviceMonitorNamespaceSelector": {}}})"));
  for (int i = 0; i < kMonitors; ++i) (void)c.add(service_monitor(i));
  for (int n = 0; n < kNamespaces; ++n) {
    const std::string ns = "team-" + std::to_string(n);
    (void)c.add(boost::json::parse(R"({"apiVersion": "v1", "kind": "Secret",
      "metadata": {"name": "tls", "namespace": ")" +
                                   ns + R"("}, "data": {"ca.crt": "Q0E="}})"));
    (void)c.add(boost::json::parse(R"({"apiVersion": "v1", "kind": "Secret",
      "metadata": {"name": "token", "namespace": ")" +
                                   ns + R"("}, "data": {"token": "VE9L"}})"));
  }
  return c;
}

agent::GrafanaAgent the_agent(const agent::MemoryCluster& c) {
  return agent::decode_grafana_agent(value(*c.objects(agent::Kind::grafana_agent).at(0))).value();
}

void BM_RenderMetricsConfig(benchmark::State& state) {
  const auto cluster = make_cluster();
  const agent::Options options;
  const auto d = agent::discover(the_agent(cluster), cluster, options);
  const auto assets = agent::resolve_assets(d.hierarchy, cluster).value();
  std::size_t bytes = 0;
  while (state.KeepRunning()) {
    auto cfg = agent::render_metrics_config(d.hierarchy, assets, options);
    bytes = cfg.value().text.size();
    benchmark::DoNotOptimize(cfg);
  }
  state.counters["config_bytes"] = static_cast<double>(bytes);
  state.counters["scrape_configs"] = kMonitors * 3;
}
BENCHMARK(BM_RenderMetricsConfig)->Unit(benchmark::kMillisecond);

// The JSON tree alone, to separate building from YAML emission.
void BM_MetricsConfigTree(benchmark::State& state) {
  const auto cluster = make_cluster();
  const agent::Options options;
  const auto d = agent::discover(the_agent(cluster), cluster, options);
  const auto assets = agent::resolve_assets(d.hierarchy, cluster).value();
  while (state.KeepRunning()) {
    auto tree = agent::metrics_config_tree(d.hierarchy, assets, options, nullptr);
    benchmark::DoNotOptimize(tree);
  }
}
BENCHMARK(BM_MetricsConfigTree)->Unit(benchmark::kMillisecond);

void BM_ReconcilePureCore(benchmark::State& state) {
  const auto cluster = make_cluster();
  const agent::Options options;
  const auto a = the_agent(cluster);
  while (state.KeepRunning()) {
    auto d = agent::discover(a, cluster, options);
    auto assets = agent::resolve_assets(d.hierarchy, cluster).value();
    auto desired = agent::build_objects(d.hierarchy, assets, options);
    benchmark::DoNotOptimize(desired);
  }
}
BENCHMARK(BM_ReconcilePureCore)->Unit(benchmark::kMillisecond);

// ---- one root shaped like the scale benchmark's (bench/agent/scale_root.hpp) ----------

// plan_root() from scratch: what every reconcile of such a root costs without caching.
void BM_ScaleRootPlan(benchmark::State& state) {
  aop::bench::ScaleRoot root;
  const agent::Options options;
  const auto a = root.agent();
  std::size_t steps = 0;
  for (auto _ : state) {
    auto plan = agent::plan_root(a, root.cluster(), root.cluster(), options);
    steps = plan.desired.steps.size();
    benchmark::DoNotOptimize(plan);
  }
  state.counters["steps"] = static_cast<double>(steps);
}
BENCHMARK(BM_ScaleRootPlan)->Unit(benchmark::kMillisecond);

// The parts: discovery (listing and decoding ~600 monitors), the metrics config render,
// and gzip of the rendered text.
void BM_ScaleRootDiscover(benchmark::State& state) {
  aop::bench::ScaleRoot root;
  const agent::Options options;
  const auto a = root.agent();
  for (auto _ : state) {
    auto d = agent::discover(a, root.cluster(), options);
    benchmark::DoNotOptimize(d);
  }
}
BENCHMARK(BM_ScaleRootDiscover)->Unit(benchmark::kMillisecond);

void BM_ScaleRootRenderMetrics(benchmark::State& state) {
  aop::bench::ScaleRoot root;
  const agent::Options options;
  const auto d = agent::discover(root.agent(), root.cluster(), options);
  const auto assets = agent::resolve_assets(d.hierarchy, root.cluster()).value();
  std::size_t bytes = 0;
  for (auto _ : state) {
    auto cfg = agent::render_metrics_config(d.hierarchy, assets, options);
    bytes = cfg.value().text.size();
    benchmark::DoNotOptimize(cfg);
  }
  state.counters["config_bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_ScaleRootRenderMetrics)->Unit(benchmark::kMillisecond);

void BM_ScaleRootGzip(benchmark::State& state) {
  aop::bench::ScaleRoot root;
  const agent::Options options;
  const auto d = agent::discover(root.agent(), root.cluster(), options);
  const auto assets = agent::resolve_assets(d.hierarchy, root.cluster()).value();
  const std::string text = agent::render_metrics_config(d.hierarchy, assets, options).value().text;
  std::size_t bytes = 0;
  for (auto _ : state) {
    auto z = agent::gzip_compress(text);
    bytes = z.size();
    benchmark::DoNotOptimize(z);
  }
  state.counters["config_bytes"] = static_cast<double>(text.size());
  state.counters["gzip_bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_ScaleRootGzip)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
