// Object semantics: server-set fields, Status error bodies, optimistic concurrency,
// status subresources, generateName, namespaces, dry run, no-op updates.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tests/sim/sim_fixture.hpp"

namespace aop::sim::testing {
namespace {

class Crud : public SimTest {};

TEST_F(Crud, CreateSetsServerFieldsAndGetReturnsIt) {
  auto created = make_cm("a");
  const auto& md = created.at("metadata").as_object();
  EXPECT_EQ(md.at("uid").as_string().size(), 36u);
  EXPECT_EQ(md.at("creationTimestamp").as_string(), "2023-11-14T22:13:20Z");
  EXPECT_FALSE(md.contains("generation"));  // ConfigMaps have no spec
  auto got = get("/api/v1/namespaces/default/configmaps/a");
  EXPECT_EQ(got, created);
  EXPECT_EQ(got.at("kind"), "ConfigMap");
  EXPECT_EQ(got.at("apiVersion"), "v1");
}

TEST_F(Crud, ResourceVersionIsOneGlobalIncreasingCounter) {
  auto a = make_cm("a");
  auto b = make_cm("b");
  auto a2 = put("/api/v1/namespaces/default/configmaps/a", a);
  EXPECT_LT(std::stoull(rv_of(a)), std::stoull(rv_of(b)));
  // Identical content: a no-op update keeps the resourceVersion.
  EXPECT_EQ(rv_of(a2), rv_of(a));
  a.as_object()["data"].as_object()["k"] = "changed";
  auto a3 = put("/api/v1/namespaces/default/configmaps/a", a);
  EXPECT_GT(std::stoull(rv_of(a3)), std::stoull(rv_of(b)));
}

TEST_F(Crud, NotFoundIsAStatusWithResourceDetails) {
  auto r = call("GET", "/apis/apps/v1/namespaces/default/deployments/nope");
  ASSERT_EQ(r.status, 404);
  auto s = body(r);
  EXPECT_EQ(s.at("kind"), "Status");
  EXPECT_EQ(s.at("apiVersion"), "v1");
  EXPECT_EQ(s.at("status"), "Failure");
  EXPECT_EQ(s.at("reason"), "NotFound");
  EXPECT_EQ(s.at("code"), 404);
  EXPECT_EQ(s.at("message"), "deployments.apps \"nope\" not found");
  EXPECT_EQ(s.at("details").at("name"), "nope");
  EXPECT_EQ(s.at("details").at("group"), "apps");
  EXPECT_EQ(s.at("details").at("kind"), "deployments");
}

TEST_F(Crud, AlreadyExists) {
  make_cm("a");
  auto r = call("POST", "/api/v1/namespaces/default/configmaps", json::serialize(configmap("a")));
  ASSERT_EQ(r.status, 409);
  EXPECT_EQ(body(r).at("reason"), "AlreadyExists");
  EXPECT_EQ(body(r).at("message"), "configmaps \"a\" already exists");
}

TEST_F(Crud, StaleResourceVersionIsAConflict) {
  auto a = make_cm("a");
  auto fresh = a;
  fresh.as_object()["data"].as_object()["k"] = "one";
  put("/api/v1/namespaces/default/configmaps/a", fresh);
  a.as_object()["data"].as_object()["k"] = "two";  // still carries the old resourceVersion
  auto r = call("PUT", "/api/v1/namespaces/default/configmaps/a", json::serialize(a));
  ASSERT_EQ(r.status, 409);
  auto s = body(r);
  EXPECT_EQ(s.at("reason"), "Conflict");
  EXPECT_EQ(s.at("message"),
            "Operation cannot be fulfilled on configmaps \"a\": the object has been modified; "
            "please apply your changes to the latest version and try again");
  EXPECT_EQ(s.at("details").at("kind"), "configmaps");
  // Without a resourceVersion the update is unconditional.
  a.as_object()["metadata"].as_object().erase("resourceVersion");
  auto ok = put("/api/v1/namespaces/default/configmaps/a", a);
  EXPECT_EQ(ok.at("data").at("k"), "two");
}

TEST_F(Crud, PatchWithStaleResourceVersionIsAConflict) {
  auto a = make_cm("a");
  patch("/api/v1/namespaces/default/configmaps/a", "application/merge-patch+json",
        json::parse(R"({"data":{"k":"x"}})"));
  auto r = call("PATCH", "/api/v1/namespaces/default/configmaps/a",
                R"({"metadata":{"resourceVersion":")" + rv_of(a) + R"("},"data":{"k":"y"}})",
                "application/merge-patch+json");
  EXPECT_EQ(r.status, 409);
}

TEST_F(Crud, InvalidNameIsUnprocessable) {
  auto r =
      call("POST", "/api/v1/namespaces/default/configmaps", json::serialize(configmap("Bad_Name")));
  ASSERT_EQ(r.status, 422);
  auto s = body(r);
  EXPECT_EQ(s.at("reason"), "Invalid");
  EXPECT_EQ(s.at("details").at("kind"), "ConfigMap");
  EXPECT_EQ(s.at("details").at("causes").at(0).at("field"), "metadata.name");
  EXPECT_EQ(s.at("details").at("causes").at(0).at("reason"), "FieldValueInvalid");
  EXPECT_TRUE(s.at("message").as_string().starts_with(
      "ConfigMap \"Bad_Name\" is invalid: metadata.name: Invalid value: \"Bad_Name\": a lowercase "
      "RFC 1123 subdomain"));
}

TEST_F(Crud, GenerateName) {
  auto obj = configmap("");
  obj["metadata"].as_object().erase("name");
  obj["metadata"].as_object()["generateName"] = "gen-";
  auto created = post("/api/v1/namespaces/default/configmaps", obj);
  const std::string name(created.at("metadata").at("name").as_string());
  EXPECT_TRUE(name.starts_with("gen-"));
  EXPECT_EQ(name.size(), 9u);
  obj["metadata"].as_object().erase("generateName");
  auto r = call("POST", "/api/v1/namespaces/default/configmaps", json::serialize(obj));
  EXPECT_EQ(r.status, 422);
  EXPECT_NE(body(r).at("message").as_string().find("name or generateName is required"),
            std::string::npos);
}

TEST_F(Crud, MissingNamespaceIsNotFound) {
  auto r = call("POST", "/api/v1/namespaces/nowhere/configmaps",
                json::serialize(configmap("a", "nowhere")));
  ASSERT_EQ(r.status, 404);
  EXPECT_EQ(body(r).at("message"), "namespaces \"nowhere\" not found");
}

TEST_F(Crud, NamespaceMismatchIsBadRequest) {
  post("/api/v1/namespaces",
       json::parse(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"other"}})"));
  auto r = call("POST", "/api/v1/namespaces/default/configmaps",
                json::serialize(configmap("a", "other")));
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(body(r).at("reason"), "BadRequest");
}

TEST_F(Crud, DefaultNamespacesExist) {
  auto list = get("/api/v1/namespaces");
  auto n = names(list);
  for (const char* ns : {"default", "kube-system", "kube-public"}) {
    EXPECT_NE(std::find(n.begin(), n.end(), ns), n.end()) << ns;
  }
  auto ns = get("/api/v1/namespaces/default");
  EXPECT_EQ(ns.at("status").at("phase"), "Active");
  EXPECT_EQ(call("DELETE", "/api/v1/namespaces/default").status, 403);
}

TEST_F(Crud, StatusSubresourceSeparatesSpecAndStatus) {
  auto dep = json::parse(R"({"apiVersion":"apps/v1","kind":"Deployment",
    "metadata":{"name":"d"},
    "spec":{"selector":{"matchLabels":{"app":"d"}},
            "template":{"metadata":{"labels":{"app":"d"}},"spec":{"containers":[{"name":"c","image":"busybox:1"}]}}},
    "status":{"replicas":7}})");
  auto created = post("/apis/apps/v1/namespaces/default/deployments", dep);
  EXPECT_EQ(created.at("metadata").at("generation"), 1);
  EXPECT_FALSE(created.at("status").as_object().contains("replicas"));  // status ignored on create
  // Server defaults.
  EXPECT_EQ(created.at("spec").at("replicas"), 1);
  EXPECT_EQ(
      created.at("spec").at("template").at("spec").at("containers").at(0).at("imagePullPolicy"),
      "IfNotPresent");

  auto st = created;
  st.as_object()["status"] = json::object{{"replicas", 3}};
  st.as_object()["spec"].as_object()["replicas"] = 5;
  auto after_status = put("/apis/apps/v1/namespaces/default/deployments/d/status", st);
  EXPECT_EQ(after_status.at("status").at("replicas"), 3);
  EXPECT_EQ(after_status.at("spec").at("replicas"), 1);  // spec ignored on the status subresource
  EXPECT_EQ(after_status.at("metadata").at("generation"), 1);

  auto main = after_status;
  main.as_object()["status"] = json::object{{"replicas", 99}};
  main.as_object()["spec"].as_object()["replicas"] = 2;
  auto after_main = put("/apis/apps/v1/namespaces/default/deployments/d", main);
  EXPECT_EQ(after_main.at("status").at("replicas"), 3);  // status ignored on the main resource
  EXPECT_EQ(after_main.at("spec").at("replicas"), 2);
  EXPECT_EQ(after_main.at("metadata").at("generation"), 2);  // spec changed

  // A metadata-only change does not bump the generation.
  after_main.as_object()["metadata"].as_object()["labels"] = json::object{{"x", "y"}};
  auto labelled = put("/apis/apps/v1/namespaces/default/deployments/d", after_main);
  EXPECT_EQ(labelled.at("metadata").at("generation"), 2);
}

TEST_F(Crud, WorkloadValidation) {
  auto dep = json::parse(R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},
    "spec":{"selector":{"matchLabels":{"app":"x"}},
            "template":{"metadata":{"labels":{"app":"d"}},"spec":{"containers":[{"name":"c"}]}}}})");
  auto r = call("POST", "/apis/apps/v1/namespaces/default/deployments", json::serialize(dep));
  ASSERT_EQ(r.status, 422);
  std::vector<std::string> fields;
  const auto status = body(r);
  for (const auto& c : status.at("details").at("causes").as_array())
    fields.emplace_back(c.at("field").as_string());
  EXPECT_EQ(fields, (std::vector<std::string>{"spec.template.metadata.labels",
                                              "spec.template.spec.containers[0].image"}));
}

TEST_F(Crud, StatefulSetImmutableFields) {
  auto sts = json::parse(R"({"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"s"},
    "spec":{"serviceName":"s","selector":{"matchLabels":{"app":"s"}},
            "template":{"metadata":{"labels":{"app":"s"}},"spec":{"containers":[{"name":"c","image":"i:1"}]}}}})");
  auto created = post("/apis/apps/v1/namespaces/default/statefulsets", sts);
  created.as_object()["spec"].as_object()["serviceName"] = "other";
  auto r = call("PUT", "/apis/apps/v1/namespaces/default/statefulsets/s", json::serialize(created));
  ASSERT_EQ(r.status, 422);
  EXPECT_EQ(body(r).at("details").at("causes").at(0).at("field"), "spec");
  EXPECT_EQ(body(r).at("details").at("causes").at(0).at("reason"), "FieldValueForbidden");
}

TEST_F(Crud, SecretStringDataAndBase64) {
  auto created = post(
      "/api/v1/namespaces/default/secrets",
      json::parse(
          R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"stringData":{"a":"hello"}})"));
  EXPECT_EQ(created.at("data").at("a"), "aGVsbG8=");
  EXPECT_EQ(created.at("type"), "Opaque");
  EXPECT_FALSE(created.as_object().contains("stringData"));
  auto r = call(
      "POST", "/api/v1/namespaces/default/secrets",
      R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"t"},"data":{"a":"not base64!"}})");
  EXPECT_EQ(r.status, 400);
}

TEST_F(Crud, MissingKindIsDefaultedForBuiltinKinds) {
  auto created =
      post("/api/v1/namespaces/default/configmaps", json::parse(R"({"metadata":{"name":"x"}})"));
  EXPECT_EQ(created.at("kind"), "ConfigMap");
  EXPECT_EQ(created.at("apiVersion"), "v1");
}

TEST_F(Crud, DryRunDoesNotPersist) {
  auto r = call("POST", "/api/v1/namespaces/default/configmaps?dryRun=All",
                json::serialize(configmap("dry")));
  EXPECT_EQ(r.status, 201);
  get("/api/v1/namespaces/default/configmaps/dry", 404);
}

// ResourceQuota admission of object counts, as kube-apiserver's: a quota limits what its
// status.hard names (spec.hard waits for a quota controller to copy it there); one whose
// usage is not in its status refuses the kinds it limits; one with room admits and
// charges them (dry runs not); a full one refuses with the quota's figures; other kinds
// and namespaces are not concerned.
TEST_F(Crud, ObjectCountQuotasAreAdmittedAndCharged) {
  post("/api/v1/namespaces/default/resourcequotas", json::parse(R"({"metadata":{"name":"q"},
       "spec":{"hard":{"count/configmaps":"1","secrets":"5"}}})"));
  make_cm("uncounted");
  del("/api/v1/namespaces/default/configmaps/uncounted");
  patch("/api/v1/namespaces/default/resourcequotas/q/status", "application/merge-patch+json",
        json::parse(R"({"status":{"hard":{"count/configmaps":"1","secrets":"5"}}})"));
  auto r = call("POST", "/api/v1/namespaces/default/configmaps", json::serialize(configmap("a")));
  ASSERT_EQ(r.status, 403);
  EXPECT_EQ(body(r).at("reason"), "Forbidden");
  EXPECT_EQ(body(r).at("message"),
            "configmaps \"a\" is forbidden: status unknown for quota: q, resources: "
            "count/configmaps");

  put("/api/v1/namespaces/default/resourcequotas/q/status", json::parse(R"({
       "apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"q","namespace":"default"},
       "status":{"hard":{"count/configmaps":"1","secrets":"5"},
                 "used":{"count/configmaps":"0","secrets":"0"}}})"));
  EXPECT_EQ(call("POST", "/api/v1/namespaces/default/configmaps?dryRun=All",
                 json::serialize(configmap("dry")))
                .status,
            201);
  make_cm("a");
  post("/api/v1/namespaces/default/secrets", json::parse(R"({"metadata":{"name":"s"}})"));
  const auto q = get("/api/v1/namespaces/default/resourcequotas/q");
  EXPECT_EQ(q.at("status").at("used").at("count/configmaps"), "1");
  EXPECT_EQ(q.at("status").at("used").at("secrets"), "1");

  r = call("POST", "/api/v1/namespaces/default/configmaps", json::serialize(configmap("b")));
  ASSERT_EQ(r.status, 403);
  EXPECT_EQ(body(r).at("message"),
            "configmaps \"b\" is forbidden: exceeded quota: q, requested: count/configmaps=1, "
            "used: count/configmaps=1, limited: count/configmaps=1");
  make_cm("b", {}, "kube-system");
  post("/apis/apps/v1/namespaces/default/deployments", json::parse(R"({"metadata":{"name":"d"},
       "spec":{"selector":{"matchLabels":{"app":"d"}},
               "template":{"metadata":{"labels":{"app":"d"}},
                           "spec":{"containers":[{"name":"c","image":"i"}]}}}})"));
}

TEST_F(Crud, ServiceKeepsItsClusterIPWhenAnUpdateLeavesItOut) {
  auto svc = json::parse(R"({"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},
     "spec":{"ports":[{"port":80}],"selector":{"app":"s"}}})");
  auto created = post("/api/v1/namespaces/default/services", svc);
  const auto ip = created.at("spec").at("clusterIP");
  EXPECT_TRUE(ip.as_string().starts_with("10.96."));
  EXPECT_EQ(created.at("spec").at("ports").at(0).at("targetPort"), 80);
  svc.as_object()["spec"].as_object()["selector"] = json::object{{"app", "t"}};
  auto updated = put("/api/v1/namespaces/default/services/s", svc);
  EXPECT_EQ(updated.at("spec").at("clusterIP"), ip);
}

TEST_F(Crud, LeasesAndEndpointsCreateOnUpdate) {
  auto ep = json::parse(
      R"({"apiVersion":"v1","kind":"Endpoints","metadata":{"name":"e","namespace":"default"}})");
  auto r = call("PUT", "/api/v1/namespaces/default/endpoints/e", json::serialize(ep));
  EXPECT_EQ(r.status, 201);
  auto cm = configmap("nope");
  EXPECT_EQ(call("PUT", "/api/v1/namespaces/default/configmaps/nope", json::serialize(cm)).status,
            404);
}

TEST_F(Crud, UnknownPathsAndMethods) {
  EXPECT_EQ(call("GET", "/api/v1/widgets").status, 404);
  EXPECT_EQ(call("GET", "/apis/nope.example.com/v1/things").status, 404);
  EXPECT_EQ(call("POST", "/api/v1/namespaces/default/configmaps/x", "{}").status, 405);
  EXPECT_EQ(call("GET", "/api/v1/namespaces/default/configmaps/x/scale").status, 404);
}

TEST_F(Crud, WritesAreCountedByVerbResourceAndUserAgent) {
  call("POST", "/api/v1/namespaces/default/configmaps", json::serialize(configmap("a")),
       "application/json", "", "operator/1.0");
  call("PATCH", "/api/v1/namespaces/default/configmaps/a", R"({"data":{"x":"y"}})",
       "application/merge-patch+json", "", "other/2");
  call("GET", "/api/v1/namespaces/default/configmaps/a");
  auto s = api_.stats_json();
  EXPECT_EQ(s.at("writes").at("total"), 2);
  EXPECT_EQ(s.at("writes").at("by_verb").at("create"), 1);
  EXPECT_EQ(s.at("writes").at("by_verb").at("patch"), 1);
  EXPECT_EQ(s.at("writes").at("by_resource").at("configmaps"), 2);
  EXPECT_EQ(s.at("writes").at("by_user_agent").at("operator/1.0"), 1);
  EXPECT_EQ(s.at("writes").at("by_user_agent").at("other/2"), 1);
  ASSERT_EQ(api_.write_log().size(), 2u);
  EXPECT_EQ(api_.write_log().back().user_agent, "other/2");
  auto admin = body(call("GET", "/admin/writes?user_agent=operator"));
  EXPECT_EQ(admin.at("items").as_array().size(), 1u);
  call("POST", "/admin/reset-stats");
  EXPECT_EQ(api_.stats_json().at("writes").at("total"), 0);
}

TEST_F(Crud, BearerTokenIsRequiredWhenConfigured) {
  FakeTime t;
  auto opts = fake_options(t);
  opts.token = "s3cret";
  ApiServer api(opts);
  Request r;
  r.method = "GET";
  r.target = "/api/v1/namespaces";
  EXPECT_EQ(api.handle(r).status, 401);
  EXPECT_EQ(json::parse(api.handle(r).body_string()).at("reason"), "Unauthorized");
  r.authorization = "Bearer s3cret";
  EXPECT_EQ(api.handle(r).status, 200);
  Request admin;
  admin.method = "GET";
  admin.target = "/admin/stats";
  EXPECT_EQ(api.handle(admin).status, 200);  // loopback admin needs no token
}

TEST_F(Crud, ServerSideApplyCreatesMergesAndRemovesWhatTheManagerDropped) {
  const std::string path = "/api/v1/namespaces/default/configmaps/applied";
  const std::string apply_type = "application/apply-patch+yaml";
  // No fieldManager: 400, as kube-apiserver.
  auto r = call("PATCH", path, "{}", apply_type);
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body_string().find("fieldManager: Required value"), std::string::npos);
  // Absent: created from the applied configuration (YAML body).
  r = call("PATCH", path + "?fieldManager=gitops",
           "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\n  labels: {a: '1', "
           "b: '2'}\ndata: {x: '1', w: '2'}\n",
           apply_type);
  ASSERT_EQ(r.status, 201) << r.body_string();
  const auto created = body(r);
  EXPECT_EQ(created.at("data"), json::parse(R"({"x":"1","w":"2"})"));
  // Another writer adds a field; the same configuration applied again changes nothing.
  patch(path, "application/merge-patch+json", json::parse(R"({"data":{"z":"3"}})"));
  const auto rv = get(path).at("metadata").at("resourceVersion");
  r = call(
      "PATCH", path + "?fieldManager=gitops",
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"applied","labels":{"a":"1","b":"2"}},"data":{"x":"1","w":"2"}})",
      apply_type);
  ASSERT_EQ(r.status, 200) << r.body_string();
  EXPECT_EQ(body(r).at("metadata").at("resourceVersion"), rv);
  // Dropping w and label b removes them; z, written by someone else, stays.
  r = call(
      "PATCH", path + "?fieldManager=gitops&force=true",
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"applied","labels":{"a":"1"}},"data":{"x":"9"}})",
      apply_type);
  ASSERT_EQ(r.status, 200) << r.body_string();
  EXPECT_EQ(body(r).at("data"), json::parse(R"({"x":"9","z":"3"})"));
  EXPECT_EQ(body(r).at("metadata").at("labels"), json::parse(R"({"a":"1"})"));
  // The kind and name must be those of the URL.
  r = call("PATCH", path + "?fieldManager=gitops",
           R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"applied"}})", apply_type);
  EXPECT_EQ(r.status, 400);
  r = call("PATCH", path + "?fieldManager=gitops",
           R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"other"}})", apply_type);
  EXPECT_EQ(r.status, 400);
}

}  // namespace
}  // namespace aop::sim::testing

namespace aop::sim::testing {
namespace {

class Scale : public SimTest {};

TEST_F(Scale, ScaleSubresourceOfADeployment) {
  post("/apis/apps/v1/namespaces/default/deployments", json::parse(R"({"metadata":{"name":"d"},
    "spec":{"replicas":2,"selector":{"matchLabels":{"app":"d"}},
            "template":{"metadata":{"labels":{"app":"d"}},"spec":{"containers":[{"name":"c","image":"i:1"}]}}}})"));
  auto s = get("/apis/apps/v1/namespaces/default/deployments/d/scale");
  EXPECT_EQ(s.at("kind"), "Scale");
  EXPECT_EQ(s.at("apiVersion"), "autoscaling/v1");
  EXPECT_EQ(s.at("spec").at("replicas"), 2);
  EXPECT_EQ(s.at("status").at("selector"), "app=d");
  auto scaled = patch("/apis/apps/v1/namespaces/default/deployments/d/scale",
                      "application/merge-patch+json", json::parse(R"({"spec":{"replicas":5}})"));
  EXPECT_EQ(scaled.at("spec").at("replicas"), 5);
  auto d = get("/apis/apps/v1/namespaces/default/deployments/d");
  EXPECT_EQ(d.at("spec").at("replicas"), 5);
  EXPECT_EQ(d.at("metadata").at("generation"), 2);
  auto stale = s;
  stale.as_object()["spec"].as_object()["replicas"] = 1;
  EXPECT_EQ(
      call("PUT", "/apis/apps/v1/namespaces/default/deployments/d/scale", json::serialize(stale))
          .status,
      409);
  EXPECT_EQ(call("PATCH", "/apis/apps/v1/namespaces/default/deployments/d/scale",
                 R"({"spec":{"replicas":-1}})", "application/merge-patch+json")
                .status,
            422);
  EXPECT_EQ(call("GET", "/apis/apps/v1/namespaces/default/daemonsets/x/scale").status, 404);
  bool listed = false;
  const auto apps = get("/apis/apps/v1");
  for (const auto& r : apps.at("resources").as_array()) {
    if (r.at("name") == "deployments/scale") listed = r.at("kind") == "Scale";
  }
  EXPECT_TRUE(listed);
}

TEST_F(Scale, WatchAcceptsGoBooleanSpellings) {
  auto r = call("GET", "/api/v1/namespaces/default/configmaps?watch=True&allowWatchBookmarks=True");
  EXPECT_TRUE(r.watch);
}

}  // namespace
}  // namespace aop::sim::testing

namespace aop::sim::testing {
namespace {

class Preload : public SimTest {
 protected:
  void SetUp() override {
    dir_ =
        std::filesystem::temp_directory_path() / ("kube-sim-preload-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_ / "sub");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
  }
  std::filesystem::path dir_;
};

TEST_F(Preload, FilesAndDirectoriesInAnyOrder) {
  // The custom resource's file sorts before its CRD's, and its namespace is not defined.
  write("a-widget.yaml", R"(apiVersion: t.example.com/v1
kind: Thing
metadata: {name: one, namespace: team-a}
spec: {x: 1}
---
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: ConfigMap, metadata: {name: l1}, data: {a: "1"}}
- {apiVersion: v1, kind: ConfigMap, metadata: {name: l2}}
)");
  write("sub/z-crd.yaml", R"(apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: things.t.example.com}
spec:
  group: t.example.com
  scope: Namespaced
  names: {plural: things, kind: Thing}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
)");
  write(
      "b.json",
      R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","namespace":"default"},"stringData":{"k":"v"}})");
  write("ignored.txt", "not yaml: [");
  auto n = api_.preload(dir_.string());
  ASSERT_TRUE(n) << n.error().message;
  EXPECT_EQ(*n, 5u);
  get("/apis/t.example.com/v1/namespaces/team-a/things/one");
  get("/api/v1/namespaces/default/configmaps/l1");
  EXPECT_EQ(get("/api/v1/namespaces/default/secrets/s").at("data").at("k"), "dg==");
  get("/api/v1/namespaces/team-a");
}

TEST_F(Preload, ErrorsNameTheFileAndDocument) {
  write("bad.yaml", R"(apiVersion: v1
kind: ConfigMap
metadata: {name: ok}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: Not_Valid}
)");
  auto n = api_.preload((dir_ / "bad.yaml").string());
  ASSERT_FALSE(n);
  EXPECT_NE(n.error().message.find("bad.yaml (document 1)"), std::string::npos)
      << n.error().message;
  EXPECT_NE(n.error().message.find("metadata.name: Invalid value"), std::string::npos)
      << n.error().message;
  EXPECT_FALSE(api_.preload((dir_ / "missing.yaml").string()));
  write("unknown.yaml", "apiVersion: nope/v1\nkind: Nothing\nmetadata: {name: x}\n");
  auto u = api_.preload((dir_ / "unknown.yaml").string());
  ASSERT_FALSE(u);
  EXPECT_NE(u.error().message.find("no kind \"Nothing\" is registered for version \"nope/v1\""),
            std::string::npos);
}

TEST_F(Preload, TheSameCrdTwiceIsCreatedOnceAndADifferentOneIsAnError) {
  const std::string crd = R"(apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.t.example.com}
spec:
  group: t.example.com
  scope: Namespaced
  names: {plural: gadgets, kind: Gadget}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
)";
  // Twice in one file, then again from a second preload (as --preload deploy/ --preload
  // deploy/crds/ does): one CRD, no crash, and its resource is served.
  write("twice.yaml", crd + "---\n" + crd +
                          "---\napiVersion: t.example.com/v1\nkind: Gadget\n"
                          "metadata: {name: g, namespace: default}\n");
  write("again.yaml", crd);
  auto n = api_.preload((dir_ / "twice.yaml").string());
  ASSERT_TRUE(n) << n.error().message;
  EXPECT_EQ(*n, 2u);
  auto again = api_.preload((dir_ / "again.yaml").string());
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(*again, 0u);
  get("/apis/t.example.com/v1/namespaces/default/gadgets/g");

  std::string changed = crd;
  changed.replace(changed.find("scope: Namespaced"), 17, "scope: Cluster");
  write("changed.yaml", changed);
  auto c = api_.preload((dir_ / "changed.yaml").string());
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message.find(
                "CustomResourceDefinition gadgets.t.example.com is preloaded twice with "
                "different specs"),
            std::string::npos)
      << c.error().message;

  // Any other kind given twice fails with the API's AlreadyExists message, naming the file.
  write("cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: dup}\n---\n"
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: dup}\n");
  auto d = api_.preload((dir_ / "cm.yaml").string());
  ASSERT_FALSE(d);
  EXPECT_NE(d.error().message.find("cm.yaml (document 1)"), std::string::npos) << d.error().message;
  EXPECT_NE(d.error().message.find("already exists"), std::string::npos) << d.error().message;
}

}  // namespace
}  // namespace aop::sim::testing
