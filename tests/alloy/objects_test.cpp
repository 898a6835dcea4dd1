// The objects of an Alloy root: the worked example of the backend specification (its
// Service, StatefulSet and DaemonSets typed in from the specification), then what a user
// sets on the GrafanaAgent and would notice on the objects: replica groups and cluster
// members, config Secrets split over several objects, storage, container patches, the
// image, labels and the integrations workloads.
#include <algorithm>

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "k8s/base64.hpp"
#include "k8s/yaml.hpp"
#include "reconcile/agent/decode.hpp"
#include "reconcile/agent/objects.hpp"
#include "reconcile/alloy/objects.hpp"
#include "tests/alloy/support.hpp"

namespace aop::alloy {
namespace {

using boost::json::array;
using boost::json::object;
using boost::json::value;

agent::Options test_options() {
  agent::Options o;
  o.operator_version = "v1.2.3";
  return o;
}

agent::GrafanaAgent agent_of(std::string_view yaml) {
  auto doc = k8s::yaml::parse(std::string(yaml));
  EXPECT_TRUE(doc.has_value());
  auto a = agent::decode_grafana_agent(*doc);
  EXPECT_TRUE(a.has_value()) << (a ? "" : a.error().message);
  return a ? *a : agent::GrafanaAgent{};
}

constexpr std::string_view kAgentHead = R"(apiVersion: monitoring.grafana.com/v1alpha1
kind: GrafanaAgent
metadata: {name: a, namespace: ns, uid: U1}
)";

ConfigSecret secret_named(std::string name, std::string key = "main.alloy") {
  return ConfigSecret{std::move(name), {{std::move(key), "logging {}\n"}}};
}

ObjectsInput metrics_only() {
  ObjectsInput in;
  in.metrics = {secret_named("a-alloy-config")};
  in.image = std::string(kDefaultImage);
  return in;
}

const object& pod_spec(const object& workload) {
  return workload.at("spec").at("template").at("spec").as_object();
}
const object& container(const object& workload, std::string_view name) {
  for (const auto& c : pod_spec(workload).at("containers").as_array()) {
    if (c.at("name").as_string() == name) return c.as_object();
  }
  ADD_FAILURE() << "no container " << name;
  static const object none;
  return none;
}
std::vector<std::string> strings(const value& v) {
  std::vector<std::string> out;
  for (const auto& s : v.as_array()) out.emplace_back(s.as_string());
  return out;
}
std::vector<std::string> names(const value& list) {
  std::vector<std::string> out;
  for (const auto& e : list.as_array()) out.emplace_back(e.at("name").as_string());
  return out;
}
std::string name_of(const object& o) {
  return std::string(o.at("metadata").at("name").as_string());
}

TEST(AlloyObjects, WorkedExampleIsReproduced) {
  const auto roots = test::roots(test::read(test::worked_example() / "input.yaml"));
  ASSERT_EQ(roots.size(), 1U);
  const auto& h = roots[0].hierarchy;
  ObjectsInput in;
  in.metrics = {secret_named("agent-alloy-config")};
  in.logs = {secret_named("agent-alloy-logs-config")};
  in.integrations_ds = {secret_named("agent-alloy-integrations-ds-config")};
  for (const auto& i : h.integrations) in.ds_members.push_back(&i);
  in.image = alloy_image(h.agent, kDefaultImage);
  const AlloyObjects out = build_objects(h.agent, in, test_options());
  EXPECT_TRUE(out.problems.empty());

  auto expected = k8s::yaml::parse_all(test::read(test::worked_example() / "objects.yaml"));
  ASSERT_TRUE(expected.has_value()) << expected.error().message;
  ASSERT_EQ(expected->size(), 4U);
  ASSERT_EQ(out.groups.size(), 1U);
  ASSERT_TRUE(out.logs && out.daemon_set);
  EXPECT_FALSE(out.deployment);
  const std::vector<const object*> got = {&out.groups[0].service, &out.groups[0].stateful_set,
                                          &*out.logs, &*out.daemon_set};
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(value(*got[i]), (*expected)[i]) << "got:\n"
                                              << k8s::yaml::emit(value(*got[i])) << "expected:\n"
                                              << k8s::yaml::emit((*expected)[i]);
  }

  std::vector<std::string> order;
  for (const auto& o : out.in_apply_order()) {
    order.push_back(std::string(o.at("kind").as_string()) + " " + name_of(o));
  }
  EXPECT_EQ(order, (std::vector<std::string>{
                       "Secret agent-alloy-config", "Service agent-alloy-cluster",
                       "StatefulSet agent-alloy", "Secret agent-alloy-logs-config",
                       "DaemonSet agent-alloy-logs", "Secret agent-alloy-integrations-ds-config",
                       "DaemonSet agent-alloy-integrations-ds"}));
}

TEST(AlloyObjects, ShardsAreClusterMembersAndReplicasAreIndependentClusters) {
  const auto a = agent_of(std::string(kAgentHead) + "spec: {metrics: {shards: 3, replicas: 2}}\n");
  const AlloyObjects out = build_objects(a, metrics_only(), test_options());
  ASSERT_EQ(out.groups.size(), 2U);
  for (std::int64_t r = 0; r < 2; ++r) {
    const auto& sts = out.groups[r].stateful_set;
    const auto& svc = out.groups[r].service;
    const std::string n = r == 0 ? "a-alloy" : "a-alloy-replica-1";
    SCOPED_TRACE(n);
    EXPECT_EQ(name_of(sts), n);
    EXPECT_EQ(name_of(svc), n + "-cluster");
    EXPECT_EQ(sts.at("spec").at("replicas"), 3);  // one cluster of three members
    EXPECT_EQ(sts.at("spec").at("serviceName"), value(n + "-cluster"));
    EXPECT_EQ(sts.at("spec").at("podManagementPolicy"), "Parallel");
    const auto args = strings(container(sts, "alloy").at("args"));
    EXPECT_EQ(std::vector<std::string>(args.end() - 3, args.end()),
              (std::vector<std::string>{"--cluster.enabled=true",
                                        "--cluster.join-addresses=" + n + "-cluster",
                                        "--cluster.name=ns/a/" + std::to_string(r)}));
    // The replica label of the metrics configuration reads REPLICA_GROUP.
    const auto& env = container(sts, "alloy").at("env").as_array();
    EXPECT_EQ(env.back(), (object{{"name", "REPLICA_GROUP"}, {"value", std::to_string(r)}}));
    EXPECT_EQ(container(sts, "config-reloader").at("env"), container(sts, "alloy").at("env"));
    const auto& sel = sts.at("spec").at("selector").at("matchLabels");
    EXPECT_EQ(sel.at(kReplicaGroupLabel), value(std::to_string(r)));
    // Peers find each other through the Service before they are ready.
    EXPECT_EQ(svc.at("spec").at("selector"), sel);
    EXPECT_EQ(svc.at("spec").at("clusterIP"), "None");
    EXPECT_EQ(svc.at("spec").at("publishNotReadyAddresses"), true);
    EXPECT_EQ(sts.at("spec").at("template").at("metadata").at("labels").at(kReplicaGroupLabel),
              value(std::to_string(r)));
  }
}

TEST(AlloyObjects, ReplicaCountsBelowOneGiveOneGroupScaledToZeroAndShardsDefaultToOne) {
  for (const char* replicas : {"0", "-2"}) {
    const auto a =
        agent_of(std::string(kAgentHead) + "spec: {metrics: {replicas: " + replicas + "}}\n");
    const AlloyObjects out = build_objects(a, metrics_only(), test_options());
    ASSERT_EQ(out.groups.size(), 1U) << replicas;
    EXPECT_EQ(out.groups[0].stateful_set.at("spec").at("replicas"), 0) << replicas;
  }
  const auto a = agent_of(std::string(kAgentHead) + "spec: {metrics: {shards: 0}}\n");
  const AlloyObjects out = build_objects(a, metrics_only(), test_options());
  ASSERT_EQ(out.groups.size(), 1U);
  EXPECT_EQ(out.groups[0].stateful_set.at("spec").at("replicas"), 1);
}

TEST(AlloyObjects, NoMetricsConfigMeansNoStatefulSet) {
  const auto a = agent_of(std::string(kAgentHead) + "spec: {metrics: {shards: 3}}\n");
  ObjectsInput in;
  in.logs = {secret_named("a-alloy-logs-config")};
  const AlloyObjects out = build_objects(a, in, test_options());
  EXPECT_TRUE(out.groups.empty());
  EXPECT_TRUE(out.metrics_secrets.empty());
  ASSERT_TRUE(out.logs);
  EXPECT_FALSE(out.deployment || out.daemon_set);
}

TEST(AlloyObjects, ConfigSecretsHoldTheFilesVerbatimAndAreAllProjectedIntoEtcAlloy) {
  const auto a = agent_of(std::string(kAgentHead) + "spec: {}\n");
  ObjectsInput in = metrics_only();
  in.metrics = {
      ConfigSecret{"a-alloy-config",
                   {{"main.alloy", "logging {}\n"}, {"mi_x.alloy", "// \"quoted\" ${HOME}\n"}}},
      ConfigSecret{"a-alloy-config-1", {{"scrape_y.alloy", "x"}}}};
  agent::Options options = test_options();
  options.operator_labels = {{"team", "obs"}};
  const AlloyObjects out = build_objects(a, in, options);
  ASSERT_EQ(out.metrics_secrets.size(), 2U);
  const auto& s0 = out.metrics_secrets[0];
  EXPECT_EQ(name_of(s0), "a-alloy-config");
  EXPECT_EQ(s0.if_contains("type"), nullptr);
  EXPECT_EQ(k8s::base64_decode(s0.at("data").at("mi_x.alloy").as_string()).value(),
            "// \"quoted\" ${HOME}\n");
  const auto& md = s0.at("metadata");
  // The operator's -labels are merged in, as on every other generated object.
  EXPECT_EQ(md.at("labels"), (object{{"app.kubernetes.io/managed-by", "grafana-agent-operator"},
                                     {"operator.agent.grafana.com/name", "a"},
                                     {std::string(kBackendLabel), "alloy"},
                                     {"team", "obs"}}));
  EXPECT_EQ(md.at("ownerReferences").at(0).as_object().if_contains("controller"), nullptr);
  EXPECT_EQ(name_of(out.metrics_secrets[1]), "a-alloy-config-1");

  const auto& vols = pod_spec(out.groups[0].stateful_set).at("volumes").as_array();
  EXPECT_EQ(
      vols.at(0),
      (object{
          {"name", "config"},
          {"projected",
           object{{"sources", array{object{{"secret", object{{"name", "a-alloy-config"}}}},
                                    object{{"secret", object{{"name", "a-alloy-config-1"}}}}}}}}}));
  EXPECT_EQ(out.groups[0].stateful_set.at("spec").at("selector").at("matchLabels").at("team"),
            "obs");
}

TEST(AlloyObjects, StorageGivesTheDataVolumeAsForStaticWAL) {
  const auto claim = agent_of(std::string(kAgentHead) + R"(spec:
  storage:
    volumeClaimTemplate:
      metadata: {name: wal, labels: {x: z}}
      spec: {resources: {requests: {storage: 1Gi}}}
)");
  const auto sts = build_objects(claim, metrics_only(), test_options()).groups.at(0).stateful_set;
  EXPECT_EQ(names(pod_spec(sts).at("volumes")), (std::vector<std::string>{"config", "secrets"}));
  EXPECT_EQ(container(sts, "alloy").at("volumeMounts").at(2),
            (object{{"name", "wal"}, {"mountPath", "/var/lib/alloy/data"}}));
  const auto& tpl = sts.at("spec").at("volumeClaimTemplates").at(0);
  EXPECT_EQ(tpl.at("metadata"), (object{{"name", "wal"}, {"labels", object{{"x", "z"}}}}));
  EXPECT_EQ(tpl.at("spec").at("accessModes"), (array{"ReadWriteOnce"}));

  const auto unnamed =
      agent_of(std::string(kAgentHead) + "spec: {storage: {volumeClaimTemplate: {spec: {}}}}\n");
  const auto sts2 =
      build_objects(unnamed, metrics_only(), test_options()).groups.at(0).stateful_set;
  EXPECT_EQ(sts2.at("spec").at("volumeClaimTemplates").at(0).at("metadata").at("name"),
            "a-alloy-data");

  const auto empty_dir =
      agent_of(std::string(kAgentHead) + "spec: {storage: {emptyDir: {medium: Memory}}}\n");
  const auto sts3 =
      build_objects(empty_dir, metrics_only(), test_options()).groups.at(0).stateful_set;
  EXPECT_EQ(pod_spec(sts3).at("volumes").at(2),
            (object{{"name", "a-alloy-data"}, {"emptyDir", object{{"medium", "Memory"}}}}));
  EXPECT_EQ(sts3.at("spec").as_object().if_contains("volumeClaimTemplates"), nullptr);
}

TEST(AlloyObjects, ContainerPatchesForTheAgentApplyToAlloyWithoutItsFlags) {
  const auto a = agent_of(std::string(kAgentHead) + R"(spec:
  containers:
    - name: grafana-agent
      args: [-config.file=/x]
      env: [{name: EXTRA, value: "1"}]
      resources: {limits: {memory: 1Gi}}
    - name: config-reloader
      image: my/reloader
      resources: {limits: {cpu: 100m}}
    - name: sidecar
      image: busybox
)");
  const AlloyObjects out = build_objects(a, metrics_only(), test_options());
  const auto& sts = out.groups.at(0).stateful_set;
  EXPECT_EQ(names(pod_spec(sts).at("containers")),
            (std::vector<std::string>{"config-reloader", "alloy", "sidecar"}));
  const auto& alloy = container(sts, "alloy");
  EXPECT_EQ(strings(alloy.at("args")).at(0), "run");
  const auto& env = alloy.at("env").as_array();
  EXPECT_NE(std::find(env.begin(), env.end(), value(object{{"name", "EXTRA"}, {"value", "1"}})),
            env.end());
  EXPECT_EQ(env.size(), 4U);
  EXPECT_EQ(alloy.at("resources").at("limits").at("memory"), "1Gi");
  const auto& reloader = container(sts, "config-reloader");
  EXPECT_EQ(reloader.at("image"), "quay.io/prometheus-operator/prometheus-config-reloader:v0.67.1");
  EXPECT_EQ(reloader.at("resources").at("limits").at("cpu"), "100m");

  EXPECT_EQ(test::problems_text(out.problems),
            "C GrafanaAgent ns/a spec.containers[0].args: holds a setting of the Grafana Agent's "
            "grafana-agent container (not applied to the Alloy pods)\n"
            "C GrafanaAgent ns/a spec.containers[1].image: holds a setting of the Grafana Agent's "
            "config-reloader container (not applied to the Alloy pods)\n");
}

TEST(AlloyObjects, ImageComesFromTheAnnotationOrTheFlagNeverFromSpecImage) {
  const auto a = agent_of(R"(apiVersion: monitoring.grafana.com/v1alpha1
kind: GrafanaAgent
metadata:
  name: a
  namespace: ns
  uid: U1
  annotations: {operator.agent.grafana.com/alloy-image: "mirror/alloy:v1.18.1",
                kubectl.kubernetes.io/last-applied-configuration: "{}"}
spec: {image: grafana/agent:v0.44.8, version: v0.44.8, enableConfigReadAPI: true,
       disableReporting: true, disableSupportBundle: true}
)");
  EXPECT_EQ(alloy_image(a, "flag/alloy:1"), "mirror/alloy:v1.18.1");
  EXPECT_EQ(alloy_image(agent_of(std::string(kAgentHead) + "spec: {}\n"), "flag/alloy:1"),
            "flag/alloy:1");
  ObjectsInput in = metrics_only();
  in.image = alloy_image(a, "flag/alloy:1");
  const AlloyObjects out = build_objects(a, in, test_options());
  const auto& sts = out.groups.at(0).stateful_set;
  EXPECT_EQ(container(sts, "alloy").at("image"), "mirror/alloy:v1.18.1");
  const auto args = strings(container(sts, "alloy").at("args"));
  EXPECT_EQ(
      std::vector<std::string>(args.end() - 2, args.end()),
      (std::vector<std::string>{"--disable-reporting", "--server.http.disable-support-bundle"}));
  // kubectl.kubernetes.io/* annotations of the root stay off the workload.
  EXPECT_EQ(sts.at("metadata").at("annotations"),
            (object{{std::string(kImageAnnotation), "mirror/alloy:v1.18.1"}}));
  std::vector<std::string> fields;
  for (const auto& p : out.problems) {
    EXPECT_EQ(p.cls, ProblemClass::c);
    fields.push_back(p.field);
  }
  EXPECT_EQ(fields,
            (std::vector<std::string>{"spec.image", "spec.version", "spec.enableConfigReadAPI"}));
}

TEST(AlloyObjects, PodMetadataAndUserVolumesAreKept) {
  const auto a = agent_of(std::string(kAgentHead) + R"(spec:
  podMetadata: {labels: {team: obs, app.kubernetes.io/name: nope}, annotations: {a: b}}
  volumes: [{name: extra, emptyDir: {}}]
  volumeMounts: [{name: extra, mountPath: /extra}]
  secrets: [tls-certs]
  configMaps: [rules]
  nodeSelector: {disk: ssd}
  tolerations: [{operator: Exists}]
)");
  const auto sts = build_objects(a, metrics_only(), test_options()).groups.at(0).stateful_set;
  const auto& tmeta = sts.at("spec").at("template").at("metadata");
  EXPECT_EQ(tmeta.at("labels").at("team"), "obs");
  // The selector label wins over podMetadata: the pods stay out of static selectors.
  EXPECT_EQ(tmeta.at("labels").at("app.kubernetes.io/name"), "alloy");
  EXPECT_EQ(tmeta.at("annotations"),
            (object{{"a", "b"}, {"kubectl.kubernetes.io/default-container", "alloy"}}));
  EXPECT_EQ(names(pod_spec(sts).at("volumes")),
            (std::vector<std::string>{"config", "secrets", "a-alloy-data", "extra",
                                      "secret-tls-certs", "configmap-rules"}));
  EXPECT_EQ(container(sts, "alloy").at("volumeMounts").at(4),
            (object{{"name", "secret-tls-certs"},
                    {"mountPath", "/var/lib/grafana-agent/extra-secrets/tls-certs"},
                    {"readOnly", true}}));
  EXPECT_EQ(pod_spec(sts).at("nodeSelector"), (object{{"disk", "ssd"}}));
  EXPECT_EQ(pod_spec(sts).at("terminationGracePeriodSeconds"), 4800);
}

TEST(AlloyObjects, IntegrationsWorkloadsMountTheirVolumesAndFilesAndADataDirectory) {
  const auto a = agent_of(std::string(kAgentHead) + "spec: {}\n");
  auto integration = [](std::string_view yaml) {
    auto doc = k8s::yaml::parse(std::string(yaml));
    auto in = agent::decode_integration(*doc);
    EXPECT_TRUE(in.has_value());
    return *in;
  };
  const auto redis = integration(R"(apiVersion: monitoring.grafana.com/v1alpha1
kind: Integration
metadata: {name: redis, namespace: apps}
spec:
  name: redis_exporter
  config: {}
  secrets: [{name: redis-pw, key: password}]
  volumes: [{name: scratch, emptyDir: {}}]
  volumeMounts: [{name: scratch, mountPath: /var/lib/alloy/data}]
)");
  ObjectsInput in;
  in.integrations_deploy = {secret_named("a-alloy-integrations-deploy-config")};
  in.integrations_ds = {secret_named("a-alloy-integrations-ds-config")};
  in.deploy_members = {&redis};
  in.image = "img";
  for (auto compat : {agent::Compat::upstream, agent::Compat::fixed}) {
    agent::Options options = test_options();
    options.compat = compat;
    const AlloyObjects out = build_objects(a, in, options);
    ASSERT_TRUE(out.deployment && out.daemon_set);
    const auto& d = *out.deployment;
    EXPECT_EQ(name_of(d), "a-alloy-integrations-deploy");
    EXPECT_EQ(d.at("spec").at("strategy").at("type"), "RollingUpdate");
    EXPECT_EQ(d.at("spec").as_object().if_contains("replicas"), nullptr);
    EXPECT_EQ(d.at("spec").at("selector").at("matchLabels").at(agent::kTypeLabel),
              "integrations-deploy");
    // The Integration's mount took /var/lib/alloy/data first: the data volume is skipped.
    EXPECT_EQ(names(pod_spec(d).at("volumes")),
              (std::vector<std::string>{"config", "secrets", "apps-redis-scratch",
                                        "a-integrations-secrets"}));
    EXPECT_EQ(pod_spec(d).at("volumes").at(3).at("secret"),
              (object{{"secretName", "a-secrets"},
                      {"items", array{object{{"key", "_secrets_apps_redis_pw_password"},
                                             {"path", "secrets/apps/redis-pw/password"}}}}}));
    EXPECT_EQ(container(d, "alloy").at("securityContext").at("privileged"), false);
    EXPECT_EQ(
        container(d, "alloy").at("env").as_array().back(),
        (object{{"name", "HOSTNAME"},
                {"valueFrom", object{{"fieldRef", object{{"fieldPath", "spec.nodeName"}}}}}}));

    const auto& ds = *out.daemon_set;
    EXPECT_EQ(names(pod_spec(ds).at("volumes")),
              (std::vector<std::string>{"config", "secrets", "a-alloy-integrations-ds-data"}));
    // As the static backend's integration pods under the same compat mode.
    EXPECT_EQ(container(ds, "alloy").at("securityContext").at("privileged"),
              compat == agent::Compat::fixed);
  }
}

}  // namespace
}  // namespace aop::alloy
