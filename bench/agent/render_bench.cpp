// Rendering cost of one GrafanaAgent root with 1,000 ServiceMonitors × 3 endpoints: the
// metrics configuration alone (render fragments + assemble + emission), and the whole
// pipeline of one reconcile (reconcile/agent/pipeline.hpp: discovery over an in-memory
// cluster, asset resolution, configuration, every generated object).
#include <malloc.h>

#include <optional>

#include <benchmark/benchmark.h>

#include <boost/json.hpp>

#include "bench/agent/scale_root.hpp"
#include "reconcile/agent/config.hpp"
#include "reconcile/agent/decode.hpp"
#include "reconcile/agent/encoding.hpp"
#include "reconcile/agent/memory_cluster.hpp"
#include "reconcile/agent/pipeline.hpp"

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

// The validated hierarchy and its assets, as the pipeline hands them to rendering.
struct Rendered {
  agent::Hierarchy hierarchy;
  agent::AssetStore assets;
};
Rendered resolved(const agent::MemoryCluster& c, const agent::GrafanaAgent& a) {
  agent::DecodeCache uncached(false);
  auto d = agent::discover(a, c, uncached);
  Rendered r;
  r.hierarchy = agent::validate(std::move(d.value.hierarchy), c, agent::Options{}).value;
  r.assets = agent::resolve_assets(r.hierarchy, c).value;
  return r;
}

// The metrics file's tree: render fragments, then assemble.
value metrics_tree(const Rendered& r, const agent::Options& options) {
  auto fragments = agent::render_fragments(r.hierarchy, r.assets, options);
  auto configs = agent::assemble(std::move(fragments.value), r.hierarchy);
  return std::move(*configs.value[agent::ConfigFile::metrics]);
}

void BM_RenderMetricsConfig(benchmark::State& state) {
  const auto cluster = make_cluster();
  const agent::Options options;
  const auto r = resolved(cluster, the_agent(cluster));
  std::size_t bytes = 0;
  while (state.KeepRunning()) {
    auto text = agent::emit_config(metrics_tree(r, options), options);
    bytes = text.size();
    benchmark::DoNotOptimize(text);
  }
  state.counters["config_bytes"] = static_cast<double>(bytes);
  state.counters["scrape_configs"] = kMonitors * 3;
}
BENCHMARK(BM_RenderMetricsConfig)->Unit(benchmark::kMillisecond);

// The JSON tree alone, to separate building from YAML emission.
void BM_MetricsConfigTree(benchmark::State& state) {
  const auto cluster = make_cluster();
  const agent::Options options;
  const auto r = resolved(cluster, the_agent(cluster));
  while (state.KeepRunning()) {
    auto tree = metrics_tree(r, options);
    benchmark::DoNotOptimize(tree);
  }
}
BENCHMARK(BM_MetricsConfigTree)->Unit(benchmark::kMillisecond);

// Every stage but decoding the root and hashing: discover, validate, resolve assets,
// render fragments, assemble, build objects.
void BM_ReconcilePureCore(benchmark::State& state) {
  const auto cluster = make_cluster();
  const agent::Options options;
  const auto a = the_agent(cluster);
  while (state.KeepRunning()) {
    const auto r = resolved(cluster, a);
    auto fragments = agent::render_fragments(r.hierarchy, r.assets, options);
    auto configs = agent::assemble(std::move(fragments.value), r.hierarchy);
    auto desired = agent::build_objects(r.hierarchy, r.assets, std::move(configs.value), options);
    benchmark::DoNotOptimize(desired);
  }
}
BENCHMARK(BM_ReconcilePureCore)->Unit(benchmark::kMillisecond);

// ---- one root shaped like the scale benchmark's (bench/agent/scale_root.hpp) ----------

// plan_root() from scratch: what every reconcile of such a root costs without caching.
void BM_ScaleRootPlan(benchmark::State& state) {
  aop::bench::ScaleRoot root;
  const agent::Options options;
  const auto r = root.root();
  std::size_t steps = 0;
  for (auto _ : state) {
    auto plan = agent::plan_root(*r, root.cluster(), options);
    steps = plan.apply.steps.size();
    benchmark::DoNotOptimize(plan);
  }
  state.counters["steps"] = static_cast<double>(steps);
}
BENCHMARK(BM_ScaleRootPlan)->Unit(benchmark::kMillisecond);

// The same with the decode stage's cache warm, as the live controller runs it: the
// members are not decoded again.
void BM_ScaleRootPlanDecodeCached(benchmark::State& state) {
  aop::bench::ScaleRoot root;
  const agent::Options options;
  const auto r = root.root();
  agent::DecodeCache cache;
  const agent::PipelineInputs in{root.cluster(), root.cluster(), options, cache, {}};
  (void)agent::plan_root(*r, in);
  for (auto _ : state) {
    auto plan = agent::plan_root(*r, in);
    benchmark::DoNotOptimize(plan);
  }
  state.counters["decodes"] = static_cast<double>(cache.misses());
}
BENCHMARK(BM_ScaleRootPlanDecodeCached)->Unit(benchmark::kMillisecond);

// One reconcile after one ServiceMonitor changed (the churn case), decode cache warm:
// arg 0 renders every member (--agent-incremental-render=false), arg 1 keeps the
// fragments (fragment_cache.hpp) and renders the changed monitor alone.
void BM_ScaleRootPlanOneEdit(benchmark::State& state) {
  aop::bench::ScaleRoot root;
  const agent::Options options;
  const auto r = root.root();
  agent::DecodeCache cache;
  agent::FragmentCache fragments(state.range(0) == 1);
  const agent::PipelineInputs in{root.cluster(), root.cluster(), options, cache, {}, &fragments};
  (void)agent::plan_root(*r, in);
  const auto cold = fragments.misses();
  int i = 0;
  for (auto _ : state) {
    state.PauseTiming();
    root.edit_service_monitor(i++ % aop::bench::ScaleRoot::service_monitors());
    state.ResumeTiming();
    auto plan = agent::plan_root(*r, in);
    benchmark::DoNotOptimize(plan);
  }
  state.counters["fragments_rendered_per_plan"] =
      static_cast<double>(fragments.misses() - cold) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_ScaleRootPlanOneEdit)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// The first plans of four roots that select the same 300 members (a cold start where
// several agents scrape the same services), the four together: arg 0 renders every member for
// every root (--agent-incremental-render=false), arg 1 shares the fragments the first
// root rendered with the others (fragment_cache.hpp).
void BM_ScaleRootsColdStartShared(benchmark::State& state) {
  aop::bench::ScaleRoot root;
  std::vector<aop::k8s::ObjectPtr> roots{root.root()};
  for (int n = 1; n < 4; ++n) roots.push_back(root.add_root(n));
  const agent::Options options;
  std::uint64_t shared = 0;
  for (auto _ : state) {
    agent::DecodeCache cache;
    agent::FragmentCache fragments(state.range(0) == 1);
    const agent::PipelineInputs in{root.cluster(), root.cluster(), options, cache, {}, &fragments};
    for (const auto& r : roots) {
      auto plan = agent::plan_root(*r, in);
      benchmark::DoNotOptimize(plan);
    }
    shared = fragments.shared_hits();
  }
  state.counters["roots"] = static_cast<double>(roots.size());
  state.counters["fragments_shared"] = static_cast<double>(shared);
}
BENCHMARK(BM_ScaleRootsColdStartShared)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// Heap held by the kept fragments of the scale root (mallinfo2 before and after the first
// plan, the decode cache off so that it holds nothing), per kept fragment.
void BM_ScaleRootFragmentCacheMemory(benchmark::State& state) {
  aop::bench::ScaleRoot root;
  const agent::Options options;
  const auto r = root.root();
  double per_fragment = 0;
  double fragments_kept = 0;
  for (auto _ : state) {
    agent::DecodeCache uncached(false);
    agent::FragmentCache fragments;
    const agent::PipelineInputs in{root.cluster(), root.cluster(), options, uncached, {},
                                   &fragments};
    malloc_trim(0);
    const auto before = mallinfo2().uordblks;
    {
      auto plan = agent::plan_root(*r, in);
      benchmark::DoNotOptimize(plan);
    }
    malloc_trim(0);
    const auto after = mallinfo2().uordblks;
    fragments_kept = static_cast<double>(fragments.size());
    per_fragment = (static_cast<double>(after) - static_cast<double>(before)) / fragments_kept;
  }
  state.counters["fragments_kept"] = fragments_kept;
  state.counters["bytes_per_fragment"] = per_fragment;
}
BENCHMARK(BM_ScaleRootFragmentCacheMemory)->Iterations(1)->Unit(benchmark::kMillisecond);

// The parts: discovery (listing and decoding ~600 monitors), the metrics config render,
// and gzip of the rendered text.
void BM_ScaleRootDiscover(benchmark::State& state) {
  aop::bench::ScaleRoot root;
  const auto a = root.agent();
  for (auto _ : state) {
    agent::DecodeCache uncached(false);
    auto d = agent::discover(a, root.cluster(), uncached);
    benchmark::DoNotOptimize(d);
  }
}
BENCHMARK(BM_ScaleRootDiscover)->Unit(benchmark::kMillisecond);

// The validate stage alone on the discovered scale root (every field check of the root,
// its instances and 1,000 monitors, RE2 for every relabel regex): what validation adds
// to a plan_root. Copying the hierarchy in and destroying the result are not timed.
void BM_ScaleRootValidate(benchmark::State& state) {
  aop::bench::ScaleRoot root;
  const agent::Options options;
  agent::DecodeCache uncached(false);
  const auto discovered = agent::discover(root.agent(), root.cluster(), uncached);
  for (auto _ : state) {
    state.PauseTiming();
    agent::Hierarchy h = discovered.value.hierarchy;
    std::optional<agent::Outcome<agent::Hierarchy>> v;
    state.ResumeTiming();
    v.emplace(agent::validate(std::move(h), root.cluster(), options));
    benchmark::DoNotOptimize(v);
    state.PauseTiming();
    v.reset();
    state.ResumeTiming();
  }
}
BENCHMARK(BM_ScaleRootValidate)->Unit(benchmark::kMillisecond);

void BM_ScaleRootRenderMetrics(benchmark::State& state) {
  aop::bench::ScaleRoot root;
  const agent::Options options;
  const auto r = resolved(root.cluster(), root.agent());
  std::size_t bytes = 0;
  for (auto _ : state) {
    auto text = agent::emit_config(metrics_tree(r, options), options);
    bytes = text.size();
    benchmark::DoNotOptimize(text);
  }
  state.counters["config_bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_ScaleRootRenderMetrics)->Unit(benchmark::kMillisecond);

void BM_ScaleRootGzip(benchmark::State& state) {
  aop::bench::ScaleRoot root;
  const agent::Options options;
  const auto r = resolved(root.cluster(), root.agent());
  const std::string text = agent::emit_config(metrics_tree(r, options), options);
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
