#include "app/flags.hpp"

#include <map>

#include <gtest/gtest.h>

#include "app/options.hpp"

using namespace aop::app;
using namespace std::chrono;

namespace {

FlagSet::EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const std::string& name) -> std::optional<std::string> {
    const auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

}  // namespace

TEST(Flags, DurationsAreGoDurationsAndNotNegative) {
  Options o;
  FlagSet f("agent-operator");
  register_flags(f, o);
  ASSERT_TRUE(
      f.parse({"--resync-period=1h30m", "--shutdown-timeout=1.5s"}, env_of({})).has_value());
  EXPECT_EQ(o.resync_period, minutes(90));
  EXPECT_EQ(o.shutdown_timeout, milliseconds(1500));
  const auto negative = f.parse({"--resync-period=-1s"}, env_of({}));
  ASSERT_FALSE(negative.has_value());
  EXPECT_NE(negative.error().message.find("must not be negative"), std::string::npos);
  const auto unitless = f.parse({"--resync-period=10"}, env_of({}));
  ASSERT_FALSE(unitless.has_value());
  EXPECT_NE(unitless.error().message.find("missing unit"), std::string::npos);
  // Defaults print as Go prints them.
  EXPECT_NE(f.usage().find("default \"10m0s\""), std::string::npos);
}

TEST(Flags, PrecedenceIsFlagThenEnvThenDefault) {
  Options o;
  FlagSet f("agent-operator");
  register_flags(f, o);
  auto r =
      f.parse({"--workers=8"},
              env_of({{"AGENT_OPERATOR_WORKERS", "2"}, {"AGENT_OPERATOR_LOG_FORMAT", "json"}}));
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(o.workers, 8);          // flag wins over env
  EXPECT_EQ(o.log_format, "json");  // env wins over default
  EXPECT_EQ(o.log_level, "info");   // default
}

TEST(Flags, AcceptsGoAndGnuSyntax) {
  Options o;
  FlagSet f("agent-operator");
  register_flags(f, o);
  auto r = f.parse({"-kube-api-qps=20", "--kube-api-burst", "40", "--leader-elect",
                    "--namespaces=a, b", "--resync-period", "1m30s"},
                   env_of({}));
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(o.kube_api_qps, 20);
  EXPECT_EQ(o.kube_api_burst, 40);
  EXPECT_TRUE(o.leader_elect);
  EXPECT_EQ(o.namespaces, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(o.resync_period, seconds(90));
}

TEST(Flags, ClearErrors) {
  Options o;
  FlagSet f("agent-operator");
  register_flags(f, o);
  EXPECT_NE(f.parse({"--nope"}, env_of({})).error().message.find("unknown flag --nope"),
            std::string::npos);
  EXPECT_NE(f.parse({"--workers"}, env_of({})).error().message.find("needs a value"),
            std::string::npos);
  EXPECT_NE(f.parse({"--workers=0"}, env_of({})).error().message.find("out of range"),
            std::string::npos);
  EXPECT_NE(f.parse({"--log-format=xml"}, env_of({})).error().message.find("text|json"),
            std::string::npos);
  const auto env_error = f.parse({}, env_of({{"AGENT_OPERATOR_RESYNC_PERIOD", "soon"}}));
  ASSERT_FALSE(env_error.has_value());
  EXPECT_NE(env_error.error().message.find("AGENT_OPERATOR_RESYNC_PERIOD"), std::string::npos);
}

TEST(Flags, EnvNamesAreDerivedFromFlagNames) {
  EXPECT_EQ(FlagSet::env_name("health-probe-bind-address"),
            "AGENT_OPERATOR_HEALTH_PROBE_BIND_ADDRESS");
  Options o;
  FlagSet f("agent-operator");
  register_flags(f, o);
  for (const auto& info : f.describe()) {
    EXPECT_EQ(info.env, FlagSet::env_name(info.name));
    EXPECT_FALSE(info.help.empty()) << info.name;
  }
  EXPECT_NE(f.usage().find("AGENT_OPERATOR_LEADER_ELECT"), std::string::npos);
}

TEST(Options, ValidationRejectsBadCombinations) {
  const auto check = [](auto mutate, std::string_view needle) {
    Options o;
    mutate(o);
    auto r = validate(o);
    ASSERT_FALSE(r.has_value()) << needle;
    EXPECT_NE(r.error().message.find(needle), std::string::npos) << r.error().message;
  };
  check([](Options& o) { o.controllers = {"agent", "prometheus"}; }, "unknown controller");
  check([](Options& o) { o.agent_labels = {"novalue"}; }, "key=value");
  check([](Options& o) { o.agent_labels = {"app.kubernetes.io/managed-by=x"}; }, "managed-by");
  // The labels selectors and ownership read: every shard would select every shard's pods.
  for (const char* key :
       {"operator.agent.grafana.com/name", "operator.agent.grafana.com/shard",
        "operator.agent.grafana.com/type", "operator.agent.grafana.com/backend"}) {
    check([&](Options& o) { o.agent_labels = {std::string(key) + "=x"}; },
          std::string(key) + " is set by the operator");
  }
  check([](Options& o) { o.kubelet_service = "kubelet"; }, "namespace/name");
  check([](Options& o) { o.agent_selector = "a in (b"; }, "--agent-selector");
  check([](Options& o) { o.telegraf_token_secret = "ns/name"; }, "namespace/name:key");
  check([](Options& o) { o.leader_election_renew_deadline = seconds(20); }, "renew-deadline");
  Options ok;
  EXPECT_TRUE(validate(ok).has_value());
}

TEST(Options, TelegrafIsOffByDefaultAndNeedsTheSitesInfluxDb) {
  Options o;
  EXPECT_EQ(o.controllers, std::vector<std::string>{"agent"});
  EXPECT_EQ(o.telegraf.influxdb_url, "");
  EXPECT_EQ(o.telegraf.influxdb_org, "");
  o.controllers = {"agent", "telegraf"};
  auto r = validate(o);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message.find("--telegraf-influxdb-url is required when the telegraf "
                                   "controller runs"),
            std::string::npos)
      << r.error().message;
  o.telegraf.influxdb_url = "https://influxdb.example.com";
  r = validate(o);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message.find("--telegraf-influxdb-org is required"), std::string::npos);
  o.telegraf.influxdb_org = "example";
  EXPECT_TRUE(validate(o).has_value());
}
