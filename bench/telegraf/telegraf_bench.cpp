// Cold generation of the telegraf controller's desired state at scale: 10,000
// annotated Namespaces with 10 endpoints each, from the objects as an informer would
// hold them to every ConfigMap, Secret and Deployment, through the same `render` entry
// the CLI uses. The pieces are measured per namespace as well, to show where the time
// goes. Run a release build:
//
//   cmake --preset release && cmake --build --preset release --target telegraf_bench
//   build/release/bench/telegraf_bench
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <boost/json.hpp>

#include "reconcile/telegraf/annotation.hpp"
#include "reconcile/telegraf/config.hpp"
#include "reconcile/telegraf/objects.hpp"
#include "reconcile/telegraf/render.hpp"

namespace {

namespace json = boost::json;
using namespace aop::telegraf;

constexpr int kNamespaces = 10'000;
constexpr int kEndpoints = 10;

// Ten endpoints: seven plain `name: url` items, three with per-endpoint options.
std::string annotation(const std::string& ns) {
  std::string yaml;
  for (int i = 0; i < kEndpoints; ++i) {
    const std::string url = "http://service-" + std::to_string(i) + "." + ns +
                            ".svc:" + std::to_string(8080 + i) + "/metrics";
    if (i < 7) {
      yaml += "- endpoint_" + std::to_string(i) + ": \"" + url + "\"\n";
    } else {
      yaml += "- endpoint_" + std::to_string(i) + ":\n    url: \"" + url +
              "\"\n    interval: 30s\n    metric_version: 1\n    tags:\n      tier: backend\n"
              "      team: square\n";
    }
  }
  return yaml;
}

json::value make_namespace(int i) {
  const std::string name = "application-" + std::to_string(i);
  return json::object{
      {"apiVersion", "v1"},
      {"kind", "Namespace"},
      {"metadata",
       json::object{
           {"name", name},
           {"uid", "00000000-0000-0000-0000-" + std::to_string(100000000000 + i)},
           {"labels", json::object{{"kubernetes.io/metadata.name", name}}},
           {"annotations",
            json::object{{"telegraf.influxdata.com/rubin-telegraf-operator", annotation(name)}}},
       }},
  };
}

const std::vector<json::value>& cluster() {
  static const std::vector<json::value> objects = [] {
    std::vector<json::value> out;
    out.reserve(kNamespaces);
    for (int i = 0; i < kNamespaces; ++i) out.push_back(make_namespace(i));
    return out;
  }();
  return objects;
}

TelegrafOptions options() {
  TelegrafOptions o;
  o.token_secret = SecretKeyRef{"telegraf", "influxdb-token", "token"};
  return o;
}

// The whole cold pass: 10,000 targets → 30,000 objects.
void BM_ColdRender10kNamespaces(benchmark::State& state) {
  const auto& objects = cluster();
  const TelegrafOptions o = options();
  std::size_t produced = 0;
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): the benchmark loop idiom
    RenderResult r = render(objects, o, "token-bytes");
    produced = r.objects.size();
    if (!r.problems.empty()) state.SkipWithError(r.problems.front().message.c_str());
    benchmark::DoNotOptimize(r);
  }
  state.counters["objects"] = static_cast<double>(produced);
  state.counters["namespaces/s"] = benchmark::Counter(
      static_cast<double>(kNamespaces), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_ColdRender10kNamespaces)->Unit(benchmark::kMillisecond)->Iterations(3);

// Same, plus serializing every object to JSON (the bytes an apply would send).
void BM_ColdRenderAndSerialize10kNamespaces(benchmark::State& state) {
  const auto& objects = cluster();
  const TelegrafOptions o = options();
  std::size_t bytes = 0;
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): the benchmark loop idiom
    RenderResult r = render(objects, o, "token-bytes");
    bytes = 0;
    for (const auto& obj : r.objects) bytes += json::serialize(obj).size();
    benchmark::DoNotOptimize(bytes);
  }
  state.counters["MB"] = static_cast<double>(bytes) / 1e6;
}
BENCHMARK(BM_ColdRenderAndSerialize10kNamespaces)->Unit(benchmark::kMillisecond)->Iterations(3);

// Per namespace: the steps of the pass.
void BM_ParseAnnotation10Endpoints(benchmark::State& state) {
  const std::string yaml = annotation("application-1");
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): the benchmark loop idiom
    AnnotationParse p = parse_annotation(yaml);
    benchmark::DoNotOptimize(p);
  }
}
BENCHMARK(BM_ParseAnnotation10Endpoints)->Unit(benchmark::kMicrosecond);

void BM_RenderToml10Endpoints(benchmark::State& state) {
  const AnnotationParse p = parse_annotation(annotation("application-1"));
  const TelegrafOptions o = options();
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): the benchmark loop idiom
    std::string config = render_telegraf_config("application-1", p.endpoints, o);
    benchmark::DoNotOptimize(config);
  }
}
BENCHMARK(BM_RenderToml10Endpoints)->Unit(benchmark::kMicrosecond);

void BM_BuildObjectsOneTarget(benchmark::State& state) {
  const TelegrafOptions o = options();
  std::vector<Source> sources{*read_source(make_namespace(1), o).source};
  const TargetPlan plan = plan_target("application-1", sources);
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): the benchmark loop idiom
    auto built = build_objects(plan, o, "token-bytes");
    benchmark::DoNotOptimize(built);
  }
}
BENCHMARK(BM_BuildObjectsOneTarget)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
