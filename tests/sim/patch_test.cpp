// The patch formats: JSON merge patch, JSON patch, strategic merge patch.
#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "tools/kube-sim/patch.hpp"

namespace aop::sim {
namespace {

namespace json = boost::json;

json::value merge(const char* target, const char* patch) {
  return apply_merge_patch(json::parse(target), json::parse(patch)).value();
}
json::value jp(const char* target, const char* patch) {
  return apply_json_patch(json::parse(target), json::parse(patch)).value();
}
json::value smp(const char* target, const char* patch) {
  return apply_strategic_merge_patch(json::parse(target), json::parse(patch)).value();
}

TEST(MergePatch, Rfc7386) {
  EXPECT_EQ(merge(R"({"a":"b"})", R"({"a":"c"})"), json::parse(R"({"a":"c"})"));
  EXPECT_EQ(merge(R"({"a":"b"})", R"({"b":"c"})"), json::parse(R"({"a":"b","b":"c"})"));
  EXPECT_EQ(merge(R"({"a":"b"})", R"({"a":null})"), json::parse(R"({})"));
  EXPECT_EQ(merge(R"({"a":{"b":"c"}})", R"({"a":{"b":"d","c":null}})"),
            json::parse(R"({"a":{"b":"d"}})"));
  EXPECT_EQ(merge(R"({"a":[1,2]})", R"({"a":[3]})"), json::parse(R"({"a":[3]})"));  // lists replace
  EXPECT_EQ(merge(R"({"a":"b"})", R"(["c"])"), json::parse(R"(["c"])"));
  EXPECT_EQ(merge(R"({"e":null})", R"({"a":1})"), json::parse(R"({"e":null,"a":1})"));
}

TEST(MergePatch, CreateRoundTrips) {
  auto from = json::parse(R"({"a":1,"b":{"c":2,"d":3},"e":[1]})");
  auto to = json::parse(R"({"a":1,"b":{"c":4},"e":[2],"f":true})");
  auto p = create_merge_patch(from, to);
  EXPECT_EQ(p, json::parse(R"({"b":{"d":null,"c":4},"e":[2],"f":true})"));
  EXPECT_EQ(apply_merge_patch(from, p).value(), to);
}

TEST(JsonPatch, Rfc6902Operations) {
  EXPECT_EQ(jp(R"({"a":[1,2]})", R"([{"op":"add","path":"/a/1","value":9}])"),
            json::parse(R"({"a":[1,9,2]})"));
  EXPECT_EQ(jp(R"({"a":[1,2]})", R"([{"op":"add","path":"/a/-","value":3}])"),
            json::parse(R"({"a":[1,2,3]})"));
  EXPECT_EQ(jp(R"({"a":1})", R"([{"op":"remove","path":"/a"}])"), json::parse(R"({})"));
  EXPECT_EQ(jp(R"({"a":1})", R"([{"op":"replace","path":"/a","value":2}])"),
            json::parse(R"({"a":2})"));
  EXPECT_EQ(jp(R"({"a":{"b":1}})", R"([{"op":"move","from":"/a/b","path":"/c"}])"),
            json::parse(R"({"a":{},"c":1})"));
  EXPECT_EQ(jp(R"({"a":[1]})", R"([{"op":"copy","from":"/a/0","path":"/b"}])"),
            json::parse(R"({"a":[1],"b":1})"));
  EXPECT_EQ(jp(R"({"a/b":{"c~d":1}})", R"([{"op":"replace","path":"/a~1b/c~0d","value":2}])"),
            json::parse(R"({"a/b":{"c~d":2}})"));
  EXPECT_EQ(jp(R"({"a":1})",
               R"([{"op":"test","path":"/a","value":1},{"op":"add","path":"/b","value":2}])"),
            json::parse(R"({"a":1,"b":2})"));
}

TEST(JsonPatch, Failures) {
  EXPECT_FALSE(apply_json_patch(json::parse(R"({"a":1})"),
                                json::parse(R"([{"op":"test","path":"/a","value":2}])")));
  EXPECT_FALSE(
      apply_json_patch(json::parse(R"({"a":1})"), json::parse(R"([{"op":"remove","path":"/b"}])")));
  EXPECT_FALSE(apply_json_patch(json::parse(R"({"a":1})"),
                                json::parse(R"([{"op":"replace","path":"/b","value":1}])")));
  EXPECT_FALSE(apply_json_patch(json::parse(R"({"a":[1]})"),
                                json::parse(R"([{"op":"add","path":"/a/5","value":1}])")));
  EXPECT_FALSE(apply_json_patch(json::parse(R"({})"), json::parse(R"({"op":"add"})")));
  EXPECT_FALSE(
      apply_json_patch(json::parse(R"({})"), json::parse(R"([{"op":"jump","path":"/a"}])")));
}

constexpr const char* kDeployment =
    R"({"spec":{"template":{"metadata":{"labels":{"app":"x"}},"spec":{
  "containers":[
    {"name":"app","image":"app:1","env":[{"name":"A","value":"1"},{"name":"B","value":"2"}],
     "ports":[{"containerPort":80,"name":"http"}],
     "volumeMounts":[{"name":"cfg","mountPath":"/etc/cfg"}]},
    {"name":"side","image":"side:1"}],
  "volumes":[{"name":"cfg","configMap":{"name":"c"}}],
  "tolerations":[{"key":"a"}]}}}})";

TEST(StrategicMerge, ContainersMergeByName) {
  auto out = smp(kDeployment, R"({"spec":{"template":{"spec":{"containers":[
      {"name":"app","image":"app:2","env":[{"name":"B","value":"3"},{"name":"C","value":"4"}]},
      {"name":"new","image":"new:1"}]}}}})");
  const auto& cs = out.at("spec").at("template").at("spec").at("containers").as_array();
  ASSERT_EQ(cs.size(), 3u);
  EXPECT_EQ(cs[0].at("image"), "app:2");
  EXPECT_EQ(cs[0].at("env"),
            json::parse(
                R"([{"name":"A","value":"1"},{"name":"B","value":"3"},{"name":"C","value":"4"}])"));
  EXPECT_EQ(cs[0].at("ports").at(0).at("name"), "http");  // untouched fields stay
  EXPECT_EQ(cs[1].at("name"), "side");
  EXPECT_EQ(cs[2].at("name"), "new");
}

TEST(StrategicMerge, Directives) {
  // $patch: delete removes a list item by key.
  auto out =
      smp(kDeployment,
          R"({"spec":{"template":{"spec":{"containers":[{"name":"side","$patch":"delete"}]}}}})");
  EXPECT_EQ(out.at("spec").at("template").at("spec").at("containers").as_array().size(), 1u);
  // $patch: replace on a map replaces it.
  out = smp(kDeployment,
            R"({"spec":{"template":{"metadata":{"labels":{"$patch":"replace","b":"c"}}}}})");
  EXPECT_EQ(out.at("spec").at("template").at("metadata").at("labels"), json::parse(R"({"b":"c"})"));
  // $setElementOrder reorders a merged list.
  out = smp(
      kDeployment,
      R"({"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"side"},{"name":"app"}],
                              "containers":[{"name":"app","image":"app:3"}]}}}})");
  const auto& cs = out.at("spec").at("template").at("spec").at("containers").as_array();
  EXPECT_EQ(cs[0].at("name"), "side");
  EXPECT_EQ(cs[1].at("image"), "app:3");
  EXPECT_FALSE(
      out.at("spec").at("template").at("spec").as_object().contains("$setElementOrder/containers"));
  // Lists without a merge key are replaced.
  out = smp(kDeployment, R"({"spec":{"template":{"spec":{"tolerations":[{"key":"b"}]}}}})");
  EXPECT_EQ(out.at("spec").at("template").at("spec").at("tolerations"),
            json::parse(R"([{"key":"b"}])"));
  // null deletes; maps merge.
  out = smp(kDeployment, R"({"spec":{"template":{"metadata":{"labels":{"app":null,"v":"2"}}}}})");
  EXPECT_EQ(out.at("spec").at("template").at("metadata").at("labels"), json::parse(R"({"v":"2"})"));
  // $retainKeys keeps only the listed keys.
  out = smp(R"({"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":1}}})",
            R"({"strategy":{"$retainKeys":["type"],"type":"Recreate"}})");
  EXPECT_EQ(out, json::parse(R"({"strategy":{"type":"Recreate"}})"));
}

TEST(StrategicMerge, PortsVolumeMountsAndFinalizers) {
  auto out = smp(kDeployment, R"({"spec":{"template":{"spec":{"containers":[{"name":"app",
      "ports":[{"containerPort":9090,"name":"metrics"}],
      "volumeMounts":[{"mountPath":"/etc/cfg","readOnly":true}]}]}}}})");
  const auto& app = out.at("spec").at("template").at("spec").at("containers").at(0);
  EXPECT_EQ(app.at("ports").as_array().size(), 2u);
  EXPECT_EQ(app.at("volumeMounts"),
            json::parse(R"([{"name":"cfg","mountPath":"/etc/cfg","readOnly":true}])"));
  auto svc = smp(R"({"spec":{"ports":[{"port":80,"name":"a"}]}})",
                 R"({"spec":{"ports":[{"port":81,"name":"b"}]}})");
  EXPECT_EQ(svc.at("spec").at("ports").as_array().size(), 2u);  // Service ports merge by port
  auto fin =
      smp(R"({"metadata":{"finalizers":["a","b"]}})", R"({"metadata":{"finalizers":["b","c"]}})");
  EXPECT_EQ(fin.at("metadata").at("finalizers"), json::parse(R"(["a","b","c"])"));
  auto del = smp(R"({"metadata":{"finalizers":["a","b"]}})",
                 R"({"metadata":{"$deleteFromPrimitiveList/finalizers":["a"]}})");
  EXPECT_EQ(del.at("metadata").at("finalizers"), json::parse(R"(["b"])"));
}

TEST(StrategicMerge, MissingMergeKeyIsAnError) {
  EXPECT_FALSE(apply_strategic_merge_patch(
      json::parse(kDeployment),
      json::parse(R"({"spec":{"template":{"spec":{"containers":[{"image":"x"}]}}}})")));
}

}  // namespace
}  // namespace aop::sim
