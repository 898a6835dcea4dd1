// The status of a GrafanaAgent after a reconcile (root_status.hpp): readiness over every
// workload the root should have, which error wins, what each outcome writes and what the
// runner does next.
#include "reconcile/agent/root_status.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "k8s/yaml.hpp"

namespace aop::agent {
namespace {

using runtime::Errc;
using runtime::ReconcileResult;

WorkloadState state(Kind kind, std::string_view name, std::string_view yaml_text) {
  const WorkloadRef ref{kind, {"ns", std::string(name)}};
  if (yaml_text.empty()) return workload_state(ref, nullptr);
  auto v = k8s::yaml::parse(yaml_text);
  EXPECT_TRUE(v.has_value());
  const auto obj = k8s::Object::from_json(*v);
  return workload_state(ref, obj.get());
}

constexpr std::string_view kReadySts =
    "{metadata: {name: a, namespace: ns, generation: 2}, spec: {replicas: 2},"
    " status: {observedGeneration: 2, readyReplicas: 2}}";

const runtime::Condition* condition(const RootStatus& s, std::string_view type) {
  for (const auto& c : s.update.conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

TEST(Readiness, EveryWorkloadMustExistHaveRolledOutAndBeReady) {
  const auto ready = state(Kind::stateful_set, "a", kReadySts);
  EXPECT_TRUE(readiness(std::vector{ready}).ready);
  EXPECT_EQ(readiness(std::vector{ready}).reason, "WorkloadsReady");

  // A desired workload missing from the cluster (here: its apply failed) is not ready,
  // even when every other one is.
  auto missing = state(Kind::stateful_set, "b", "");
  missing.apply_failed = true;
  const auto r = readiness(std::vector{ready, missing});
  EXPECT_FALSE(r.ready);
  EXPECT_EQ(r.reason, "WorkloadsNotReady");
  EXPECT_EQ(r.message,
            "1 of 2 workload(s) ready; StatefulSet ns/b: does not exist (its apply "
            "failed)");

  // Replicas short.
  const auto short_of = state(Kind::stateful_set, "c",
                              "{metadata: {name: c, namespace: ns, generation: 1}, spec: "
                              "{replicas: 3}, status: {observedGeneration: 1, readyReplicas: 2}}");
  EXPECT_EQ(readiness(std::vector{short_of}).message,
            "0 of 1 workload(s) ready; StatefulSet ns/c: 2/3 ready");
}

TEST(Readiness, AWorkloadWhoseControllerHasNotSeenItsLatestSpecIsNotRolledOut) {
  // What a real API server answers to the create of a DaemonSet: nothing scheduled yet,
  // nothing ready, and no observedGeneration. 0 of 0 is not "ready".
  const auto fresh_ds = state(Kind::daemon_set, "logs",
                              "{metadata: {name: logs, namespace: ns, generation: 1}, status: "
                              "{desiredNumberScheduled: 0, numberReady: 0}}");
  const auto r = readiness(std::vector{fresh_ds});
  EXPECT_FALSE(r.ready);
  EXPECT_EQ(r.message,
            "0 of 1 workload(s) ready; DaemonSet ns/logs: generation 1 not rolled out yet (not "
            "observed)");

  // An older observedGeneration: an update not rolled out yet, whatever the counts say.
  const auto stale = state(Kind::deployment, "d",
                           "{metadata: {name: d, namespace: ns, generation: 3}, spec: {replicas: "
                           "1}, status: {observedGeneration: 2, readyReplicas: 1}}");
  EXPECT_EQ(readiness(std::vector{stale}).message,
            "0 of 1 workload(s) ready; Deployment ns/d: generation 3 not rolled out yet "
            "(observed 2)");

  // Rolled out: a DaemonSet with every scheduled pod ready.
  const auto done = state(Kind::daemon_set, "logs",
                          "{metadata: {name: logs, namespace: ns, generation: 1}, status: "
                          "{observedGeneration: 1, desiredNumberScheduled: 3, numberReady: 3}}");
  EXPECT_TRUE(readiness(std::vector{done}).ready);
}

TEST(Readiness, NoWorkloadsIsReadyAndLongListsAreCut) {
  EXPECT_EQ(readiness({}).reason, "NoWorkloads");
  std::vector<WorkloadState> many;
  for (int i = 0; i < 8; ++i) many.push_back(state(Kind::stateful_set, std::to_string(i), ""));
  const auto r = readiness(many);
  EXPECT_NE(r.message.find("; and 3 more"), std::string::npos) << r.message;
}

RootPlan plan_with(std::optional<StageFailure> failure) {
  RootPlan plan;
  plan.root = "ns/agent";
  plan.generation = 7;
  plan.failure = std::move(failure);
  plan.summary = HierarchySummary{};
  plan.summary->metrics_instances = 1;
  plan.apply.apply(boost::json::object{
      {"apiVersion", "v1"},
      {"kind", "Secret"},
      {"metadata", boost::json::object{{"name", "agent-secrets"}, {"namespace", "ns"}}}});
  plan.workloads = {{Kind::stateful_set, {"ns", "a"}}};
  return plan;
}

TEST(RootStatus, SuccessWritesBothConditionsCountsAndProblems) {
  RootPlan plan = plan_with(std::nullopt);
  plan.problems.push_back(make_problem(Kind::service_monitor, {"apps", "web"}, "spec.selector",
                                       "skipped", Severity::error));
  const runtime::ApplyReport applied;
  const std::vector workloads{state(Kind::stateful_set, "a", kReadySts)};
  const RootStatus s = root_status(plan, &applied, workloads, std::nullopt);
  EXPECT_FALSE(s.error.has_value());
  EXPECT_EQ(s.result.kind, ReconcileResult::Kind::success);
  ASSERT_NE(condition(s, "Reconciled"), nullptr);
  EXPECT_EQ(condition(s, "Reconciled")->status, "True");
  EXPECT_EQ(condition(s, "Reconciled")->message,
            "applied 1 steps; 1 member(s) skipped or suspect (see status.problems and Events)");
  EXPECT_EQ(condition(s, "Reconciled")->observed_generation, 7);
  ASSERT_NE(condition(s, "Ready"), nullptr);
  EXPECT_EQ(condition(s, "Ready")->status, "True");
  EXPECT_TRUE(s.problems_known);
  EXPECT_EQ(s.update.fields.at("observedGeneration"), 7);
  EXPECT_EQ(s.update.fields.at("metricsInstances"), 1);
  EXPECT_EQ(s.update.fields.at("problems"), boost::json::parse(R"([{"kind":"ServiceMonitor",
      "namespace":"apps","name":"web","message":"skipped","severity":"Error",
      "field":"spec.selector"}])"));
}

TEST(RootStatus, AnApplyFailureStillReportsReadinessOfEveryWorkload) {
  const RootPlan plan = plan_with(std::nullopt);
  runtime::ApplyReport applied;
  applied.errors.push_back("StatefulSet ns/a: create: 422 Invalid");
  auto missing = state(Kind::stateful_set, "a", "");
  missing.apply_failed = true;
  const RootStatus s = root_status(plan, &applied, std::vector{missing}, std::nullopt);
  ASSERT_TRUE(s.error.has_value());
  EXPECT_EQ(s.error->code, Errc::apply_failed);
  EXPECT_EQ(condition(s, "Reconciled")->reason, "ApplyFailed");
  EXPECT_EQ(condition(s, "Reconciled")->message, "StatefulSet ns/a: create: 422 Invalid");
  // Not the Ready=True a root without its StatefulSets used to report.
  ASSERT_NE(condition(s, "Ready"), nullptr);
  EXPECT_EQ(condition(s, "Ready")->status, "False");
  EXPECT_EQ(s.result.kind, ReconcileResult::Kind::error);
  // Refused input waits for a change (the long backoff cap) ...
  EXPECT_EQ(s.result.failure, runtime::FailureKind::input);
  // ... while a failure of the server is retried with the API cap: nothing else would
  // tell the root that the server is back.
  applied.server_failure = true;
  const RootStatus unavailable = root_status(plan, &applied, std::vector{missing}, std::nullopt);
  EXPECT_EQ(unavailable.result.kind, ReconcileResult::Kind::error);
  EXPECT_EQ(unavailable.result.failure, runtime::FailureKind::api);
}

TEST(RootStatus, TheFirstErrorWinsInTheDocumentedOrder) {
  runtime::ApplyReport applied;
  applied.errors.push_back("Secret ns/x: update: 500");
  // A render failure and an apply failure: the write failed first.
  {
    const RootPlan plan =
        plan_with(StageFailure{Stage::assemble, Errc::render_failed, "rendering x: bad"});
    const RootStatus s = root_status(plan, &applied, {}, std::nullopt);
    EXPECT_EQ(condition(s, "Reconciled")->reason, "ApplyFailed");
  }
  // A read error wins over what planning found.
  {
    const RootPlan plan =
        plan_with(StageFailure{Stage::resolve_assets, Errc::asset_resolution_failed, "no key"});
    const RootStatus s = root_status(plan, nullptr, {}, std::string("reading Secret ns/s: 503"));
    EXPECT_EQ(condition(s, "Reconciled")->reason, "AssetReadFailed");
    EXPECT_EQ(condition(s, "Ready"), nullptr);  // nothing ran: readiness unknown
    EXPECT_EQ(s.result.kind, ReconcileResult::Kind::error);
  }
  // A root that does not decode: no retry until it changes, no counts.
  {
    RootPlan plan =
        plan_with(StageFailure{Stage::decode, Errc::invalid_spec, "GrafanaAgent ns/a: x"});
    plan.summary.reset();
    const RootStatus s = root_status(plan, nullptr, {}, std::nullopt);
    EXPECT_EQ(condition(s, "Reconciled")->reason, "InvalidSpec");
    EXPECT_EQ(s.result.kind, ReconcileResult::Kind::terminal);
    EXPECT_FALSE(s.problems_known);
    EXPECT_FALSE(s.update.fields.contains("metricsInstances"));
  }
  // Generated names the API server would refuse: nothing ran, and only an edit of the
  // root fixes them, so no retry until it changes; the counts are known.
  {
    const RootPlan plan = plan_with(
        StageFailure{Stage::build_objects, Errc::invalid_name, "GrafanaAgent ns/a: Service"});
    const RootStatus s = root_status(plan, nullptr, {}, std::nullopt);
    EXPECT_EQ(condition(s, "Reconciled")->reason, "InvalidName");
    EXPECT_EQ(condition(s, "Ready"), nullptr);
    EXPECT_EQ(s.result.kind, ReconcileResult::Kind::terminal);
    EXPECT_TRUE(s.problems_known);
  }
}

TEST(RootStatus, PausedAndWaitingRoots) {
  RootPlan paused;
  paused.paused = true;
  paused.generation = 2;
  const RootStatus p = root_status(paused, nullptr, {}, std::nullopt);
  EXPECT_EQ(condition(p, "Reconciled")->reason, "Paused");
  EXPECT_EQ(condition(p, "Ready"), nullptr);
  EXPECT_EQ(p.result.kind, ReconcileResult::Kind::success);

  // An object being deleted before it can be created again: look again shortly.
  runtime::ApplyReport applied;
  applied.waiting = true;
  const RootStatus w = root_status(plan_with(std::nullopt), &applied, {}, std::nullopt);
  EXPECT_EQ(w.result.kind, ReconcileResult::Kind::requeue_after);
}

}  // namespace
}  // namespace aop::agent
