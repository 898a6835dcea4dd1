// What a whole reconcile's planning (plan_root: decode, discover, validate, render, build
// the objects) costs on a root holding a poison input: a huge shard count, YAML alias
// bombs in an additionalScrapeConfigs Secret and in a PodLogs match stage, 10 MiB
// strings in a root-level field, a member field and a referenced Secret. Each case runs in
// its own forked child, so that one case's peak does not hide the next one's (ru_maxrss
// only grows); the cluster (its YAML parsed, the 10 MiB strings built) is made before the
// fork and not counted: the live controller gets those objects from its caches.
//
//   build/release/bench/agent_poison_root_bench
//
// Prints one line per case: name, CPU ms (user + system), extra peak RSS in MiB, and how
// the plan ended (its failure, or the number of problems). Exit status 1 if any case
// planned without a failure or a problem, or took >= 1 s CPU or >= 64 MiB.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <boost/json.hpp>

#include "bench/process_usage.hpp"
#include "k8s/yaml.hpp"
#include "reconcile/agent/memory_cluster.hpp"
#include "reconcile/agent/pipeline.hpp"
#include "tests/k8s/yaml_poison.hpp"

namespace {

using aop::agent::Kind;
using aop::agent::MemoryCluster;
namespace json = boost::json;

// 10^8 scalars once its aliases are expanded, from under 1 KiB.
const std::string& alias_bomb() {
  static const std::string bomb = aop::test::laughs(8);
  return bomb;
}

const std::string& ten_mib() {
  static const std::string text(10u << 20, 'x');
  return text;
}

json::object parse(std::string_view yaml) {
  auto v = aop::k8s::yaml::parse(yaml);
  if (!v || !v->is_object()) {
    throw std::runtime_error("a bench fixture does not parse");  // a bug of the bench
  }
  return v->as_object();
}

// A root with one MetricsInstance (and, with `logs`, one LogsInstance), edited by `poison`.
MemoryCluster cluster(const std::function<void(std::vector<json::object>&)>& poison) {
  std::vector<json::object> objects{
      parse("{apiVersion: v1, kind: Namespace, metadata: {name: ns}}"),
      parse(R"y({apiVersion: monitoring.grafana.com/v1alpha1, kind: GrafanaAgent,
                metadata: {name: agent, namespace: ns, uid: ga-1},
                spec: {metrics: {instanceSelector: {}}, logs: {instanceSelector: {}}}})y"),
      parse(R"y({apiVersion: monitoring.grafana.com/v1alpha1, kind: MetricsInstance,
                metadata: {name: metrics, namespace: ns},
                spec: {remoteWrite: [{url: "http://mimir:9009/api/v1/push"}],
                       serviceMonitorSelector: {}}})y"),
      parse(R"y({apiVersion: monitoring.coreos.com/v1, kind: ServiceMonitor,
                metadata: {name: web, namespace: ns},
                spec: {selector: {matchLabels: {app: web}},
                       endpoints: [{port: http, relabelings: [{sourceLabels: [a],
                                    regex: "(.*)", targetLabel: b}]}]}})y"),
  };
  poison(objects);
  MemoryCluster c;
  for (auto& o : objects) {
    if (!c.add(json::value(std::move(o)))) throw std::runtime_error("a fixture is not an object");
  }
  return c;
}

json::object& find(std::vector<json::object>& objects, std::string_view kind) {
  for (auto& o : objects) {
    if (o.at("kind").as_string() == kind) return o;
  }
  throw std::runtime_error("no " + std::string(kind) + " in the fixture");
}

json::object secret(std::string_view name, std::string_view key, const std::string& value) {
  return json::object{{"apiVersion", "v1"},
                      {"kind", "Secret"},
                      {"metadata", json::object{{"name", name}, {"namespace", "ns"}}},
                      {"stringData", json::object{{key, value}}}};
}

struct Case {
  std::string name;
  MemoryCluster cluster;
};

std::vector<Case> cases() {
  std::vector<Case> out;
  out.push_back(
      {"shards: 2147483647", cluster([](auto& objects) {
         find(objects, "GrafanaAgent")["spec"].as_object()["metrics"].as_object()["shards"] =
             2147483647;
       })});
  out.push_back({"alias bomb, additionalScrapeConfigs Secret", cluster([](auto& objects) {
                   find(objects, "MetricsInstance")["spec"].as_object()["additionalScrapeConfigs"] =
                       json::object{{"name", "extra"}, {"key", "scrape.yaml"}};
                   objects.push_back(secret("extra", "scrape.yaml", alias_bomb()));
                 })});
  out.push_back({"alias bomb, PodLogs match stage", cluster([](auto& objects) {
                   objects.push_back(parse(R"y({apiVersion: monitoring.grafana.com/v1alpha1,
                       kind: LogsInstance, metadata: {name: logs, namespace: ns},
                       spec: {clients: [{url: "http://loki:3100/loki/api/v1/push"}],
                              podLogsSelector: {}}})y"));
                   json::object pl = parse(R"y({apiVersion: monitoring.grafana.com/v1alpha1,
                       kind: PodLogs, metadata: {name: pods, namespace: ns},
                       spec: {selector: {}, pipelineStages: [{match: {selector: '{app="x"}'}}]}})y");
                   pl["spec"]
                       .as_object()["pipelineStages"]
                       .as_array()[0]
                       .as_object()["match"]
                       .as_object()["stages"] = alias_bomb();
                   objects.push_back(std::move(pl));
                 })});
  out.push_back({"10 MiB external label value (root)", cluster([](auto& objects) {
                   find(objects, "GrafanaAgent")["spec"]
                       .as_object()["metrics"]
                       .as_object()["externalLabels"] = json::object{{"cluster", ten_mib()}};
                 })});
  out.push_back({"10 MiB relabel regex (ServiceMonitor)", cluster([](auto& objects) {
                   find(objects, "ServiceMonitor")["spec"]
                       .as_object()["endpoints"]
                       .as_array()[0]
                       .as_object()["relabelings"]
                       .as_array()[0]
                       .as_object()["regex"] = ten_mib();
                 })});
  out.push_back({"10 MiB additionalScrapeConfigs Secret", cluster([](auto& objects) {
                   find(objects, "MetricsInstance")["spec"].as_object()["additionalScrapeConfigs"] =
                       json::object{{"name", "extra"}, {"key", "scrape.yaml"}};
                   objects.push_back(secret("extra", "scrape.yaml", "- job_name: " + ten_mib()));
                 })});
  return out;
}

}  // namespace

int main() {
  int status = 0;
  std::printf("%-44s %10s %12s  %s\n", "case", "CPU ms", "extra MiB", "outcome");
  for (const Case& c : cases()) {
    const auto root = c.cluster.compact(Kind::grafana_agent).front();
    const auto run = aop::bench::run_in_child([&] {
      aop::agent::DecodeCache uncached(false);
      const aop::agent::RootPlan plan = aop::agent::plan_root(
          *root, aop::agent::PipelineInputs{c.cluster, c.cluster, aop::agent::Options{}, uncached,
                                            "operator.agent.grafana.com/applied-hash"});
      const bool reported = plan.failure.has_value() || !plan.problems.empty();
      std::string how = plan.failure ? std::string(aop::runtime::reason(plan.failure->code)) +
                                           ": " + plan.failure->message
                        : !plan.problems.empty() ? "problem: " + plan.problems.front().str()
                                                 : std::string("(planned without a report)");
      return std::pair<bool, std::string>(reported, std::move(how));
    });
    if (!run) {
      std::printf("%-44s %10s %12s  child failed\n", c.name.c_str(), "-", "-");
      status = 1;
      continue;
    }
    std::printf("%-44s %10.1f %12.1f  %.160s\n", c.name.c_str(), run->cpu_ms, run->extra_mib,
                run->text.c_str());
    if (!run->reported || run->cpu_ms >= 1000 || run->extra_mib >= 64) status = 1;
  }
  return status;
}
