// CustomResourceDefinitions: discovery, schema validation, pruning and defaults, patch
// types, multiple versions, deletion.
#include "tests/sim/sim_fixture.hpp"
#include "tools/kube-sim/schema.hpp"
#include "tools/kube-sim/table.hpp"

namespace aop::sim::testing {
namespace {

constexpr const char* kCrd = R"({
  "apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
  "metadata":{"name":"gizmos.sim.example.com"},
  "spec":{"group":"sim.example.com","scope":"Namespaced",
    "names":{"plural":"gizmos","kind":"Gizmo","shortNames":["gz"],"categories":["all"]},
    "versions":[
      {"name":"v1","served":true,"storage":true,"subresources":{"status":{}},
       "schema":{"openAPIV3Schema":{"type":"object","properties":{
         "spec":{"type":"object","required":["size"],"properties":{
           "size":{"type":"integer","minimum":1,"maximum":10},
           "mode":{"type":"string","enum":["fast","slow"],"default":"slow"},
           "name":{"type":"string","pattern":"^[a-z]+$","maxLength":8},
           "port":{"x-kubernetes-int-or-string":true},
           "tags":{"type":"array","maxItems":2,"items":{"type":"string"}},
           "labels":{"type":"object","additionalProperties":{"type":"string"}},
           "extra":{"type":"object","x-kubernetes-preserve-unknown-fields":true},
           "note":{"type":"string","nullable":true},
           "ratio":{"type":"number"}}},
         "status":{"type":"object","properties":{"ready":{"type":"boolean"}}}}}}},
      {"name":"v1beta1","served":true,"storage":false,
       "schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}})";

class Crds : public SimTest {
 protected:
  void SetUp() override {
    post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json::parse(kCrd));
  }

  static json::object gizmo(const std::string& name, json::value spec) {
    return json::object{{"apiVersion", "sim.example.com/v1"},
                        {"kind", "Gizmo"},
                        {"metadata", json::object{{"name", name}}},
                        {"spec", std::move(spec)}};
  }
  Response create(const json::value& g) {
    return call("POST", "/apis/sim.example.com/v1/namespaces/default/gizmos", json::serialize(g));
  }
  std::vector<std::string> invalid_fields(const json::value& spec) {
    auto r = create(gizmo("g", spec));
    EXPECT_EQ(r.status, 422) << r.body_string();
    std::vector<std::string> out;
    if (r.status != 422) return out;
    auto s = body(r);
    for (const auto& c : s.at("details").at("causes").as_array()) {
      out.push_back(std::string(c.at("field").as_string()) + ": " +
                    std::string(c.at("message").as_string()));
    }
    return out;
  }
};

TEST_F(Crds, CrdIsEstablishedAndAppearsInDiscovery) {
  auto crd = get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gizmos.sim.example.com");
  bool established = false;
  for (const auto& c : crd.at("status").at("conditions").as_array()) {
    if (c.at("type") == "Established" && c.at("status") == "True") established = true;
  }
  EXPECT_TRUE(established);
  EXPECT_EQ(crd.at("spec").at("names").at("singular"), "gizmo");
  EXPECT_EQ(crd.at("spec").at("names").at("listKind"), "GizmoList");
  auto groups = get("/apis");
  bool found = false;
  for (const auto& g : groups.at("groups").as_array()) {
    if (g.at("name") == "sim.example.com") {
      found = true;
      EXPECT_EQ(g.at("preferredVersion").at("version"), "v1");
    }
  }
  EXPECT_TRUE(found);
  auto res = get("/apis/sim.example.com/v1");
  EXPECT_EQ(res.at("resources").at(0).at("name"), "gizmos");
  EXPECT_EQ(res.at("resources").at(0).at("shortNames").at(0), "gz");
  EXPECT_EQ(res.at("resources").at(1).at("name"), "gizmos/status");
}

TEST_F(Crds, InvalidCrdIsRejected) {
  auto r = call("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", R"({
    "metadata":{"name":"wrong.sim.example.com"},
    "spec":{"group":"sim.example.com","scope":"Galaxy","names":{"plural":"things","kind":"Thing"},
            "versions":[{"name":"v1","served":true,"storage":true}]}})");
  ASSERT_EQ(r.status, 422);
  auto msg = std::string(body(r).at("message").as_string());
  EXPECT_NE(msg.find("metadata.name: Invalid value: \"wrong.sim.example.com\": must be "
                     "spec.names.plural+\".\"+spec.group"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("spec.scope: Unsupported value: \"Galaxy\""), std::string::npos) << msg;
  EXPECT_NE(msg.find("spec.versions[0].schema.openAPIV3Schema: Required value"), std::string::npos)
      << msg;
}

TEST_F(Crds, ValidCustomResourceIsDefaultedAndPruned) {
  auto r = call("POST", "/apis/sim.example.com/v1/namespaces/default/gizmos?fieldValidation=Ignore",
                json::serialize(gizmo(
                    "g", json::parse(R"({"size":3,"unknown":1,"port":"http","extra":{"any":{"x":1}},
                  "labels":{"a":"b"},"note":null,"ratio":2})"))));
  ASSERT_EQ(r.status, 201) << r.body_string();
  auto g = body(r);
  EXPECT_EQ(g.at("spec").at("mode"), "slow");                  // defaulted
  EXPECT_FALSE(g.at("spec").as_object().contains("unknown"));  // pruned
  EXPECT_EQ(g.at("spec").at("extra").at("any").at("x"), 1);    // preserved
  EXPECT_EQ(g.at("spec").at("note"), nullptr);                 // nullable
  EXPECT_EQ(g.at("metadata").at("generation"), 1);
}

TEST_F(Crds, UnknownFieldsWithStrictValidationAreABadRequest) {
  auto r = call("POST", "/apis/sim.example.com/v1/namespaces/default/gizmos?fieldValidation=Strict",
                json::serialize(gizmo("g", json::parse(R"({"size":3,"unknown":1})"))));
  ASSERT_EQ(r.status, 400);
  EXPECT_EQ(body(r).at("message"),
            "Gizmo in version \"v1\" cannot be handled as a Gizmo: strict decoding error: unknown "
            "field \"spec.unknown\"");
  auto warn =
      call("POST", "/apis/sim.example.com/v1/namespaces/default/gizmos?fieldValidation=Warn",
           json::serialize(gizmo("g", json::parse(R"({"size":3,"unknown":1})"))));
  ASSERT_EQ(warn.status, 201);
  ASSERT_EQ(warn.headers.size(), 1u);
  EXPECT_EQ(warn.headers[0].first, "Warning");
  EXPECT_EQ(warn.headers[0].second, "299 - \"unknown field \\\"spec.unknown\\\"\"");
}

TEST_F(Crds, SchemaViolationsAreInvalidWithFieldPaths) {
  using V = std::vector<std::string>;
  EXPECT_EQ(invalid_fields(json::parse(R"({})")), (V{"spec.size: Required value"}));
  EXPECT_EQ(invalid_fields(json::parse(R"({"size":"big"})")),
            (V{"spec.size: Invalid value: \"string\": spec.size in body must be of type integer: "
               "\"string\""}));
  EXPECT_EQ(
      invalid_fields(json::parse(R"({"size":11})")),
      (V{"spec.size: Invalid value: 11: spec.size in body should be less than or equal to 10"}));
  EXPECT_EQ(
      invalid_fields(json::parse(R"({"size":0})")),
      (V{"spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1"}));
  EXPECT_EQ(invalid_fields(json::parse(R"({"size":1,"mode":"warp"})")),
            (V{"spec.mode: Unsupported value: \"warp\": supported values: \"fast\", \"slow\""}));
  EXPECT_EQ(invalid_fields(json::parse(R"({"size":1,"name":"Abc"})")),
            (V{"spec.name: Invalid value: \"Abc\": spec.name in body should match '^[a-z]+$'"}));
  EXPECT_EQ(invalid_fields(json::parse(R"({"size":1,"name":"abcdefghij"})")),
            (V{"spec.name: Too long: may not be more than 8 bytes"}));
  EXPECT_EQ(invalid_fields(json::parse(R"({"size":1,"tags":["a",2,"c"]})")),
            (V{"spec.tags: Too many: 3: must have at most 2 items",
               "spec.tags[1]: Invalid value: \"integer\": spec.tags[1] in body must be of type "
               "string: \"integer\""}));
  EXPECT_EQ(invalid_fields(json::parse(R"({"size":1,"labels":{"a":1}})")),
            (V{"spec.labels.a: Invalid value: \"integer\": spec.labels.a in body must be of type "
               "string: \"integer\""}));
  EXPECT_EQ(invalid_fields(json::parse(R"({"size":1,"port":true})")),
            (V{"spec.port: Invalid value: \"boolean\": spec.port in body must be of type "
               "integer,string: \"boolean\""}));
  EXPECT_EQ(invalid_fields(json::parse(R"({"size":1.5})")),
            (V{"spec.size: Invalid value: \"number\": spec.size in body must be of type integer: "
               "\"number\""}));
  // The message names the kind and the object.
  auto r = create(gizmo("g", json::parse(R"({"size":"x"})")));
  EXPECT_TRUE(body(r).at("message").as_string().starts_with(
      "Gizmo.sim.example.com \"g\" is invalid: spec.size"));
  EXPECT_EQ(body(r).at("details").at("group"), "sim.example.com");
  EXPECT_EQ(body(r).at("details").at("kind"), "Gizmo");
}

TEST_F(Crds, CustomResourcesRequireKindAndRejectStrategicMerge) {
  auto r = call("POST", "/apis/sim.example.com/v1/namespaces/default/gizmos",
                R"({"metadata":{"name":"x"},"spec":{"size":1}})");
  EXPECT_EQ(r.status, 400);
  create(gizmo("g", json::parse(R"({"size":1})")));
  auto sm = call("PATCH", "/apis/sim.example.com/v1/namespaces/default/gizmos/g",
                 R"({"spec":{"size":2}})", "application/strategic-merge-patch+json");
  ASSERT_EQ(sm.status, 415);
  EXPECT_EQ(body(sm).at("reason"), "UnsupportedMediaType");
  auto merged = patch("/apis/sim.example.com/v1/namespaces/default/gizmos/g",
                      "application/merge-patch+json", json::parse(R"({"spec":{"size":2}})"));
  EXPECT_EQ(merged.at("spec").at("size"), 2);
  EXPECT_EQ(merged.at("metadata").at("generation"), 2);
  auto invalid = call("PATCH", "/apis/sim.example.com/v1/namespaces/default/gizmos/g",
                      R"({"spec":{"size":20}})", "application/merge-patch+json");
  EXPECT_EQ(invalid.status, 422);
}

TEST_F(Crds, StatusSubresourceOfACustomResource) {
  auto g = body(create(gizmo("g", json::parse(R"({"size":1})"))));
  g.as_object()["status"] = json::object{{"ready", true}};
  auto after = put("/apis/sim.example.com/v1/namespaces/default/gizmos/g/status", g);
  EXPECT_EQ(after.at("status").at("ready"), true);
  EXPECT_EQ(after.at("metadata").at("generation"), 1);
  auto bad = after;
  bad.as_object()["status"] = json::object{{"ready", "yes"}};
  EXPECT_EQ(call("PUT", "/apis/sim.example.com/v1/namespaces/default/gizmos/g/status",
                 json::serialize(bad))
                .status,
            422);
}

TEST_F(Crds, ServedVersionsShareStorage) {
  create(gizmo("g", json::parse(R"({"size":1})")));
  auto beta = get("/apis/sim.example.com/v1beta1/namespaces/default/gizmos/g");
  EXPECT_EQ(beta.at("apiVersion"), "sim.example.com/v1beta1");
  auto list = get("/apis/sim.example.com/v1beta1/gizmos");
  EXPECT_EQ(list.at("apiVersion"), "sim.example.com/v1beta1");
  EXPECT_EQ(list.at("items").at(0).at("apiVersion"), "sim.example.com/v1beta1");
}

TEST_F(Crds, DeletingTheCrdRemovesItsResourcesAndDiscovery) {
  create(gizmo("g", json::parse(R"({"size":1})")));
  del("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gizmos.sim.example.com");
  EXPECT_EQ(call("GET", "/apis/sim.example.com/v1/namespaces/default/gizmos").status, 404);
  EXPECT_EQ(call("GET", "/apis/sim.example.com/v1").status, 404);
  // Re-creating it starts empty.
  post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json::parse(kCrd));
  EXPECT_TRUE(
      get("/apis/sim.example.com/v1/namespaces/default/gizmos").at("items").as_array().empty());
}

TEST(Schema, PruningKeepsRootMetadataAndListsPrunedPaths) {
  auto schema = json::parse(
      R"({"type":"object","properties":{"spec":{"type":"object","properties":{"a":{"type":"string"}}}}})");
  auto obj = json::parse(
      R"({"apiVersion":"x/v1","kind":"K","metadata":{"name":"n","whatever":1},"spec":{"a":"x","b":1},"top":2})");
  auto out = apply_schema(schema, obj);
  EXPECT_TRUE(out.errors.empty());
  EXPECT_EQ(out.pruned_fields, (std::vector<std::string>{"spec.b", "top"}));
  EXPECT_EQ(
      obj,
      json::parse(
          R"({"apiVersion":"x/v1","kind":"K","metadata":{"name":"n","whatever":1},"spec":{"a":"x"}})"));
}

}  // namespace
}  // namespace aop::sim::testing

namespace aop::sim::testing {
namespace {

constexpr const char* kTableAccept =
    "application/json;as=Table;v=v1;g=meta.k8s.io,application/"
    "json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";

class Tables : public SimTest {};

TEST_F(Tables, CustomResourcePrinterColumns) {
  auto crd = json::parse(kCrd);
  auto& v1 = crd.at("spec").at("versions").at(0).as_object();
  v1["additionalPrinterColumns"] = json::parse(R"([
    {"name":"Size","type":"integer","jsonPath":".spec.size"},
    {"name":"Mode","type":"string","jsonPath":".spec.mode","priority":1},
    {"name":"Ready","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].status"},
    {"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}])");
  post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd);
  post(
      "/apis/sim.example.com/v1/namespaces/default/gizmos",
      json::parse(
          R"({"apiVersion":"sim.example.com/v1","kind":"Gizmo","metadata":{"name":"g"},"spec":{"size":4}})"));
  time_.advance(std::chrono::seconds(200));
  auto r = call("GET", "/apis/sim.example.com/v1/namespaces/default/gizmos", "", "", kTableAccept);
  ASSERT_EQ(r.status, 200);
  auto t = body(r);
  EXPECT_EQ(t.at("kind"), "Table");
  EXPECT_EQ(t.at("apiVersion"), "meta.k8s.io/v1");
  std::vector<std::string> cols;
  for (const auto& c : t.at("columnDefinitions").as_array())
    cols.emplace_back(c.at("name").as_string());
  EXPECT_EQ(cols, (std::vector<std::string>{"Name", "Size", "Mode", "Ready", "Age"}));
  EXPECT_EQ(t.at("columnDefinitions").at(2).at("priority"), 1);
  const auto& row = t.at("rows").at(0);
  EXPECT_EQ(row.at("cells"), json::parse(R"(["g",4,"slow",null,"3m20s"])"));
  EXPECT_EQ(row.at("object").at("kind"), "PartialObjectMetadata");
}

TEST_F(Tables, BuiltinColumnsAndWatchRows) {
  auto w = call("GET", "/api/v1/namespaces/default/configmaps?watch=1", "", "", kTableAccept).watch;
  ASSERT_TRUE(w);
  make_cm("a");
  auto events = drain(w);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].at("type"), "ADDED");
  EXPECT_EQ(events[0].at("object").at("kind"), "Table");
  EXPECT_EQ(events[0].at("object").at("rows").at(0).at("cells"), json::parse(R"(["a",1,"0s"])"));
  auto ns = body(call("GET", "/api/v1/namespaces/default", "", "", kTableAccept));
  EXPECT_EQ(ns.at("rows").at(0).at("cells").at(1), "Active");
}

TEST(HumanDuration, MatchesKubectl) {
  using std::chrono::seconds;
  EXPECT_EQ(human_duration(seconds(0)), "0s");
  EXPECT_EQ(human_duration(seconds(119)), "119s");
  EXPECT_EQ(human_duration(seconds(125)), "2m5s");
  EXPECT_EQ(human_duration(seconds(600)), "10m");
  EXPECT_EQ(human_duration(seconds(3 * 3600 + 60)), "3h1m");
  EXPECT_EQ(human_duration(seconds(30 * 3600)), "30h");
  EXPECT_EQ(human_duration(seconds(3 * 86400 + 7200)), "3d2h");
  EXPECT_EQ(human_duration(seconds(100 * 86400)), "100d");
}

}  // namespace
}  // namespace aop::sim::testing
