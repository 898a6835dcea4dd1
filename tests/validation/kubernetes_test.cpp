// Unit tests of the Kubernetes API rules (reconcile/validation/kubernetes.hpp). The
// expected outcomes are those of the API server's validation (apimachinery's name and
// label rules, resource.Quantity's grammar, core/v1 pod validation).
#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "reconcile/validation/kubernetes.hpp"

namespace aop::validation {
namespace {

namespace json = boost::json;

std::vector<std::string> fields(void (*fn)(Checker&, const json::value&), std::string_view js) {
  Checker c("x");
  fn(c, json::parse(js));
  std::vector<std::string> out;
  for (const auto& v : c.violations()) out.push_back(v.field + ": " + v.message);
  return out;
}

bool has_field(const std::vector<std::string>& v, std::string_view field) {
  for (const auto& s : v) {
    if (s.substr(0, field.size() + 1) == std::string(field) + ":") return true;
  }
  return false;
}

}  // namespace

TEST(KubernetesNames, LabelsSubdomainsQualifiedNamesPortNames) {
  EXPECT_FALSE(check_dns_label("grafana-agent-0"));
  EXPECT_TRUE(check_dns_label("Grafana"));
  EXPECT_TRUE(check_dns_label("-a"));
  EXPECT_TRUE(check_dns_label(std::string(64, 'a')));
  EXPECT_FALSE(check_dns_subdomain("grafana.agent-sa"));
  EXPECT_TRUE(check_dns_subdomain("a..b"));
  EXPECT_TRUE(check_dns_subdomain("My_SA"));
  EXPECT_FALSE(check_qualified_name("app.kubernetes.io/name"));
  EXPECT_FALSE(check_qualified_name("Team_A"));
  EXPECT_TRUE(check_qualified_name("/name"));
  EXPECT_TRUE(check_qualified_name("a/b/c"));
  EXPECT_TRUE(check_qualified_name("-x"));
  EXPECT_TRUE(check_qualified_name(std::string(64, 'a')));
  EXPECT_FALSE(check_label_value_k8s(""));
  EXPECT_FALSE(check_label_value_k8s("v1.2_3-x"));
  EXPECT_TRUE(check_label_value_k8s("a b"));
  EXPECT_TRUE(check_label_value_k8s(std::string(64, 'a')));
  EXPECT_FALSE(check_port_name("http-metrics"));
  EXPECT_TRUE(check_port_name("http-metrics-port-x"));  // 19 > 15
  EXPECT_TRUE(check_port_name("8080"));
  EXPECT_TRUE(check_port_name("http--x"));
  EXPECT_TRUE(check_port_name("HTTP"));
  EXPECT_FALSE(check_env_var_name("MY_VAR.x-1"));
  EXPECT_TRUE(check_env_var_name("1VAR"));
  EXPECT_TRUE(check_env_var_name("MY VAR"));
}

TEST(KubernetesNames, ImageReferences) {
  for (const char* ok :
       {"grafana/agent:v0.44.8", "quay.io/prometheus-operator/x:v0.67.1", "localhost:5000/a/b",
        "registry.example.com:5000/team/agent@sha256:"
        "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        "busybox", "my_repo/a__b.c-d:latest"}) {
    EXPECT_FALSE(check_image(ok)) << ok << ": " << *check_image(ok);
  }
  for (const char* bad : {"", " grafana/agent", "Grafana/Agent", "grafana/agent:", "agent:v1:v2",
                          "a//b", "grafana/agent@sha256:xyz", "grafana/agent:-x", "a b"}) {
    EXPECT_TRUE(check_image(bad)) << bad;
  }
  EXPECT_FALSE(check_image_tag("v0.44.8"));
  EXPECT_TRUE(check_image_tag(".x"));
}

TEST(KubernetesQuantities, Grammar) {
  for (const char* ok : {"100m", "0.5", "128Mi", "1Gi", "2e3", "1E-3", "+1", "-1", ".5", "5."}) {
    EXPECT_FALSE(check_quantity(ok)) << ok;
  }
  for (const char* bad : {"", "1GB", "1 Gi", "abc", "1.2.3", "Mi", "1e", "0x10"}) {
    EXPECT_TRUE(check_quantity(bad)) << bad;
  }
  EXPECT_DOUBLE_EQ(static_cast<double>(*quantity_value("1Ki")), 1024.0);
  EXPECT_DOUBLE_EQ(static_cast<double>(*quantity_value("250m")), 0.25);
}

TEST(KubernetesObjects, TolerationRules) {
  EXPECT_TRUE(fields(check_toleration, R"({"operator":"Exists"})").empty());
  EXPECT_TRUE(
      fields(check_toleration, R"({"key":"node-role.kubernetes.io/master","effect":"NoSchedule"})")
          .empty());
  EXPECT_TRUE(
      has_field(fields(check_toleration, R"({"key":"k","operator":"Equals"})"), "x.operator"));
  EXPECT_TRUE(
      has_field(fields(check_toleration, R"({"key":"k","effect":"NoScheduling"})"), "x.effect"));
  EXPECT_TRUE(has_field(fields(check_toleration, R"({"value":"v"})"), "x.operator"));
  EXPECT_TRUE(has_field(fields(check_toleration, R"({"key":"k","operator":"Exists","value":"v"})"),
                        "x.value"));
  EXPECT_TRUE(has_field(
      fields(check_toleration, R"({"key":"k","tolerationSeconds":5,"effect":"NoSchedule"})"),
      "x.effect"));
  EXPECT_TRUE(has_field(fields(check_toleration, R"({"key":"bad key"})"), "x.key"));
}

TEST(KubernetesObjects, ResourcesVolumesMounts) {
  EXPECT_TRUE(
      fields(check_resources, R"({"limits":{"cpu":"1","memory":"1Gi"},"requests":{"cpu":"500m"}})")
          .empty());
  EXPECT_TRUE(
      has_field(fields(check_resources, R"({"requests":{"cpu":"1.5 cores"}})"), "x.requests[cpu]"));
  EXPECT_TRUE(has_field(fields(check_resources, R"({"requests":{"memory":"-1Gi"}})"),
                        "x.requests[memory]"));
  EXPECT_TRUE(has_field(fields(check_resources, R"({"limits":{"cpu":"1"},"requests":{"cpu":"2"}})"),
                        "x.requests[cpu]"));
  EXPECT_TRUE(has_field(fields(check_resources, R"({"requests":{"gpu":"1"}})"), "x.requests[gpu]"));
  EXPECT_TRUE(fields(check_volume, R"({"name":"data","emptyDir":{}})").empty());
  EXPECT_TRUE(has_field(fields(check_volume, R"({"name":"Data","emptyDir":{}})"), "x.name"));
  EXPECT_TRUE(has_field(fields(check_volume, R"({"name":"data"})"), "x"));
  EXPECT_TRUE(has_field(
      fields(check_volume, R"({"name":"data","emptyDir":{},"secret":{"secretName":"s"}})"),
      "x.secret"));
  EXPECT_TRUE(
      has_field(fields(check_volume, R"({"name":"data","secret":{}})"), "x.secret.secretName"));
  Checker c("m");
  std::set<std::string, std::less<>> taken{"/var/lib/grafana-agent/config"};
  check_volume_mount(c,
                     json::parse(R"({"name":"nope","mountPath":"/var/lib/grafana-agent/config"})"),
                     {"data"}, taken);
  ASSERT_EQ(c.violations().size(), 2u);
  EXPECT_EQ(c.violations()[0].field, "m.name");
  EXPECT_EQ(c.violations()[1].field, "m.mountPath");
  Checker c2("m");
  check_volume_mount(c2, json::parse(R"({"name":"data","mountPath":"/d","subPath":"../etc"})"),
                     {"data"}, taken);
  ASSERT_EQ(c2.violations().size(), 1u);
  EXPECT_EQ(c2.violations()[0].field, "m.subPath");
}

TEST(KubernetesObjects, ContainersAffinityTopologyPvc) {
  Checker c("spec.containers[0]");
  check_container(
      c,
      json::parse(
          R"({"name":"Side_Car","ports":[{"containerPort":70000,"name":"http-metrics-too-long"}],
                                     "env":[{"name":"1X"}],"imagePullPolicy":"Sometimes"})"),
      true, {}, {});
  std::vector<std::string> f;
  for (const auto& v : c.violations()) f.push_back(v.field);
  EXPECT_EQ(f,
            (std::vector<std::string>{
                "spec.containers[0].name", "spec.containers[0].image",
                "spec.containers[0].imagePullPolicy", "spec.containers[0].ports[0].containerPort",
                "spec.containers[0].ports[0].name", "spec.containers[0].env[0].name"}));
  EXPECT_TRUE(has_field(
      fields(
          check_affinity,
          R"({"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"zone","operator":"Within","values":["a"]}]}]}}})"),
      "x.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]."
      "matchExpressions[0].operator"));
  EXPECT_TRUE(has_field(
      fields(
          check_affinity,
          R"({"podAntiAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":0,"podAffinityTerm":{"topologyKey":""}}]}})"),
      "x.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight"));
  EXPECT_TRUE(
      has_field(fields(check_topology_spread_constraint,
                       R"({"maxSkew":0,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule"})"),
                "x.maxSkew"));
  EXPECT_TRUE(
      fields(
          check_pvc_template,
          R"({"metadata":{"name":"wal"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"10Gi"}}}})")
          .empty());
  EXPECT_TRUE(has_field(
      fields(check_pvc_template, R"({"spec":{"resources":{"requests":{"storage":"0"}}}})"),
      "x.spec.resources.requests.storage"));
  EXPECT_TRUE(has_field(
      fields(
          check_pvc_template,
          R"({"spec":{"accessModes":["ReadWriteSometimes"],"resources":{"requests":{"storage":"1Gi"}}}})"),
      "x.spec.accessModes[0]"));
  EXPECT_TRUE(
      has_field(fields(check_pvc_template, R"({"spec":{}})"), "x.spec.resources.requests.storage"));
}

TEST(KubernetesObjects, MetadataMaps) {
  EXPECT_TRUE(has_field(fields(check_labels, R"({"app":"a b"})"), "x[app]"));
  EXPECT_TRUE(has_field(fields(check_labels, R"({"bad key!":"v"})"), "x[\"bad key!\"]"));
  std::string big = R"({"a":")" + std::string(300 * 1024, 'x') + R"("})";
  EXPECT_TRUE(has_field(fields(check_annotations, big), "x"));
  EXPECT_TRUE(fields(check_annotations, R"({"Team.Example.com/Owner":"any text: fine"})").empty());
}

}  // namespace aop::validation
