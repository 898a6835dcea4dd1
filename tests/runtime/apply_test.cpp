// The apply engine against a fake API server and caches: create / update / no-op /
// delete / recreate decisions, the Grafana Agent operator's merge rules, conflicts
// retried from fresh state, drift repair without fighting an autoscaler, scoped pruning,
// and the leader-election write gate.
#include "reconcile/runtime/apply.hpp"

#include <gtest/gtest.h>

#include "tests/runtime/fake_api.hpp"

namespace aop::runtime {
namespace {

using testing::FakeApi;
using testing::run;
namespace json = boost::json;

constexpr const char* kRootUid = "root-uid";
constexpr const char* kManaged = "test-operator";

json::object owner_ref(bool controller = true, const char* uid = kRootUid,
                       const char* name = "root") {
  json::object r{{"apiVersion", "example.com/v1"},
                 {"kind", "Root"},
                 {"name", name},
                 {"uid", uid},
                 {"blockOwnerDeletion", true}};
  if (controller) r["controller"] = true;
  return r;
}

json::object meta(const std::string& ns, const std::string& name) {
  return json::object{
      {"namespace", ns},
      {"name", name},
      {"labels", json::object{{"app.kubernetes.io/managed-by", kManaged}, {"app", name}}},
      {"ownerReferences", json::array{owner_ref()}}};
}

json::object deployment(const std::string& name, const std::string& image = "agent:1",
                        std::optional<int> replicas = 1) {
  json::object spec{
      {"selector", json::object{{"matchLabels", json::object{{"app", name}}}}},
      {"template",
       json::object{
           {"spec", json::object{{"containers",
                                  json::array{json::object{{"name", "c"}, {"image", image}}}}}}}}};
  if (replicas) spec["replicas"] = *replicas;
  return json::object{{"apiVersion", "apps/v1"},
                      {"kind", "Deployment"},
                      {"metadata", meta("ns", name)},
                      {"spec", spec}};
}

json::object secret(const std::string& name, const std::string& value = "dmFsdWU=") {
  return json::object{{"apiVersion", "v1"},
                      {"kind", "Secret"},
                      {"metadata", meta("ns", name)},
                      {"data", json::object{{"key", value}}}};
}

json::object service(const std::string& name) {
  return json::object{
      {"apiVersion", "v1"},
      {"kind", "Service"},
      {"metadata", meta("ns", name)},
      {"spec", json::object{{"clusterIP", "None"},
                            {"ports", json::array{json::object{{"name", "http"}, {"port", 80}}}}}}};
}

json::object statefulset(const std::string& name, const std::string& storage = "1Gi") {
  return json::object{{"apiVersion", "apps/v1"},
                      {"kind", "StatefulSet"},
                      {"metadata", meta("ns", name)},
                      {"spec", json::object{{"replicas", 1},
                                            {"volumeClaimTemplates",
                                             json::array{json::object{{"storage", storage}}}}}}};
}

class ApplyTest : public ::testing::Test {
 protected:
  ApplyTest() {
    cache.add({"apps", "Deployment"}, deployments);
    cache.add({"apps", "StatefulSet"}, statefulsets);
    cache.add({"", "Secret"}, secrets);
    cache.add({"", "Service"}, services);
    options.controller = "test";
    options.managed_by_value = kManaged;
    options.registry = &registry;
  }

  // The informers catch up with the server.
  void sync() {
    api.sync("Deployment", deployments);
    api.sync("StatefulSet", statefulsets);
    api.sync("Secret", secrets);
    api.sync("Service", services);
  }

  PruneScope scope() {
    PruneScope p;
    p.kinds = {{"apps", "v1", "Deployment"}, {"", "v1", "Secret"}, {"apps", "v1", "StatefulSet"}};
    p.owner_uid = kRootUid;
    p.namespaces = {"ns"};
    return p;
  }

  ApplyReport apply(ApplyEngine& engine, std::vector<json::object> desired, bool prune = true) {
    ApplyPlan plan;
    plan.root = "ns/root";
    for (auto& d : desired) plan.apply(std::move(d));
    if (prune) plan.prune(scope());
    return run(engine.apply(plan));
  }

  FakeApi api;
  k8s::Store deployments, statefulsets, secrets, services;
  InformerCache cache;
  net::metrics::Registry registry;
  ApplyOptions options;
};

TEST_F(ApplyTest, CreatesMissingObjectsThenAnUnchangedApplyWritesNothing) {
  ApplyEngine engine(api, cache, options);
  auto r = apply(engine, {secret("cfg"), deployment("agent")});
  EXPECT_TRUE(r.ok()) << (r.errors.empty() ? "" : r.errors.front());
  EXPECT_EQ(r.created, 2);
  const json::object* d = api.find("Deployment", "ns", "agent");
  ASSERT_NE(d, nullptr);
  const auto& ann = d->at("metadata").at("annotations").as_object();
  EXPECT_EQ(ann.at(options.hash_annotation).as_string(), engine.content_hash(deployment("agent")));

  sync();
  const int writes = api.writes();
  r = apply(engine, {secret("cfg"), deployment("agent")});
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.unchanged, 2);
  EXPECT_EQ(api.writes(), writes);  // zero writes
  EXPECT_EQ(api.count("get"), 0);   // and no reads from the server either
}

// The hash is SHA-256 of the object's canonical JSON (keys sorted, no whitespace) without
// status, metadata.resourceVersion and the hash annotation (and annotations left empty by
// that): the objects an earlier version wrote keep their hashes.
TEST_F(ApplyTest, TheHashIsTheSha256OfTheCanonicalObject) {
  ApplyEngine engine(api, cache, options);
  const json::object o{
      {"kind", "Secret"},
      {"status", json::object{{"x", 1}}},
      {"metadata", json::object{{"resourceVersion", "7"},
                                {"name", "s"},
                                {"annotations", json::object{{options.hash_annotation, "old"}}}}},
      {"data", json::object{{"b", "Yg=="}, {"a", "YQ=="}}}};
  EXPECT_EQ(
      engine.content_hash(o),
      sha256_hex(R"({"data":{"a":"YQ==","b":"Yg=="},"kind":"Secret","metadata":{"name":"s"}})"));
  json::object other = o;
  other["metadata"].as_object()["annotations"].as_object()["keep"] = "me";
  EXPECT_EQ(
      engine.content_hash(other),
      sha256_hex(
          R"({"data":{"a":"YQ==","b":"Yg=="},"kind":"Secret","metadata":{"annotations":{"keep":"me"},"name":"s"}})"));
}

TEST_F(ApplyTest, TheHashIgnoresKeyOrderAndItsOwnAnnotation) {
  ApplyEngine engine(api, cache, options);
  json::object a = secret("s");
  json::object b{
      {"data", a["data"]}, {"metadata", a["metadata"]}, {"kind", "Secret"}, {"apiVersion", "v1"}};
  EXPECT_EQ(engine.content_hash(a), engine.content_hash(b));
  b["metadata"].as_object()["annotations"] = json::object{{options.hash_annotation, "x"}};
  EXPECT_EQ(engine.content_hash(a), engine.content_hash(b));
  EXPECT_NE(engine.content_hash(a), engine.content_hash(secret("s", "b3RoZXI=")));
}

TEST_F(ApplyTest, AChangedObjectIsUpdatedKeepingLabelsAnnotationsAndOwnersAddedByOthers) {
  ApplyEngine engine(api, cache, options);
  apply(engine, {deployment("agent", "agent:1")});
  // Another tool labels and annotates it and adds an owner.
  json::object& live = *api.find("Deployment", "ns", "agent");
  auto& md = live["metadata"].as_object();
  md["labels"].as_object()["team"] = "observability";
  md["annotations"].as_object()["deployment.kubernetes.io/revision"] = "3";
  md["ownerReferences"].as_array().push_back(owner_ref(false, "other-uid", "other"));
  md["finalizers"] = json::array{"example.com/protect"};
  api.touch(live, false);
  sync();

  auto r = apply(engine, {deployment("agent", "agent:2")});
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.updated, 1);
  const json::object& now = *api.find("Deployment", "ns", "agent");
  const auto& nmd = now.at("metadata").as_object();
  EXPECT_EQ(nmd.at("labels").at("team"), "observability");
  EXPECT_EQ(nmd.at("labels").at("app.kubernetes.io/managed-by"), kManaged);
  EXPECT_EQ(nmd.at("annotations").at("deployment.kubernetes.io/revision"), "3");
  EXPECT_EQ(nmd.at("ownerReferences").as_array().size(), 2u);
  EXPECT_EQ(nmd.at("finalizers").as_array().size(), 1u);
  EXPECT_EQ(now.at("spec").at("template").at("spec").at("containers").at(0).at("image"), "agent:2");
}

TEST_F(ApplyTest, ServiceAllocatedFieldsAreCarriedOver) {
  ApplyEngine engine(api, cache, options);
  json::object desired = service("agent-operated");
  desired["spec"].as_object().erase("clusterIP");
  apply(engine, {desired});
  json::object& live = *api.find("Service", "ns", "agent-operated");
  live["spec"].as_object()["clusterIP"] = "10.0.0.7";
  live["spec"].as_object()["ipFamilies"] = json::array{"IPv4"};
  api.touch(live, false);
  sync();
  desired["spec"].as_object()["ports"].as_array()[0].as_object()["port"] = 8080;
  json::object body;
  api.inject = [&](const FakeApi::Call& c, const json::value* b) -> std::optional<k8s::ApiError> {
    if (c.verb == "update") body = b->as_object();
    return std::nullopt;
  };
  EXPECT_EQ(apply(engine, {desired}, false).updated, 1);
  EXPECT_EQ(body.at("spec").at("clusterIP"), "10.0.0.7");
  EXPECT_EQ(body.at("spec").at("ipFamilies"), (json::array{"IPv4"}));
}

TEST_F(ApplyTest, AStaleCacheCreateBecomesAnUpdateFromFreshState) {
  ApplyEngine engine(api, cache, options);
  apply(engine, {deployment("agent", "agent:1")});
  // The cache never saw the object: the engine tries to create it, learns it exists,
  // reads it, and updates it.
  auto r = apply(engine, {deployment("agent", "agent:2")});
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.conflicts, 1);
  EXPECT_EQ(r.updated, 1);
  EXPECT_EQ(api.find("Deployment", "ns", "agent")
                ->at("spec")
                .at("template")
                .at("spec")
                .at("containers")
                .at(0)
                .at("image"),
            "agent:2");
  // Same content with a stale cache: AlreadyExists, then nothing to do.
  const int writes = api.writes();
  r = apply(engine, {deployment("agent", "agent:2")});
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.unchanged, 1);
  EXPECT_EQ(api.writes(), writes + 1);  // only the refused create
}

TEST_F(ApplyTest, AConflictIsRetriedFromFreshState) {
  ApplyEngine engine(api, cache, options);
  apply(engine, {deployment("agent", "agent:1")});
  sync();
  // Someone writes in between: our cached resourceVersion is stale.
  api.touch(*api.find("Deployment", "ns", "agent"), false);
  auto r = apply(engine, {deployment("agent", "agent:2")});
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.conflicts, 1);
  EXPECT_EQ(r.updated, 1);
  EXPECT_NE(registry.expose().find(
                R"(agent_operator_apply_conflicts_total{controller="test",kind="Deployment"} 1)"),
            std::string::npos);
}

TEST_F(ApplyTest, PersistentConflictsGiveUpWithAnError) {
  ApplyEngine engine(api, cache, options);
  apply(engine, {deployment("agent", "agent:1")});
  sync();
  api.inject = [](const FakeApi::Call& c, const json::value*) -> std::optional<k8s::ApiError> {
    if (c.verb != "update") return std::nullopt;
    k8s::ApiError e;
    e.code = 409;
    e.reason = "Conflict";
    return e;
  };
  auto r = apply(engine, {deployment("agent", "agent:2")});
  EXPECT_FALSE(r.ok());
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_NE(r.errors[0].find("Deployment ns/agent"), std::string::npos) << r.errors[0];
}

TEST_F(ApplyTest, AnUpdateRejectedForImmutableFieldsDeletesAndRecreates) {
  ApplyEngine engine(api, cache, options);
  apply(engine, {statefulset("agent-0", "1Gi")});
  sync();
  const std::string old_uid =
      api.find("StatefulSet", "ns", "agent-0")->at("metadata").at("uid").as_string().c_str();
  api.inject = [](const FakeApi::Call& c, const json::value*) -> std::optional<k8s::ApiError> {
    if (c.verb != "update" || c.kind != "StatefulSet") return std::nullopt;
    k8s::ApiError e;
    e.code = 422;
    e.reason = "Invalid";
    e.message = "spec: Forbidden: updates to statefulset spec for fields other than ...";
    return e;
  };
  auto r = apply(engine, {statefulset("agent-0", "5Gi")});
  EXPECT_TRUE(r.ok()) << (r.errors.empty() ? "" : r.errors.front());
  EXPECT_EQ(r.recreated, 1);
  const json::object* now = api.find("StatefulSet", "ns", "agent-0");
  ASSERT_NE(now, nullptr);
  EXPECT_NE(now->at("metadata").at("uid").as_string(), old_uid);
  EXPECT_EQ(now->at("spec").at("volumeClaimTemplates").at(0).at("storage"), "5Gi");
  ASSERT_TRUE(api.last_delete);
  EXPECT_EQ(api.last_delete->grace_period_seconds, 5);
  EXPECT_EQ(api.last_delete->precondition_uid, old_uid);
  EXPECT_NE(registry.expose().find(
                R"(agent_operator_apply_recreates_total{controller="test",kind="StatefulSet"} 1)"),
            std::string::npos);
}

TEST_F(ApplyTest, AnInvalidUpdateOfAKindNotRecreatedIsAnError) {
  ApplyEngine engine(api, cache, options);
  apply(engine, {secret("cfg", "YQ==")});
  sync();
  api.inject = [](const FakeApi::Call& c, const json::value*) -> std::optional<k8s::ApiError> {
    if (c.verb != "update") return std::nullopt;
    k8s::ApiError e;
    e.code = 422;
    e.reason = "Invalid";
    return e;
  };
  auto r = apply(engine, {secret("cfg", "Yg==")});
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(api.count("delete"), 0);
}

TEST_F(ApplyTest, OwnedObjectsNoLongerDesiredArePrunedWithinScopeOnly) {
  ApplyEngine engine(api, cache, options);
  apply(engine, {deployment("agent"), secret("old")});
  // Objects the engine must leave alone: not managed, another root's, another namespace.
  json::object unmanaged = secret("unmanaged");
  unmanaged["metadata"].as_object()["labels"].as_object().erase("app.kubernetes.io/managed-by");
  api.put(unmanaged);
  json::object others = secret("others");
  others["metadata"].as_object()["ownerReferences"] =
      json::array{owner_ref(true, "another-root", "another")};
  api.put(others);
  json::object elsewhere = secret("elsewhere");
  elsewhere["metadata"].as_object()["namespace"] = "other-ns";
  api.put(elsewhere);
  sync();

  auto r = apply(engine, {deployment("agent")});
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.deleted, 1);
  EXPECT_EQ(api.find("Secret", "ns", "old"), nullptr);
  EXPECT_NE(api.find("Secret", "ns", "unmanaged"), nullptr);
  EXPECT_NE(api.find("Secret", "ns", "others"), nullptr);
  EXPECT_NE(api.find("Secret", "other-ns", "elsewhere"), nullptr);
  EXPECT_NE(api.find("Deployment", "ns", "agent"), nullptr);
  ASSERT_TRUE(api.last_delete);
  EXPECT_TRUE(api.last_delete->precondition_uid.has_value());
}

TEST_F(ApplyTest, NamespaceScopedPruningForObjectsWithoutOwnerReferences) {
  ApplyEngine engine(api, cache, options);
  json::object keep = secret("keep");
  keep["metadata"].as_object().erase("ownerReferences");
  json::object stale = secret("stale");
  stale["metadata"].as_object().erase("ownerReferences");
  api.put(keep);
  api.put(stale);
  sync();
  PruneScope p;
  p.kinds = {{"", "v1", "Secret"}};
  p.namespaces = {"ns"};
  ApplyPlan plan;
  plan.root = "ns";
  plan.apply(keep);
  plan.prune(p);
  auto r = run(engine.apply(plan));
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.deleted, 1);
  EXPECT_EQ(api.find("Secret", "ns", "stale"), nullptr);
  EXPECT_NE(api.find("Secret", "ns", "keep"), nullptr);
}

TEST_F(ApplyTest, AnObjectDeletedByHandIsRecreated) {
  ApplyEngine engine(api, cache, options);
  apply(engine, {deployment("agent")});
  sync();
  api.objects().clear();  // kubectl delete
  sync();
  auto r = apply(engine, {deployment("agent")});
  EXPECT_EQ(r.created, 1);
  EXPECT_NE(api.find("Deployment", "ns", "agent"), nullptr);
}

TEST_F(ApplyTest, DriftIsRepairedButAnAutoscalersReplicasAreNotFought) {
  ApplyEngine engine(api, cache, options);
  apply(engine, {deployment("agent", "agent:1", 2)});
  sync();
  // An autoscaler scales it: generation changes, only spec.replicas differs.
  json::object& live = *api.find("Deployment", "ns", "agent");
  live["spec"].as_object()["replicas"] = 7;
  api.touch(live, true);
  sync();
  int writes = api.writes();
  auto r = apply(engine, {deployment("agent", "agent:1", 2)});
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(api.writes(), writes);  // not fought
  EXPECT_EQ(api.find("Deployment", "ns", "agent")->at("spec").at("replicas"), 7);
  // Someone edits the image by hand: repaired (keeping the autoscaler's replicas).
  json::object& edited = *api.find("Deployment", "ns", "agent");
  edited["spec"]
      .as_object()["template"]
      .as_object()["spec"]
      .as_object()["containers"]
      .as_array()[0]
      .as_object()["image"] = "evil:1";
  api.touch(edited, true);
  sync();
  r = apply(engine, {deployment("agent", "agent:1", 2)});
  EXPECT_EQ(r.updated, 1);
  const json::object& now = *api.find("Deployment", "ns", "agent");
  EXPECT_EQ(now.at("spec").at("template").at("spec").at("containers").at(0).at("image"), "agent:1");
  EXPECT_EQ(now.at("spec").at("replicas"), 7);
  // A real change of the desired replicas is applied.
  sync();
  r = apply(engine, {deployment("agent", "agent:1", 3)});
  EXPECT_EQ(r.updated, 1);
  EXPECT_EQ(api.find("Deployment", "ns", "agent")->at("spec").at("replicas"), 3);
  // Without a desired replicas the live value is carried over.
  sync();
  r = apply(engine, {deployment("agent", "agent:2", std::nullopt)});
  EXPECT_EQ(r.updated, 1);
  EXPECT_EQ(api.find("Deployment", "ns", "agent")->at("spec").at("replicas"), 3);
}

TEST_F(ApplyTest, ObjectsWithoutGenerationUseTheResourceVersionToNoticeOtherWriters) {
  ApplyEngine engine(api, cache, options);
  apply(engine, {secret("cfg", "YQ==")});
  sync();
  // Another tool adds an annotation: nothing of ours changed, no write.
  json::object& live = *api.find("Secret", "ns", "cfg");
  live["metadata"].as_object()["annotations"].as_object()["reflector/mirror"] = "true";
  api.touch(live, false);
  sync();
  int writes = api.writes();
  EXPECT_EQ(apply(engine, {secret("cfg", "YQ==")}).unchanged, 1);
  EXPECT_EQ(api.writes(), writes);
  // Someone overwrites the data: repaired.
  json::object& edited = *api.find("Secret", "ns", "cfg");
  edited["data"].as_object()["key"] = "ZXZpbA==";
  api.touch(edited, false);
  sync();
  EXPECT_EQ(apply(engine, {secret("cfg", "YQ==")}).updated, 1);
  EXPECT_EQ(api.find("Secret", "ns", "cfg")->at("data").at("key"), "YQ==");
}

TEST_F(ApplyTest, AfterARestartMatchingObjectsAreTheBaselineAndNotRewritten) {
  {
    ApplyEngine first(api, cache, options);
    apply(first, {deployment("agent"), secret("cfg")});
  }
  sync();
  const int writes = api.writes();
  ApplyEngine second(api, cache, options);  // no memory of its writes
  auto r = apply(second, {deployment("agent"), secret("cfg")});
  EXPECT_EQ(r.unchanged, 2);
  EXPECT_EQ(api.writes(), writes);
}

TEST_F(ApplyTest, NothingIsWrittenWhenNotTheLeader) {
  bool leader = false;
  options.may_write = [&] { return leader; };
  ApplyEngine engine(api, cache, options);
  auto r = apply(engine, {deployment("agent")});
  EXPECT_TRUE(r.write_blocked);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(api.writes(), 0);
  leader = true;
  r = apply(engine, {deployment("agent")});
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.created, 1);
}

TEST_F(ApplyTest, AFailureStopsLaterObjectsAndPruning) {
  ApplyEngine engine(api, cache, options);
  apply(engine, {secret("a"), secret("stale")});
  sync();
  api.inject = [](const FakeApi::Call& c, const json::value*) -> std::optional<k8s::ApiError> {
    if (c.verb != "create" || c.key != "ns/b") return std::nullopt;
    k8s::ApiError e;
    e.code = 403;
    e.reason = "Forbidden";
    e.message = "secrets is forbidden";
    return e;
  };
  auto r = apply(engine, {secret("b"), deployment("agent")});
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(api.find("Deployment", "ns", "agent"), nullptr);  // later step skipped
  EXPECT_NE(api.find("Secret", "ns", "stale"), nullptr);      // no pruning after a failure
  EXPECT_EQ(api.find("Secret", "ns", "a")->at("metadata").at("name"), "a");
}

TEST_F(ApplyTest, AnObjectBeingDeletedIsWaitedFor) {
  ApplyEngine engine(api, cache, options);
  apply(engine, {deployment("agent")});
  json::object& live = *api.find("Deployment", "ns", "agent");
  live["metadata"].as_object()["deletionTimestamp"] = "2024-01-01T00:00:00Z";
  sync();
  const int writes = api.writes();
  auto r = apply(engine, {deployment("agent", "agent:2")});
  EXPECT_TRUE(r.waiting);
  EXPECT_EQ(api.writes(), writes);
}

// The plans of a root that owns its objects by ownerReference.
ApplyPlan owned_plan(std::vector<json::object> desired) {
  ApplyPlan plan;
  plan.root = "ns/root";
  plan.owner_uid = kRootUid;
  for (auto& d : desired) plan.apply(std::move(d));
  return plan;
}

TEST_F(ApplyTest, AnotherRootsObjectIsNeverUpdated) {
  json::object theirs = secret("root-config", "b3RoZXI=");
  theirs["metadata"].as_object()["ownerReferences"] =
      json::array{owner_ref(true, "other-uid", "other")};
  api.put(theirs);
  sync();
  const json::object before = *api.find("Secret", "ns", "root-config");
  ApplyEngine engine(api, cache, options);
  const ApplyReport r = run(engine.apply(owned_plan({secret("root-config"), deployment("agent")})));
  EXPECT_EQ(api.writes(), 0);  // neither the Secret nor the steps after it
  EXPECT_EQ(*api.find("Secret", "ns", "root-config"), before);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0],
            "Secret ns/root-config: exists and is not this root's (it is controlled by Root other "
            "(uid other-uid)); left unchanged: delete or rename it, or rename the root");
  const ObjectOutcome* o = r.find({"", "Secret"}, {"ns", "root-config"});
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->result, ObjectResult::not_owned);
  EXPECT_NE(registry.expose().find(
                "agent_operator_apply_errors_total{controller=\"test\",kind=\"Secret\"} 1"),
            std::string::npos);
}

TEST_F(ApplyTest, AUserObjectTheCacheDoesNotShowIsNotTakenOver) {
  // A user's Secret without ownerReferences or labels: a label-filtered cache never shows
  // it, so the create is answered AlreadyExists and the fresh read decides.
  json::object users{{"apiVersion", "v1"},
                     {"kind", "Secret"},
                     {"metadata", json::object{{"namespace", "ns"}, {"name", "root-config"}}},
                     {"data", json::object{{"mine", "eA=="}}}};
  api.put(users);
  const json::object before = *api.find("Secret", "ns", "root-config");
  ApplyEngine engine(api, cache, options);
  const ApplyReport r = run(engine.apply(owned_plan({secret("root-config")})));
  EXPECT_EQ(*api.find("Secret", "ns", "root-config"), before);
  EXPECT_EQ(api.count("update"), 0);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_NE(r.errors[0].find("(no ownerReference names this root)"), std::string::npos);
  EXPECT_FALSE(r.ok());
}

TEST_F(ApplyTest, AnObjectWithTheRootsReferenceBesideAnotherControllerIsNotTheRoots) {
  json::object shared = deployment("agent");
  shared["metadata"].as_object()["ownerReferences"] =
      json::array{owner_ref(false), owner_ref(true, "other-uid", "other")};
  api.put(shared);
  sync();
  ApplyEngine engine(api, cache, options);
  const ApplyReport r = run(engine.apply(owned_plan({deployment("agent", "agent:2")})));
  EXPECT_EQ(api.writes(), 0);
  EXPECT_EQ(r.find({"apps", "Deployment"}, {"ns", "agent"})->result, ObjectResult::not_owned);
}

TEST_F(ApplyTest, AnEarlierRootOfTheSameNamesObjectIsLeftToTheGarbageCollector) {
  // The root was deleted and created again: its old objects name the old UID, whose owner
  // is gone, so the collector deletes them. Adopting one would race with that delete.
  json::object old = deployment("agent");
  old["metadata"].as_object()["ownerReferences"] = json::array{owner_ref(true, "old-root-uid")};
  api.put(old);
  sync();
  ApplyEngine engine(api, cache, options);
  ApplyReport r = run(engine.apply(owned_plan({deployment("agent", "agent:2")})));
  EXPECT_EQ(api.writes(), 0);
  EXPECT_TRUE(r.waiting);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.find({"apps", "Deployment"}, {"ns", "agent"})->result, ObjectResult::waiting);
  // Collected: the next apply creates the root's own.
  const json::object* collected = api.find("Deployment", "ns", "agent");
  std::erase_if(api.objects(), [&](const auto& kv) { return &kv.second == collected; });
  sync();
  r = run(engine.apply(owned_plan({deployment("agent", "agent:2")})));
  EXPECT_EQ(r.created, 1);
  EXPECT_EQ(
      api.find("Deployment", "ns", "agent")->at("metadata").at("ownerReferences").at(0).at("uid"),
      kRootUid);
}

TEST_F(ApplyTest, OwnedObjectsKeepOtherOwnersReferences) {
  json::object ours = deployment("agent");
  ours["metadata"].as_object()["ownerReferences"] =
      json::array{owner_ref(true), owner_ref(false, "other", "other")};
  api.put(ours);
  sync();
  ApplyEngine engine(api, cache, options);
  const ApplyReport r = run(engine.apply(owned_plan({deployment("agent", "agent:2")})));
  EXPECT_EQ(r.updated, 1);
  const auto& refs =
      api.find("Deployment", "ns", "agent")->at("metadata").at("ownerReferences").as_array();
  ASSERT_EQ(refs.size(), 2u);
  EXPECT_EQ(refs[0].at("uid"), kRootUid);
  EXPECT_EQ(refs[1].at("uid"), "other");
}

TEST_F(ApplyTest, DeletesAndPrunesSkipObjectsOfOtherOwners) {
  json::object theirs = secret("root-logs");
  theirs["metadata"].as_object()["ownerReferences"] =
      json::array{owner_ref(true, "other-uid", "other")};
  api.put(theirs);
  json::object shared = statefulset("root-shard-1");
  // Indexed under the root's UID, but controlled by another owner.
  shared["metadata"].as_object()["ownerReferences"] =
      json::array{owner_ref(false), owner_ref(true, "other-uid", "other")};
  api.put(shared);
  sync();
  ApplyEngine engine(api, cache, options);
  ApplyPlan plan = owned_plan({deployment("agent")});
  plan.delete_if_managed({"", "v1", "Secret"}, {"ns", "root-logs"});
  plan.prune(scope());
  const ApplyReport r = run(engine.apply(plan));
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.deleted, 0);
  EXPECT_NE(api.find("Secret", "ns", "root-logs"), nullptr);
  EXPECT_NE(api.find("StatefulSet", "ns", "root-shard-1"), nullptr);
  EXPECT_EQ(r.find({"", "Secret"}, {"ns", "root-logs"})->result, ObjectResult::absent);
}

TEST_F(ApplyTest, WithoutAnOwnerUidTheManagedByLabelDecides) {
  json::object users = secret("cfg");
  users["metadata"].as_object()["labels"] = json::object{{"app", "cfg"}};
  api.put(users);
  sync();
  const json::object before = *api.find("Secret", "ns", "cfg");
  ApplyEngine engine(api, cache, options);
  const ApplyReport r = apply(engine, {secret("cfg", "bmV3")}, false);
  EXPECT_EQ(*api.find("Secret", "ns", "cfg"), before);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_NE(r.errors[0].find("it lacks the label app.kubernetes.io/managed-by=test-operator"),
            std::string::npos);
}

TEST_F(ApplyTest, AKindWithoutACacheIsReadFromTheServer) {
  ApplyEngine engine(api, cache, options);
  json::object cm{{"apiVersion", "v1"},
                  {"kind", "ConfigMap"},
                  {"metadata", meta("ns", "cfg")},
                  {"data", json::object{{"k", "v"}}}};
  EXPECT_EQ(apply(engine, {cm}, false).created, 1);
  const int writes = api.writes();
  const int gets = api.count("get");
  auto r = apply(engine, {cm}, false);
  EXPECT_EQ(r.unchanged, 1);
  EXPECT_EQ(api.writes(), writes);
  EXPECT_EQ(api.count("get"), gets + 1);
}

TEST_F(ApplyTest, CachesCaughtUpWaitsUntilTheCachesShowTheLastWrites) {
  ApplyEngine engine(api, cache, options);
  EXPECT_TRUE(engine.caches_caught_up("ns/root"));  // nothing written yet
  apply(engine, {deployment("agent"), secret("old")});
  EXPECT_FALSE(engine.caches_caught_up("ns/root"));  // the informers have not seen them
  sync();
  EXPECT_TRUE(engine.caches_caught_up("ns/root"));
  // A prune: caught up once the cache no longer shows the deleted object.
  apply(engine, {deployment("agent")});
  EXPECT_FALSE(engine.caches_caught_up("ns/root"));
  sync();
  EXPECT_TRUE(engine.caches_caught_up("ns/root"));
  // An apply that wrote nothing clears what it expected.
  EXPECT_EQ(apply(engine, {deployment("agent")}).writes(), 0);
  EXPECT_TRUE(engine.caches_caught_up("ns/root"));
}

TEST_F(ApplyTest, CachesCaughtUpGivesUpAfterTheTimeout) {
  options.expectation_timeout = net::Duration::zero();
  ApplyEngine engine(api, cache, options);
  apply(engine, {deployment("agent")});
  EXPECT_TRUE(engine.caches_caught_up("ns/root"));  // never shown, but overdue
}

// What an informer would hand to the handlers for the server's current object.
k8s::ObjectPtr live(FakeApi& api, std::string_view kind, std::string_view name) {
  const json::object* o = api.find(kind, "ns", name);
  return o == nullptr ? nullptr : k8s::Object::from_json(json::value(*o));
}

TEST_F(ApplyTest, EchoesOfOwnWritesAreDroppedAndEverythingElsePassesThrough) {
  ApplyEngine engine(api, cache, options);
  apply(engine, {secret("cfg"), deployment("agent"), secret("old")});
  int foreign = 0;
  auto count = [&foreign] { ++foreign; };
  const GroupKind secrets{"", "Secret"};
  const GroupKind deployments{"apps", "Deployment"};

  // The creates come back as adds (or updates after a relist): echoes.
  const auto cfg = live(api, "Secret", "cfg");
  engine.unless_own_write(secrets, *cfg, OwnedEvent::added, count);
  engine.unless_own_write(secrets, *cfg, OwnedEvent::updated, count);
  engine.unless_own_write(deployments, *live(api, "Deployment", "agent"), OwnedEvent::added, count);
  EXPECT_EQ(foreign, 0);
  EXPECT_EQ(engine.echoes(), 3u);

  // An update by the engine: its event is an echo too.
  sync();
  apply(engine, {secret("cfg", "bmV3"), deployment("agent"), secret("old")});
  engine.unless_own_write(secrets, *live(api, "Secret", "cfg"), OwnedEvent::updated, count);
  EXPECT_EQ(foreign, 0);

  // Someone else's edit, a workload's status, a deletion by hand: not echoes.
  api.touch(*api.find("Secret", "ns", "cfg"), false);
  engine.unless_own_write(secrets, *live(api, "Secret", "cfg"), OwnedEvent::updated, count);
  EXPECT_EQ(foreign, 1);
  json::object& d = *api.find("Deployment", "ns", "agent");
  d["status"] = json::object{{"readyReplicas", 1}};
  api.touch(d, false);
  engine.unless_own_write(deployments, *live(api, "Deployment", "agent"), OwnedEvent::updated,
                          count);
  EXPECT_EQ(foreign, 2);
  engine.unless_own_write(secrets, *cfg, OwnedEvent::deleted, count);
  EXPECT_EQ(foreign, 3);

  // The engine's own prune: the deletion event is an echo.
  sync();
  const auto old = live(api, "Secret", "old");
  ASSERT_NE(old, nullptr);
  EXPECT_EQ(apply(engine, {secret("cfg", "bmV3"), deployment("agent")}).deleted, 1);
  engine.unless_own_write(secrets, *old, OwnedEvent::deleted, count);
  EXPECT_EQ(foreign, 3);
  // An object of the same name it never wrote is not its echo.
  json::object stranger = secret("old");
  api.put(stranger);
  engine.unless_own_write(secrets, *live(api, "Secret", "old"), OwnedEvent::added, count);
  EXPECT_EQ(foreign, 4);
}

TEST_F(ApplyTest, AnEchoOneWriteBehindIsStillAnEcho) {
  ApplyEngine engine(api, cache, options);
  apply(engine, {secret("cfg", "MQ==")});
  const auto first = live(api, "Secret", "cfg");
  sync();
  apply(engine, {secret("cfg", "Mg==")});
  int foreign = 0;
  engine.unless_own_write({"", "Secret"}, *first, OwnedEvent::updated, [&] { ++foreign; });
  EXPECT_EQ(foreign, 0);
}

TEST_F(ApplyTest, AnEventArrivingBeforeTheWritesAnswerWaitsForIt) {
  ApplyEngine engine(api, cache, options);
  apply(engine, {secret("cfg", "MQ==")});
  sync();
  int foreign = 0;
  bool decided_early = false;
  // The watch delivers events while the update is on its way: the echo of the update
  // itself (the resourceVersion it is about to produce) and someone else's older write.
  api.inject = [&](const FakeApi::Call& c, const json::value*) -> std::optional<k8s::ApiError> {
    if (c.verb != "update") return std::nullopt;
    json::object echo = *api.find("Secret", "ns", "cfg");
    echo["metadata"].as_object()["resourceVersion"] = api.next_resource_version();
    const auto echo_obj = k8s::Object::from_json(json::value(echo));
    engine.unless_own_write({"", "Secret"}, *echo_obj, OwnedEvent::updated, [&] { ++foreign; });
    json::object other = *api.find("Secret", "ns", "cfg");
    other["metadata"].as_object()["resourceVersion"] = "7";
    const auto other_obj = k8s::Object::from_json(json::value(other));
    engine.unless_own_write({"", "Secret"}, *other_obj, OwnedEvent::updated, [&] { ++foreign; });
    decided_early = foreign != 0;
    return std::nullopt;
  };
  EXPECT_EQ(apply(engine, {secret("cfg", "Mg==")}).updated, 1);
  EXPECT_FALSE(decided_early);
  EXPECT_EQ(foreign, 1);  // only the other write's event
}

TEST_F(ApplyTest, EventsWaitingForAFailedWritePassThrough) {
  ApplyEngine engine(api, cache, options);
  apply(engine, {secret("cfg", "MQ==")});
  sync();
  int foreign = 0;
  api.inject = [&](const FakeApi::Call& c, const json::value*) -> std::optional<k8s::ApiError> {
    if (c.verb != "update") return std::nullopt;
    const auto obj = live(api, "Secret", "cfg");
    json::object guess = *api.find("Secret", "ns", "cfg");
    guess["metadata"].as_object()["resourceVersion"] = api.next_resource_version();
    const auto guess_obj = k8s::Object::from_json(json::value(guess));
    engine.unless_own_write({"", "Secret"}, *guess_obj, OwnedEvent::updated, [&] { ++foreign; });
    k8s::ApiError e;
    e.code = 500;
    e.reason = "InternalError";
    e.message = "boom";
    return e;
  };
  EXPECT_FALSE(apply(engine, {secret("cfg", "Mg==")}).ok());
  EXPECT_EQ(foreign, 1);  // the write never happened: whatever that event was, it is not ours
}

TEST(JsonSubset, DesiredFieldsMustBePresentAndEqual) {
  const auto v = [](std::string_view s) { return json::parse(s); };
  EXPECT_TRUE(json_subset(v(R"({"a":1})"), v(R"({"a":1,"b":2})")));
  EXPECT_FALSE(json_subset(v(R"({"a":1,"b":2})"), v(R"({"a":1})")));
  EXPECT_TRUE(json_subset(v(R"([{"a":1}])"), v(R"([{"a":1,"d":"default"}])")));
  EXPECT_FALSE(json_subset(v(R"([{"a":1}])"), v(R"([{"a":1},{"a":2}])")));
  EXPECT_TRUE(json_subset(v("1"), v("1.0")));
  EXPECT_FALSE(json_subset(v(R"("1")"), v("1")));
}

}  // namespace
}  // namespace aop::runtime
