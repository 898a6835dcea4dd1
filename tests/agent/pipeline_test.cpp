// The pipeline as a whole (plan_root): where each kind of failure stops a root and what
// it keeps (dependencies, earlier steps, workloads), problems in stage order, hashes,
// and the decode cache across reconciles.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "reconcile/agent/field_checks.hpp"
#include "tests/agent/pipeline_support.hpp"

namespace aop::agent {
namespace {

using namespace aop::agent::testing;

constexpr std::string_view kHierarchy = R"(
apiVersion: monitoring.grafana.com/v1alpha1
kind: MetricsInstance
metadata: {name: m, namespace: ns1, uid: mi-1, resourceVersion: "5"}
spec:
  serviceMonitorSelector: {}
  remoteWrite:
  - url: http://mimir
    basicAuth: {username: {name: rw, key: user}, password: {name: rw, key: pass}}
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {name: web, namespace: ns1, uid: sm-1, resourceVersion: "7"}
spec:
  endpoints: [{port: http}]
---
apiVersion: v1
kind: Secret
metadata: {name: rw, namespace: ns1}
stringData: {user: u, pass: p}
)";

// A LogsInstance whose client reads a Secret that does not exist: nothing to resolve (an
// absent object stores nothing), but its config cannot be rendered.
constexpr std::string_view kLogsWithMissingSecret = R"(
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: LogsInstance
metadata: {name: logs, namespace: ns1}
spec:
  clients:
  - url: "http://loki"
    basicAuth: {username: {name: gone, key: u}, password: {name: gone, key: p}}
)";

std::string agent(std::string_view spec) {
  return "apiVersion: monitoring.grafana.com/v1alpha1\nkind: GrafanaAgent\nmetadata: {name: "
         "agent, namespace: ns1, uid: ga-1, resourceVersion: '3', generation: 4}\nspec: " +
         std::string(spec) + "\n---\n" + std::string(kHierarchy);
}

RootPlan plan_of(const std::string& text, std::string_view hash_annotation = {}) {
  const MemoryCluster c = cluster_of(text);
  DecodeCache uncached(false);
  return plan_root(*root_of(c), PipelineInputs{c, c, Options{}, uncached, hash_annotation});
}

TEST(Pipeline, ARootThatDoesNotDecodeStopsAtDecodeAndReadsNothing) {
  const RootPlan plan = plan_of(agent("{metrics: {instanceSelector: {}, shards: many}}"));
  ASSERT_TRUE(plan.failure.has_value());
  EXPECT_EQ(plan.failure->stage, Stage::decode);
  EXPECT_EQ(plan.failure->code, runtime::Errc::invalid_spec);
  EXPECT_EQ(plan.root, "ns1/agent");
  EXPECT_EQ(plan.generation, 4);
  EXPECT_TRUE(plan.dependencies.selections.empty());
  EXPECT_FALSE(plan.summary.has_value());
  EXPECT_FALSE(plan.applies());
}

TEST(Pipeline, APausedRootIsWatchedAndOtherwiseLeftAlone) {
  const RootPlan plan = plan_of(agent("{paused: true, metrics: {instanceSelector: {}}}"));
  EXPECT_TRUE(plan.paused);
  EXPECT_FALSE(plan.failure.has_value());
  EXPECT_FALSE(plan.applies());
  EXPECT_TRUE(plan.apply.steps.empty());
  EXPECT_TRUE(plan.problems.empty());
  // Everything a change of which could matter once it is unpaused.
  EXPECT_EQ(plan.dependencies.selections.size(), 2u);  // MetricsInstances, ServiceMonitors
  ASSERT_EQ(plan.dependencies.objects.size(), 1u);
  EXPECT_EQ(plan.dependencies.objects[0].key, (k8s::ObjectKey{"ns1", "rw"}));
}

TEST(Pipeline, AnInvalidRootSelectorIsRefusedNamingItsField) {
  // Discovery cannot list with this selector; the GrafanaAgent's own checks say exactly
  // which field is wrong, and the problems are known (written to status.problems).
  const RootPlan plan =
      plan_of(agent("{metrics: {instanceSelector: {matchExpressions: [{key: a, operator: X}]}}}"));
  ASSERT_TRUE(plan.failure.has_value());
  EXPECT_EQ(plan.failure->stage, Stage::validate);
  EXPECT_EQ(plan.failure->code, runtime::Errc::validation_failed);
  ASSERT_EQ(plan.problems.size(), 1u);
  EXPECT_EQ(plan.problems[0].field, "spec.metrics.instanceSelector.matchExpressions[0].operator");
  EXPECT_NE(
      plan.failure->message.find("GrafanaAgent ns1/agent: "
                                 "spec.metrics.instanceSelector.matchExpressions[0].operator"),
      std::string::npos)
      << plan.failure->message;
  EXPECT_FALSE(plan.applies());
  EXPECT_FALSE(plan.summary.has_value());
  EXPECT_TRUE(plan.apply.steps.empty());
}

TEST(Pipeline, AnInvalidInstanceSelectorIsRefusedNamingTheInstanceAndField) {
  // An instance's member selector: discovery fails on it (the instance is found, its
  // members cannot be listed); the instance's own checks name it and the field, the
  // problem is known (status.problems), and what was listed stays watched.
  for (const auto& [selector, field] : std::vector<std::pair<std::string, std::string>>{
           {"serviceMonitorSelector: {matchExpressions: [{key: a, operator: Foo}]}",
            "spec.serviceMonitorSelector.matchExpressions[0].operator"},
           {"serviceMonitorSelector: {matchLabels: {team: 'not a label value'}}",
            "spec.serviceMonitorSelector.matchLabels[team]"}}) {
    std::string text = agent("{metrics: {instanceSelector: {}}}");
    text.replace(text.find("serviceMonitorSelector: {}"), 26, selector);
    const RootPlan plan = plan_of(text);
    ASSERT_TRUE(plan.failure.has_value()) << selector;
    EXPECT_EQ(plan.failure->stage, Stage::validate) << plan.failure->message;
    EXPECT_EQ(plan.failure->code, runtime::Errc::validation_failed);
    ASSERT_EQ(plan.problems.size(), 1u) << selector;
    EXPECT_EQ(plan.problems[0].kind.kind, "MetricsInstance");
    EXPECT_EQ(plan.problems[0].object, (k8s::ObjectKey{"ns1", "m"}));
    EXPECT_EQ(plan.problems[0].field, field);
    EXPECT_NE(plan.failure->message.find("MetricsInstance ns1/m: " + field), std::string::npos)
        << plan.failure->message;
    EXPECT_FALSE(plan.applies());
    EXPECT_TRUE(plan.apply.steps.empty());
    EXPECT_FALSE(plan.dependencies.selections.empty());
  }
}

TEST(Pipeline, AMissingKeyTouchesNothingButTheRootStaysWatched) {
  std::string text = agent("{metrics: {instanceSelector: {}}}");
  text.replace(text.find("stringData: {user: u, pass: p}"), 30, "stringData: {user: u}");
  const RootPlan plan = plan_of(text);
  ASSERT_TRUE(plan.failure.has_value());
  // A root-level reference (the MetricsInstance's remote write password): the validate
  // stage refuses the root, naming the object and field.
  EXPECT_EQ(plan.failure->stage, Stage::validate);
  EXPECT_EQ(plan.failure->code, runtime::Errc::asset_resolution_failed);
  EXPECT_NE(plan.failure->message.find("MetricsInstance ns1/m: "
                                       "spec.remoteWrite[0].basicAuth.password.key: Secret ns1/rw "
                                       "has no key \"pass\"; its keys are: user"),
            std::string::npos)
      << plan.failure->message;
  ASSERT_EQ(strs(plan.problems).size(), 1u);
  EXPECT_FALSE(plan.applies());
  EXPECT_TRUE(plan.apply.steps.empty());
  ASSERT_TRUE(plan.summary.has_value());
  EXPECT_EQ(plan.summary->service_monitors, 1u);
  ASSERT_EQ(plan.dependencies.objects.size(), 1u);  // fixing the Secret reconciles it
}

TEST(Pipeline, ARootLevelReferenceToAMissingSecretRefusesTheRoot) {
  // The LogsInstance's client reads a Secret that does not exist. Upstream renders the
  // files before the logs file and then fails; the validate stage refuses the root
  // before anything is applied (the last good deployment stays), naming the field.
  const RootPlan plan = plan_of(agent(R"({metrics: {instanceSelector: {}},
    logs: {instanceSelector: {}}})") +
                                std::string(kLogsWithMissingSecret));
  ASSERT_TRUE(plan.failure.has_value());
  EXPECT_EQ(plan.failure->stage, Stage::validate);
  EXPECT_EQ(plan.failure->code, runtime::Errc::asset_resolution_failed);
  EXPECT_FALSE(plan.applies());
  EXPECT_TRUE(plan.apply.steps.empty());
  EXPECT_EQ(strs(plan.problems),
            (std::vector<std::string>{
                "LogsInstance ns1/logs: spec.clients[0].basicAuth.username.name: Secret ns1/gone "
                "not found (references resolve in the namespace of the object holding them); "
                "create it or correct the name",
                "LogsInstance ns1/logs: spec.clients[0].basicAuth.password.name: Secret ns1/gone "
                "not found (references resolve in the namespace of the object holding them); "
                "create it or correct the name"}));
  // Watched: creating the Secret reconciles the root.
  bool watched = false;
  for (const auto& d : plan.dependencies.objects) watched = watched || d.key.name == "gone";
  EXPECT_TRUE(watched);
}

TEST(Pipeline, NamesTheApiServerWouldRefuseStopTheRootAtBuildObjectsWithNoSteps) {
  // 55 characters: the governing Service "<name>-operated" would have 64, one too many.
  const std::string long_name(55, 'a');
  std::string text = agent(R"({metrics: {instanceSelector: {}},
    logs: {instanceSelector: {}}})");
  text.replace(text.find("name: agent,"), 12, "name: " + long_name + ",");
  const MemoryCluster clean = cluster_of(text);
  DecodeCache uncached(false);
  const RootPlan plan =
      plan_root(*root_of(clean, long_name), PipelineInputs{clean, clean, Options{}, uncached, {}});
  ASSERT_TRUE(plan.failure.has_value());
  EXPECT_EQ(plan.failure->stage, Stage::build_objects);
  EXPECT_EQ(plan.failure->code, runtime::Errc::invalid_name);
  EXPECT_NE(plan.failure->message.find("Service " + long_name + "-operated (64 characters)"),
            std::string::npos)
      << plan.failure->message;
  EXPECT_NE(plan.failure->message.find("at most 52 characters"), std::string::npos)
      << plan.failure->message;
  EXPECT_FALSE(plan.applies());
  EXPECT_TRUE(plan.apply.steps.empty());
  EXPECT_FALSE(plan.dependencies.objects.empty()) << "a fix of the root is still seen";

  // With the LogsInstance's client Secret missing as well, the validate stage refuses
  // the root first: nothing runs either.
  const MemoryCluster failing = cluster_of(text + std::string(kLogsWithMissingSecret));
  const RootPlan both = plan_root(*root_of(failing, long_name),
                                  PipelineInputs{failing, failing, Options{}, uncached, {}});
  ASSERT_TRUE(both.failure.has_value());
  EXPECT_EQ(both.failure->stage, Stage::validate);
  EXPECT_FALSE(both.applies());
  EXPECT_TRUE(both.apply.steps.empty());
}

TEST(Pipeline, AnInvalidRootLevelFieldFailsValidation) {
  // With a field error next to a missing key, the reason is the field's: ValidationFailed.
  std::string text = agent("{metrics: {instanceSelector: {}, scrapeInterval: 1.5m}}");
  text.replace(text.find("stringData: {user: u, pass: p}"), 30, "stringData: {user: u}");
  const RootPlan plan = plan_of(text);
  ASSERT_TRUE(plan.failure.has_value());
  EXPECT_EQ(plan.failure->stage, Stage::validate);
  EXPECT_EQ(plan.failure->code, runtime::Errc::validation_failed);
  EXPECT_NE(plan.failure->message.find("GrafanaAgent ns1/agent: spec.metrics.scrapeInterval: "),
            std::string::npos)
      << plan.failure->message;
  EXPECT_TRUE(plan.apply.steps.empty());
}

TEST(Pipeline, AHierarchyOverTheJobBudgetRefusesTheRoot) {
  // ServiceMonitor web has one endpoint; `many` brings the root to `total` scrape jobs.
  const auto with_jobs = [](std::size_t total) {
    std::string endpoints;
    for (std::size_t i = 1; i < total; ++i) endpoints += i == 1 ? "{port: p}" : ", {port: p}";
    return agent("{metrics: {instanceSelector: {}}}") +
           "---\napiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata: {name: "
           "many, namespace: ns1}\nspec: {endpoints: [" +
           endpoints + "]}\n";
  };
  const RootPlan at_budget = plan_of(with_jobs(kMaxJobsPerRoot));
  EXPECT_FALSE(at_budget.failure.has_value()) << at_budget.failure->message;
  EXPECT_TRUE(at_budget.applies());

  const RootPlan over = plan_of(with_jobs(kMaxJobsPerRoot + 1));
  ASSERT_TRUE(over.failure.has_value());
  EXPECT_EQ(over.failure->stage, Stage::validate);
  EXPECT_EQ(over.failure->code, runtime::Errc::validation_failed);
  EXPECT_NE(over.failure->message.find("GrafanaAgent ns1/agent: its hierarchy renders 10001 "
                                       "scrape and log jobs"),
            std::string::npos)
      << over.failure->message;
  EXPECT_NE(over.failure->message.find("at most 10000 per GrafanaAgent"), std::string::npos);
  EXPECT_FALSE(over.applies());
  EXPECT_TRUE(over.apply.steps.empty());
}

TEST(Pipeline, ProblemsComeInStageOrder) {
  const RootPlan plan = plan_of(agent(R"({metrics: {instanceSelector: {}},
    integrations: {selector: {}}})") +
                                R"(
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {name: skipped, namespace: ns1}
spec:
  selector: {matchExpressions: [{key: a, operator: In}]}
  endpoints: [{port: http}]
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {name: undecodable, namespace: ns1}
spec: {endpoints: 5}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: Integration
metadata: {name: bad-config, namespace: ns1}
spec: {name: x, config: [1]}
)");
  ASSERT_FALSE(plan.failure.has_value()) << plan.failure->message;
  const auto problems = strs(plan.problems);
  ASSERT_EQ(problems.size(), 3u) << ::testing::PrintToString(problems);
  EXPECT_EQ(problems[0].rfind("ServiceMonitor ns1/undecodable: ", 0), 0u);            // discover
  EXPECT_EQ(problems[1].rfind("Integration ns1/bad-config: spec.config: ", 0), 0u);   // validate
  EXPECT_EQ(problems[2].rfind("ServiceMonitor ns1/skipped: spec.selector.", 0), 0u);  // validate
}

TEST(Pipeline, ContentHashesArePlannedWhenAsked) {
  const std::string text = agent("{metrics: {instanceSelector: {}}}");
  const RootPlan hashed = plan_of(text, "example.com/hash");
  const RootPlan plain = plan_of(text);
  ASSERT_EQ(hashed.apply.steps.size(), plain.apply.steps.size());
  EXPECT_EQ(hashed.apply.root, "ns1/agent");
  for (std::size_t i = 0; i < hashed.apply.steps.size(); ++i) {
    const auto& s = hashed.apply.steps[i];
    EXPECT_TRUE(plain.apply.steps[i].hash.empty());
    if (s.action != runtime::ApplyStep::Action::apply) continue;
    EXPECT_EQ(s.hash, runtime::content_hash(s.object, "example.com/hash"));
    EXPECT_EQ(s.hash.size(), 64u);
  }
}

TEST(Pipeline, UnchangedMembersAreNotDecodedAgain) {
  const MemoryCluster c = cluster_of(agent("{metrics: {instanceSelector: {}}}"));
  DecodeCache cache;
  const PipelineInputs in{c, c, Options{}, cache, {}};
  const RootPlan first = plan_root(*root_of(c), in);
  ASSERT_FALSE(first.failure.has_value());
  EXPECT_EQ(cache.misses(), 3u);  // the agent, its MetricsInstance and ServiceMonitor
  const RootPlan second = plan_root(*root_of(c), in);
  EXPECT_EQ(cache.misses(), 3u);
  EXPECT_EQ(cache.hits(), 3u);
  ASSERT_EQ(second.apply.steps.size(), first.apply.steps.size());
  for (std::size_t i = 0; i < first.apply.steps.size(); ++i) {
    EXPECT_EQ(second.apply.steps[i].object, first.apply.steps[i].object);
  }
}

}  // namespace
}  // namespace aop::agent
