// A missing Secret key fails the root without touching the last good deployment or
// leaking data into status or Events, and fixing the Secret reconciles it by itself.
#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "tests/agent/agent_sim_support.hpp"

namespace aop::agent::testing {
namespace {

TEST_F(AgentControllerSimTest, MissingSecretKeyFailsCleanlyAndTheFixReconciles) {
  // Backoff so long that only an event can bring the root back within the deadline.
  runtime::QueuePolicy slow;
  slow.base_delay = std::chrono::hours(1);
  slow.max_delay = std::chrono::hours(1);
  auto& agent = env.add_agent_controller(module_options(), slow);
  env.start();
  const std::string username = "user-Zq81x";
  const std::string password = "pw-Lm27hQ";
  env.create_yaml(R"(
apiVersion: v1
kind: Namespace
metadata: {name: agents-ns}
)");
  env.create(AgentSim::secret("agents-ns", "rw-auth", {{"username", username}}));
  env.create(AgentSim::secret("agents-ns", "rw-auth-good",
                              {{"username", username}, {"password", password}}));
  env.create_yaml(R"(
apiVersion: monitoring.grafana.com/v1alpha1
kind: MetricsInstance
metadata: {name: primary, namespace: agents-ns, labels: {agent: main}}
spec:
  remoteWrite:
  - url: http://mimir.example:9009/api/v1/push
    basicAuth:
      username: {name: rw-auth-good, key: username}
      password: {name: rw-auth-good, key: password}
---
apiVersion: monitoring.grafana.com/v1alpha1
kind: GrafanaAgent
metadata: {name: main, namespace: agents-ns}
spec:
  metrics: {instanceSelector: {matchLabels: {agent: main}}}
)");
  // (The caches fill independently: the agent may first be reconciled without its
  // MetricsInstance, successfully and without a config.)
  ASSERT_TRUE(tst::wait_until(
      [&] {
        return env.exists(Kind::secret, "agents-ns", "main-config") &&
               env.condition_status("agents-ns", "main", "Reconciled") == "True";
      },
      kDeadline));
  const auto good_config = env.get(Kind::secret, "agents-ns", "main-config");
  ASSERT_TRUE(good_config.has_value());

  // The MetricsInstance now points at a Secret that lacks the password key.
  env.patch(Kind::metrics_instance, "agents-ns", "primary",
            json::parse(R"({"spec": {"remoteWrite": [{
      "url": "http://mimir.example:9009/api/v1/push",
      "basicAuth": {"username": {"name": "rw-auth", "key": "username"},
                    "password": {"name": "rw-auth", "key": "password"}}}]}})"));
  ASSERT_TRUE(tst::wait_until(
      [&] { return env.condition_status("agents-ns", "main", "Reconciled") == "False"; },
      kDeadline));
  const auto reconciled = env.condition("agents-ns", "main", "Reconciled");
  EXPECT_EQ(reconciled.at("reason").as_string(), "AssetResolutionFailed");
  const std::string message(reconciled.at("message").as_string());
  EXPECT_TRUE(contains(message,
                       "spec.remoteWrite[0].basicAuth.password.key: Secret "
                       "agents-ns/rw-auth has no key \"password\"; its keys are: "
                       "username"))
      << message;
  EXPECT_TRUE(contains(message, "MetricsInstance agents-ns/primary")) << message;
  ASSERT_TRUE(tst::wait_until(
      [&] {
        return !env.events.about("GrafanaAgent", "agents-ns", "main", "AssetResolutionFailed")
                    .empty();
      },
      kDeadline));
  // That Event is the one report of this problem set (it quotes the problem), and the
  // MetricsInstance counts as an invalid object.
  const auto refused =
      env.events.about("GrafanaAgent", "agents-ns", "main", "AssetResolutionFailed");
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_TRUE(contains(refused.front().message, "MetricsInstance agents-ns/primary: "))
      << refused.front().message;
  EXPECT_TRUE(env.events.about("GrafanaAgent", "agents-ns", "main", "InvalidMembers").empty());
  EXPECT_EQ(agent.invalid_objects(Kind::metrics_instance), 1u);

  // No secret data anywhere the controller reports to; the last good config untouched.
  const std::string status_text = json::serialize(env.agent_status("agents-ns", "main"));
  for (const auto& e : env.events.events()) {
    EXPECT_FALSE(contains(e.message, username)) << e.message;
    EXPECT_FALSE(contains(e.message, password)) << e.message;
  }
  EXPECT_FALSE(contains(status_text, username)) << status_text;
  EXPECT_FALSE(contains(status_text, password)) << status_text;
  const auto config_now = env.get(Kind::secret, "agents-ns", "main-config");
  ASSERT_TRUE(config_now.has_value());
  EXPECT_EQ(config_now->at("metadata").at("resourceVersion"),
            good_config->at("metadata").at("resourceVersion"));

  // Fixing the Secret reconciles the root by itself (the backoff is an hour away).
  env.patch(Kind::secret, "agents-ns", "rw-auth",
            json::value{{"data", json::object{{"password", k8s::base64_encode("pw-new")}}}});
  ASSERT_TRUE(tst::wait_until(
      [&] { return env.condition_status("agents-ns", "main", "Reconciled") == "True"; }, kDeadline))
      << json::serialize(env.condition("agents-ns", "main", "Reconciled"));
  const auto assets = env.get(Kind::secret, "agents-ns", "main-secrets");
  ASSERT_TRUE(assets.has_value());
  EXPECT_EQ(
      *k8s::base64_decode(assets->at("data").at("_secrets_agents_ns_rw_auth_password").as_string()),
      "pw-new");
  EXPECT_EQ(agent.invalid_objects(Kind::metrics_instance), 0u);
}

}  // namespace
}  // namespace aop::agent::testing
