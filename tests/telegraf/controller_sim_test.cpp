// The telegraf controller end to end against the test cluster (kube-sim, and the real
// kube-apiserver in the integration-real run):
//   * annotating a Namespace creates the ConfigMap, the token Secret and the Deployment;
//   * editing the annotation changes the ConfigMap and the pod-template hash;
//   * the same endpoints re-applied make no write;
//   * an invalid annotation is a Warning Event and leaves the Deployment untouched;
//   * a rotated token rolls the pods, without the token appearing anywhere but the Secret;
//   * an annotated Application pointing at the namespace merges its endpoints, a
//     conflicting one is reported on both sources, moving its destination moves them;
//   * removing every annotation removes everything;
//   * the Application CRD installed after start-up is picked up without a restart.
#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "k8s/base64.hpp"
#include "reconcile/telegraf/objects.hpp"
#include "tests/telegraf/sim_harness.hpp"

namespace aop::telegraf::testing {
namespace {

using namespace std::chrono_literals;

constexpr const char* kToken = "first-token-Zm9vYmFy";
constexpr const char* kRotatedToken = "second-token-YmFyYmF6";

std::string token_secret_yaml(const std::string& token) {
  return "apiVersion: v1\nkind: Secret\nmetadata:\n  name: influxdb-token\n  namespace: operator\n"
         "data:\n  token: " +
         k8s::base64_encode(token) + "\n";
}

json::object application(const std::string& name, const std::string& destination,
                         const std::string& annotation) {
  return json::object{
      {"apiVersion", "argoproj.io/v1alpha1"},
      {"kind", "Application"},
      {"metadata",
       json::object{{"name", name},
                    {"namespace", "argocd"},
                    {"annotations", json::object{{TelegrafOptions{}.annotation_key, annotation}}}}},
      {"spec",
       json::object{{"destination", json::object{{"namespace", destination},
                                                 {"server", "https://kubernetes.default.svc"}}},
                    {"project", "default"}}},
  };
}

constexpr std::string_view kApplications =
    "/apis/argoproj.io/v1alpha1/namespaces/argocd/applications";

std::string applications_path(std::string_view name = {}) {
  std::string path(kApplications);
  if (!name.empty()) path += "/" + std::string(name);
  return path;
}

TEST(TelegrafSimTest, NamespaceAnnotationDrivesTelegrafAndAnUnchangedAnnotationWritesNothing) {
  HarnessOptions ho;
  ho.objects =
      "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: app-a\n"
      "---\napiVersion: v1\nkind: Namespace\nmetadata:\n"
      "  name: operator\n---\n" +
      token_secret_yaml(kToken);
  ho.options.token_secret = SecretKeyRef{"operator", "influxdb-token", "token"};
  Harness h(std::move(ho));
  h.start();
  const std::string ns_uid(h.get("/api/v1/namespaces/app-a").at("metadata").at("uid").as_string());

  // 1. Annotate the Namespace: ConfigMap, Secret and Deployment appear.
  h.annotate_namespace("app-a", "- web: \"http://web.app-a.svc:8080/metrics\"\n");
  ASSERT_TRUE(tst::wait_until([&] {
    return !h.config_map("app-a").is_null() && !h.secret("app-a").is_null() &&
           !h.deployment("app-a").is_null();
  })) << "the telegraf objects did not appear";
  ASSERT_TRUE(h.settle());
  std::string conf = h.config("app-a");
  EXPECT_NE(conf.find("name_override = \"prometheus_web\""), std::string::npos) << conf;
  EXPECT_NE(conf.find("bucket = \"app_a\""), std::string::npos) << conf;
  EXPECT_NE(conf.find("token = \"${INFLUX_TOKEN}\""), std::string::npos) << conf;
  EXPECT_EQ(conf.find(kToken), std::string::npos) << "the token leaked into the ConfigMap";
  EXPECT_EQ(h.secret("app-a").at("data").at("token").as_string(), k8s::base64_encode(kToken));
  json::value dep = h.deployment("app-a");
  EXPECT_EQ(Harness::annotation(dep, kSourcesAnnotation), "Namespace/app-a");
  const auto& owners = dep.at("metadata").at("ownerReferences").as_array();
  ASSERT_EQ(owners.size(), 1u);
  EXPECT_EQ(owners[0].at("kind").as_string(), "Namespace");
  EXPECT_EQ(owners[0].at("uid").as_string(), ns_uid);
  std::string config_hash = Harness::pod_annotation(dep, kConfigHashAnnotation);
  EXPECT_EQ(config_hash, sha256_hex(conf));
  const std::string token_hash = Harness::pod_annotation(dep, kTokenHashAnnotation);
  EXPECT_EQ(token_hash.size(), 16u);
  EXPECT_EQ(json::serialize(dep).find(kToken), std::string::npos);
  EXPECT_EQ(h.module->stats().managed_namespaces, 1u);
  EXPECT_EQ(h.module->stats().endpoints, 1u);
  EXPECT_EQ(h.controller_writes(), 3u) << "one create per object, nothing else";

  // 2. Edit the annotation: the ConfigMap changes, and so does the pod-template hash.
  const std::string two_endpoints =
      "- web: \"http://web.app-a.svc:8080/metrics\"\n"
      "- api: {url: \"http://api.app-a.svc:9090/metrics\", interval: 30s}\n";
  h.annotate_namespace("app-a", json::string(two_endpoints));
  ASSERT_TRUE(tst::wait_until([&] {
    return h.config("app-a").find("prometheus_api") != std::string::npos &&
           Harness::pod_annotation(h.deployment("app-a"), kConfigHashAnnotation) != config_hash;
  })) << h.config("app-a");
  ASSERT_TRUE(h.settle());
  conf = h.config("app-a");
  dep = h.deployment("app-a");
  EXPECT_EQ(Harness::pod_annotation(dep, kConfigHashAnnotation), sha256_hex(conf));
  EXPECT_NE(conf.find("interval = \"30s\""), std::string::npos) << conf;
  config_hash = Harness::pod_annotation(dep, kConfigHashAnnotation);
  EXPECT_EQ(h.module->stats().endpoints, 2u);

  // 3. The same endpoints re-applied (as GitOps does, here with a comment and other
  //    spacing, so the annotation text differs and the controller reconciles): no write.
  {
    const auto writes = h.controller_writes();
    const auto reconciles = h.module->reconciles("app-a");
    h.annotate_namespace("app-a",
                         "# re-applied\n"
                         "- web:   \"http://web.app-a.svc:8080/metrics\"\n"
                         "- api: {url: \"http://api.app-a.svc:9090/metrics\", interval: 30s}\n");
    ASSERT_TRUE(tst::wait_until([&] { return h.module->reconciles("app-a") > reconciles; }));
    ASSERT_TRUE(h.settle());
    EXPECT_EQ(h.controller_writes(), writes) << "an unchanged configuration was written";
    // And a resync with nothing changed: no write either.
    const auto again = h.module->reconciles("app-a");
    h.module->resync_now();
    ASSERT_TRUE(tst::wait_until([&] { return h.module->reconciles("app-a") > again; }));
    ASSERT_TRUE(h.settle());
    EXPECT_EQ(h.controller_writes(), writes) << "a resync with nothing changed wrote";
  }

  // 4. An invalid annotation: a Warning Event on the Namespace, the Deployment untouched.
  {
    const auto writes = h.controller_writes();
    const auto dep_rv = Harness::resource_version(h.deployment("app-a"));
    const auto cm_rv = Harness::resource_version(h.config_map("app-a"));
    h.annotate_namespace("app-a", "- web: \"ftp://web.app-a.svc/metrics\"\n");
    ASSERT_TRUE(tst::wait_until([&] {
      return !h.server_events("Namespace", "app-a", "InvalidAnnotation").empty();
    })) << "no InvalidAnnotation Event";
    ASSERT_TRUE(h.settle());
    const auto events = h.server_events("Namespace", "app-a", "InvalidAnnotation");
    ASSERT_EQ(events.size(), 1u);
    const std::string message(events[0].at("message").as_string());
    EXPECT_NE(message.find("Namespace/app-a"), std::string::npos) << message;
    EXPECT_NE(message.find("ftp"), std::string::npos) << message;
    EXPECT_NE(message.find("keeps its last good configuration"), std::string::npos) << message;
    EXPECT_EQ(Harness::resource_version(h.deployment("app-a")), dep_rv);
    EXPECT_EQ(Harness::resource_version(h.config_map("app-a")), cm_rv);
    EXPECT_EQ(h.controller_writes(), writes);
    EXPECT_EQ(h.module->stats().invalid_sources, 1u);
    EXPECT_EQ(h.module->stats().managed_namespaces, 1u) << "the last good telegraf still runs";

    // A resync does not repeat the Event (it would be a write per resync).
    const auto reconciles = h.module->reconciles("app-a");
    h.module->resync_now();
    ASSERT_TRUE(tst::wait_until([&] { return h.module->reconciles("app-a") > reconciles; }));
    ASSERT_TRUE(h.settle());
    EXPECT_EQ(h.events->recorded().size(), 1u);

    // Fixed back to the deployed endpoints: nothing to write, the problem is gone.
    h.annotate_namespace("app-a", json::string(two_endpoints));
    ASSERT_TRUE(tst::wait_until([&] { return h.module->stats().invalid_sources == 0; }));
    ASSERT_TRUE(h.settle());
    EXPECT_EQ(h.controller_writes(), writes);
  }

  // 5. A rotated token: the Secret copy changes and the pods roll (token hash), the
  //    configuration hash does not.
  {
    h.merge_patch(
        "/api/v1/namespaces/operator/secrets/influxdb-token",
        json::object{{"data", json::object{{"token", k8s::base64_encode(kRotatedToken)}}}});
    ASSERT_TRUE(tst::wait_until([&] {
      const auto s = h.secret("app-a");
      return !s.is_null() &&
             s.at("data").at("token").as_string() == k8s::base64_encode(kRotatedToken) &&
             Harness::pod_annotation(h.deployment("app-a"), kTokenHashAnnotation) != token_hash;
    })) << "the rotated token did not reach the namespace";
    ASSERT_TRUE(h.settle());
    dep = h.deployment("app-a");
    EXPECT_EQ(Harness::pod_annotation(dep, kConfigHashAnnotation), config_hash);
    EXPECT_EQ(json::serialize(dep).find(kRotatedToken), std::string::npos);
    EXPECT_EQ(h.config("app-a").find(kRotatedToken), std::string::npos);
  }

  // 6. Deleted by hand: recreated.
  h.send("DELETE", "/api/v1/namespaces/app-a/configmaps/rubin-telegraf", json::object{}, 200);
  ASSERT_TRUE(tst::wait_until([&] { return !h.config_map("app-a").is_null(); }))
      << "a hand-deleted ConfigMap was not recreated";

  // 7. The annotation removed: everything the controller created goes, although the
  //    Namespace (their owner) stays.
  h.annotate_namespace("app-a", nullptr);
  ASSERT_TRUE(tst::wait_until([&] {
    return h.config_map("app-a").is_null() && h.secret("app-a").is_null() &&
           h.deployment("app-a").is_null();
  })) << "the telegraf objects were not removed";
  ASSERT_TRUE(h.settle());
  EXPECT_EQ(h.module->stats().managed_namespaces, 0u);
  EXPECT_EQ(h.module->stats().endpoints, 0u);

  // Nothing the controller logged or wrote carries the token: the metrics neither.
  const std::string metrics = h.registry.expose();
  EXPECT_EQ(metrics.find(kToken), std::string::npos);
  EXPECT_NE(metrics.find("agent_operator_telegraf_managed_namespaces{controller=\"telegraf\"} 0"),
            std::string::npos)
      << metrics;
}

TEST(TelegrafSimTest, ApplicationsMergeMoveAndAreFoundWhenTheCrdArrivesAfterStartUp) {
  HarnessOptions ho;
  ho.objects = R"(apiVersion: v1
kind: Namespace
metadata:
  name: app-b
---
apiVersion: v1
kind: Namespace
metadata:
  name: other
---
apiVersion: v1
kind: Namespace
metadata:
  name: argocd
)";
  ho.settings.application_discovery_period = 100ms;  // the default is 30 s
  Harness h(std::move(ho));
  h.start();
  EXPECT_FALSE(h.module->watching_applications()) << "kube-sim serves no Application CRD yet";

  // A Namespace source alone, while Applications cannot exist.
  h.annotate_namespace("app-b", "web: \"http://web.app-b.svc/metrics\"\n");
  ASSERT_TRUE(tst::wait_until([&] { return !h.deployment("app-b").is_null(); }));
  EXPECT_TRUE(h.secret("app-b").is_null()) << "no token Secret is configured";

  // The CRD is installed: the controller starts watching Applications, no restart.
  h.install_application_crd();
  ASSERT_TRUE(tst::wait_until([&] {
    return h.module->watching_applications() && h.module->not_ready_reason().empty();
  })) << "the Application CRD was not picked up: "
      << h.module->not_ready_reason();

  // An Application whose destination is app-b: its endpoints are merged in.
  h.send("POST", applications_path(),
         application("app-b", "app-b", "- repo: \"http://repo.argocd.svc:8084/metrics\"\n"), 201);
  ASSERT_TRUE(tst::wait_until([&] {
    const auto conf = h.config("app-b");
    return conf.find("prometheus_web") != std::string::npos &&
           conf.find("prometheus_repo") != std::string::npos;
  })) << h.config("app-b");
  ASSERT_TRUE(h.settle());
  EXPECT_EQ(Harness::annotation(h.deployment("app-b"), kSourcesAnnotation),
            "Namespace/app-b,Application/argocd/app-b");
  EXPECT_EQ(h.module->stats().endpoints, 2u);

  // A second Application defining `web` differently: a conflict, reported on both
  // sources, `web` left out, the rest still deployed.
  h.send("POST", applications_path(),
         application("rogue", "app-b", "web: \"http://elsewhere.example/metrics\"\n"), 201);
  ASSERT_TRUE(tst::wait_until([&] {
    return !h.server_events("Namespace", "app-b", "EndpointConflict").empty() &&
           !h.server_events("Application", "rogue", "EndpointConflict").empty();
  })) << "the conflict was not reported on both sources";
  ASSERT_TRUE(tst::wait_until(
      [&] { return h.config("app-b").find("prometheus_web") == std::string::npos; }));
  EXPECT_NE(h.config("app-b").find("prometheus_repo"), std::string::npos);
  h.send("DELETE", applications_path("rogue"), json::object{}, 200);
  ASSERT_TRUE(tst::wait_until([&] {
    return h.config("app-b").find("prometheus_web") != std::string::npos;
  })) << "the endpoint did not come back once the conflict was gone";

  // The Application moves to `other`: its endpoints leave app-b and feed `other`, which
  // it alone feeds (so its objects carry no ownerReference).
  h.merge_patch(
      applications_path("app-b"),
      json::object{{"spec", json::object{{"destination", json::object{{"namespace", "other"}}}}}});
  ASSERT_TRUE(tst::wait_until([&] {
    return h.config("other").find("prometheus_repo") != std::string::npos &&
           h.config("app-b").find("prometheus_repo") == std::string::npos;
  })) << "app-b: "
      << h.config("app-b") << "\nother: " << h.config("other");
  ASSERT_TRUE(h.settle());
  const auto other = h.deployment("other");
  EXPECT_EQ(Harness::annotation(other, kSourcesAnnotation), "Application/argocd/app-b");
  EXPECT_EQ(other.at("metadata").as_object().if_contains("ownerReferences"), nullptr);
  EXPECT_NE(h.config("other").find("application = \"app-b\""), std::string::npos);
  EXPECT_EQ(Harness::annotation(h.deployment("app-b"), kSourcesAnnotation), "Namespace/app-b");
  EXPECT_EQ(h.module->stats().managed_namespaces, 2u);

  // Every annotation removed: everything removed, by ownerless clean-up too.
  h.annotate_namespace("app-b", nullptr);
  h.merge_patch(
      applications_path("app-b"),
      json::object{
          {"metadata", json::object{{"annotations",
                                     json::object{{TelegrafOptions{}.annotation_key, nullptr}}}}}});
  ASSERT_TRUE(tst::wait_until([&] {
    return h.deployment("app-b").is_null() && h.config_map("app-b").is_null() &&
           h.deployment("other").is_null() && h.config_map("other").is_null();
  })) << "the telegraf objects were not all removed";
  ASSERT_TRUE(h.settle());
  EXPECT_EQ(h.module->stats().managed_namespaces, 0u);
}

TEST(TelegrafSimTest, ApplicationsWithoutDestinationAreReportedBeforeAndAfterTheStart) {
  HarnessOptions ho;
  ho.objects = R"(apiVersion: v1
kind: Namespace
metadata:
  name: argocd
)";
  ho.settings.application_discovery_period = 100ms;
  Harness h(std::move(ho));
  h.install_application_crd();
  h.send("POST", applications_path(), application("early", "", "- web: \"http://web/metrics\"\n"),
         201);
  // Caches (Applications included) filled before reconciling starts: the Application's
  // event came while no Event could be written, so the start reports it.
  h.factory->start();
  ASSERT_TRUE(tst::wait_until(
      [&] { return h.module->watching_applications() && h.module->not_ready_reason().empty(); }));
  h.module->start_reconciling();
  ASSERT_TRUE(tst::wait_until(
      [&] { return !h.server_events("Application", "early", "MissingDestination").empty(); }));

  // And one created while running, from its event.
  h.send("POST", applications_path(), application("late", "", "- web: \"http://web/metrics\"\n"),
         201);
  ASSERT_TRUE(tst::wait_until(
      [&] { return !h.server_events("Application", "late", "MissingDestination").empty(); }));
  ASSERT_TRUE(h.settle());
  EXPECT_EQ(h.module->stats().invalid_sources, 2u);
  EXPECT_EQ(h.controller_writes(), 0u);
}

TEST(TelegrafSimTest, ARestartedControllerWritesNothingAndCleansUpWhatChangedWhileItWasDown) {
  HarnessOptions ho;
  ho.objects = R"(apiVersion: v1
kind: Namespace
metadata:
  name: keep
  annotations:
    telegraf.influxdata.com/rubin-telegraf-operator: "- web: http://web.keep.svc/metrics"
---
apiVersion: v1
kind: Namespace
metadata:
  name: drop
  annotations:
    telegraf.influxdata.com/rubin-telegraf-operator: "- web: http://web.drop.svc/metrics"
)";
  Harness h(std::move(ho));
  h.start();
  ASSERT_TRUE(tst::wait_until(
      [&] { return !h.deployment("keep").is_null() && !h.deployment("drop").is_null(); }));
  ASSERT_TRUE(h.settle());
  const auto writes = h.controller_writes();
  EXPECT_EQ(writes, 4u);
  const auto keep_rv = Harness::resource_version(h.deployment("keep"));

  // Down; meanwhile the annotation of `drop` is removed. Up again: `keep` is taken as it
  // is (no write although the new process remembers nothing), `drop` is cleaned up.
  h.shut_down();
  h.annotate_namespace("drop", nullptr);
  h.make_module();
  h.start();
  ASSERT_TRUE(tst::wait_until([&] {
    return h.deployment("drop").is_null() && h.config_map("drop").is_null();
  })) << "what lost its source while the controller was down was not removed";
  ASSERT_TRUE(tst::wait_until([&] { return h.module->reconciles("keep") > 0; }));
  ASSERT_TRUE(h.settle());
  EXPECT_EQ(h.controller_writes(), writes + 2)
      << "only the two deletions: " << h.controller_write_log();
  EXPECT_EQ(Harness::resource_version(h.deployment("keep")), keep_rv);
  EXPECT_EQ(h.module->stats().managed_namespaces, 1u);
}

TEST(TelegrafSimTest, NothingIsWrittenUntilTheTokenSecretExistsAndReconcilingCanPauseAndResume) {
  HarnessOptions ho;
  ho.objects = R"(apiVersion: v1
kind: Namespace
metadata:
  name: app-c
---
apiVersion: v1
kind: Namespace
metadata:
  name: operator
)";
  ho.options.token_secret = SecretKeyRef{"operator", "influxdb-token", "token"};
  Harness h(std::move(ho));
  h.start();

  // No token Secret: the reconcile ends in an error and writes nothing.
  h.annotate_namespace("app-c", "- web: \"http://web.app-c.svc/metrics\"\n");
  ASSERT_TRUE(tst::wait_until([&] { return h.module->reconciles("app-c") > 0; }));
  ASSERT_TRUE(h.settle());
  EXPECT_EQ(h.controller_writes(), 0u);
  EXPECT_TRUE(h.deployment("app-c").is_null());

  // The Secret appears: every target is reconciled again (no resync needed).
  h.send("POST", "/api/v1/namespaces/operator/secrets",
         json::object{{"apiVersion", "v1"},
                      {"kind", "Secret"},
                      {"metadata", json::object{{"name", "influxdb-token"}}},
                      {"data", json::object{{"token", k8s::base64_encode(kToken)}}}},
         201);
  ASSERT_TRUE(tst::wait_until([&] { return !h.deployment("app-c").is_null(); }))
      << "the token Secret's arrival did not bring the target back";
  EXPECT_EQ(h.secret("app-c").at("data").at("token").as_string(), k8s::base64_encode(kToken));

  // Leadership lost and regained: what changed meanwhile is applied on resumption.
  ASSERT_TRUE(h.settle());
  h.module->stop_reconciling();
  h.annotate_namespace("app-c",
                       "- web: \"http://web.app-c.svc/metrics\"\n"
                       "- db: \"http://db.app-c.svc/metrics\"\n");
  h.module->start_reconciling();
  ASSERT_TRUE(tst::wait_until(
      [&] { return h.config("app-c").find("prometheus_db") != std::string::npos; }));
}

// A ConfigMap of telegraf's name that the controller did not create (no managed-by label)
// is not taken over: it stays byte-identical, the Deployment that would mount it is not
// written, and the annotated Namespace gets a NotOwned Warning Event naming it.
TEST(TelegrafSimTest, AnObjectWithTelegrafsNameThatItDidNotCreateIsNotTakenOver) {
  HarnessOptions ho;
  ho.objects =
      "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: app-d\n"
      "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " +
      std::string(kConfigMapName) + "\n  namespace: app-d\ndata:\n  mine: \"yes\"\n";
  Harness h(std::move(ho));
  h.start();
  const json::value before = h.config_map("app-d");
  ASSERT_FALSE(before.is_null());
  h.annotate_namespace("app-d", "- web: \"http://web.app-d.svc:8080/metrics\"\n");
  ASSERT_TRUE(tst::wait_until([&] {
    return !h.server_events("Namespace", "app-d", "NotOwned").empty();
  })) << "no NotOwned Event";
  const auto events = h.server_events("Namespace", "app-d", "NotOwned");
  const std::string message(events.front().at("message").as_string());
  EXPECT_NE(message.find("ConfigMap app-d/" + std::string(kConfigMapName)), std::string::npos)
      << message;
  EXPECT_NE(message.find("it lacks the label app.kubernetes.io/managed-by="), std::string::npos)
      << message;
  const auto reconciles = h.module->reconciles("app-d");
  ASSERT_TRUE(tst::wait_until([&] { return h.module->reconciles("app-d") >= reconciles + 2; }));
  EXPECT_EQ(h.config_map("app-d"), before);
  EXPECT_TRUE(h.deployment("app-d").is_null());
}

}  // namespace
}  // namespace aop::telegraf::testing
