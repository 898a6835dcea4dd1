// kube-sim's authentication and RBAC (--token, --token-file, TokenRequest, --rbac) and its
// access log, through ApiServer::handle(). The Forbidden messages are kube-apiserver
// v1.24's, word for word, as it answered the same requests.
#include "tools/kube-sim/auth.hpp"

#include "tests/sim/sim_fixture.hpp"

namespace aop::sim::testing {
namespace {

constexpr const char* kAdmin = "admin-token";

class Rbac : public ::testing::Test {
 protected:
  static ServerOptions options(FakeTime& t) {
    ServerOptions o = fake_options(t);
    o.rbac = true;
    o.token = kAdmin;
    return o;
  }

  Response as(const std::string& token, std::string method, std::string target,
              const json::value& body = nullptr, std::string user_agent = "rbac-test") {
    Request r;
    r.method = std::move(method);
    r.target = std::move(target);
    if (!body.is_null()) r.body = json::serialize(body);
    r.content_type = "application/json";
    r.user_agent = std::move(user_agent);
    if (!token.empty()) r.authorization = "Bearer " + token;
    Response resp = api_.handle(r);
    api_.run_background();
    return resp;
  }
  json::value admin_create(const std::string& target, const std::string& yaml_json) {
    auto r = as(kAdmin, "POST", target, json::parse(yaml_json));
    EXPECT_EQ(r.status, 201) << target << ": " << r.body_string();
    return json::parse(r.body_string());
  }
  static std::string message(const Response& r) {
    return std::string(json::parse(r.body_string()).at("message").as_string());
  }

  // ServiceAccount app/op with a token, bound by a Role to configmaps get/list in "app",
  // by a ClusterRole to secrets list cluster-wide and to grafanaagents/status update, and
  // to one named Lease.
  std::string service_account() {
    admin_create("/api/v1/namespaces",
                 R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"app"}})");
    admin_create(
        "/api/v1/namespaces/app/serviceaccounts",
        R"({"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"op","namespace":"app"}})");
    admin_create("/apis/rbac.authorization.k8s.io/v1/namespaces/app/roles", R"({
      "apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"r","namespace":"app"},
      "rules":[{"apiGroups":[""],"resources":["configmaps"],"verbs":["get","list"]},
               {"apiGroups":["coordination.k8s.io"],"resources":["leases"],"verbs":["create"]},
               {"apiGroups":["coordination.k8s.io"],"resources":["leases"],"resourceNames":["mine"],
                "verbs":["get","update"]}]})");
    admin_create("/apis/rbac.authorization.k8s.io/v1/namespaces/app/rolebindings", R"({
      "apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"rb","namespace":"app"},
      "roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"r"},
      "subjects":[{"kind":"ServiceAccount","name":"op","namespace":"app"}]})");
    admin_create("/apis/rbac.authorization.k8s.io/v1/clusterroles", R"({
      "apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"cr"},
      "rules":[{"apiGroups":[""],"resources":["secrets"],"verbs":["list","watch"]},
               {"apiGroups":["monitoring.grafana.com"],"resources":["grafanaagents/status"],
                "verbs":["update"]}]})");
    admin_create("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", R"({
      "apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{"name":"crb"},
      "roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"cr"},
      "subjects":[{"kind":"ServiceAccount","name":"op","namespace":"app"}]})");
    auto t = as(kAdmin, "POST", "/api/v1/namespaces/app/serviceaccounts/op/token",
                json::parse(R"({"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest",
                                "spec":{"expirationSeconds":3600}})"));
    EXPECT_EQ(t.status, 201) << t.body_string();
    return std::string(json::parse(t.body_string()).at("status").at("token").as_string());
  }

  FakeTime time_;
  ApiServer api_{options(time_)};
};

TEST_F(Rbac, AnUnknownTokenIsUnauthorizedNoneIsAnonymousAndTheAdministratorMayDoAnything) {
  EXPECT_EQ(as("wrong", "GET", "/api/v1/namespaces").status, 401);
  const auto anonymous = as("", "GET", "/api/v1/namespaces");
  EXPECT_EQ(anonymous.status, 403);
  EXPECT_EQ(message(anonymous),
            "namespaces is forbidden: User \"system:anonymous\" cannot list resource "
            "\"namespaces\" in API group \"\" at the cluster scope");
  EXPECT_EQ(as("", "GET", "/version").status, 200) << "public information";
  EXPECT_EQ(as("", "GET", "/api").status, 403) << "discovery needs an authenticated user";
  EXPECT_EQ(as(kAdmin, "GET", "/api/v1/namespaces").status, 200);
  EXPECT_EQ(as(kAdmin, "POST", "/api/v1/namespaces/default/configmaps",
               json::parse(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}})"))
                .status,
            201);
}

TEST_F(Rbac, ServiceAccountTokensAreAuthorizedByTheStoredRolesAndBindings) {
  const std::string token = service_account();
  EXPECT_EQ(as(token, "GET", "/api").status, 200) << "discovery for authenticated users";
  EXPECT_EQ(as(token, "GET", "/apis/apps/v1").status, 200);
  // The Role, in its namespace only.
  EXPECT_EQ(as(token, "GET", "/api/v1/namespaces/app/configmaps").status, 200);
  EXPECT_EQ(as(token, "GET", "/api/v1/namespaces/app/configmaps/nope").status, 404);
  const auto other_ns = as(token, "GET", "/api/v1/namespaces/default/configmaps");
  EXPECT_EQ(other_ns.status, 403);
  EXPECT_EQ(message(other_ns),
            "configmaps is forbidden: User \"system:serviceaccount:app:op\" cannot list "
            "resource \"configmaps\" in API group \"\" in the namespace \"default\"");
  const auto create =
      as(token, "POST", "/api/v1/namespaces/app/configmaps",
         json::parse(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}})"));
  EXPECT_EQ(create.status, 403);
  EXPECT_EQ(message(create),
            "configmaps is forbidden: User \"system:serviceaccount:app:op\" cannot create "
            "resource \"configmaps\" in API group \"\" in the namespace \"app\"");
  const auto body = json::parse(create.body_string());
  EXPECT_EQ(body.at("reason"), "Forbidden");
  EXPECT_EQ(body.at("details").at("kind"), "configmaps");
  // The ClusterRole, everywhere; a get it does not grant, with the name in the message.
  EXPECT_EQ(as(token, "GET", "/api/v1/secrets").status, 200);
  EXPECT_EQ(as(token, "GET", "/api/v1/namespaces/default/secrets?watch=1").status, 200);
  const auto get = as(token, "GET", "/api/v1/namespaces/app/secrets/foo");
  EXPECT_EQ(message(get),
            "secrets \"foo\" is forbidden: User \"system:serviceaccount:app:op\" cannot get "
            "resource \"secrets\" in API group \"\" in the namespace \"app\"");
  EXPECT_EQ(json::parse(get.body_string()).at("details").at("name"), "foo");
  // resourceNames: only requests naming the object; create cannot be narrowed by name.
  const std::string lease =
      R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"mine"}})";
  EXPECT_EQ(
      as(token, "POST", "/apis/coordination.k8s.io/v1/namespaces/app/leases", json::parse(lease))
          .status,
      201);
  EXPECT_EQ(as(token, "GET", "/apis/coordination.k8s.io/v1/namespaces/app/leases/mine").status,
            200);
  EXPECT_EQ(as(token, "GET", "/apis/coordination.k8s.io/v1/namespaces/app/leases/other").status,
            403);
  EXPECT_EQ(as(token, "GET", "/apis/coordination.k8s.io/v1/namespaces/app/leases").status, 403);
  // A subresource is its own resource: statefulsets/status is not granted.
  const auto status =
      as(token, "PUT", "/apis/apps/v1/namespaces/app/statefulsets/x/status", json::object{});
  EXPECT_EQ(message(status),
            "statefulsets.apps \"x\" is forbidden: User \"system:serviceaccount:app:op\" cannot "
            "update resource \"statefulsets/status\" in API group \"apps\" in the namespace "
            "\"app\"");
  // Non-resource paths beyond discovery need a grant.
  EXPECT_EQ(message(as(token, "GET", "/metrics")),
            "forbidden: User \"system:serviceaccount:app:op\" cannot get path \"/metrics\"");
}

TEST_F(Rbac, ABindingTakesEffectAtOnceAndRemovingItRevokes) {
  const std::string token = service_account();
  const std::string path = "/api/v1/namespaces/app/services";
  EXPECT_EQ(as(token, "GET", path).status, 403);
  admin_create("/apis/rbac.authorization.k8s.io/v1/clusterroles", R"({
    "apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"all"},
    "rules":[{"apiGroups":["*"],"resources":["*"],"verbs":["*"]}]})");
  admin_create("/apis/rbac.authorization.k8s.io/v1/namespaces/app/rolebindings", R"({
    "apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"all","namespace":"app"},
    "roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"all"},
    "subjects":[{"kind":"Group","name":"system:serviceaccounts:app"}]})");
  EXPECT_EQ(as(token, "GET", path).status, 200) << "a ClusterRole bound in one namespace";
  EXPECT_EQ(as(token, "GET", "/api/v1/namespaces/default/services").status, 403)
      << "... grants nothing elsewhere";
  EXPECT_EQ(
      as(kAdmin, "DELETE", "/apis/rbac.authorization.k8s.io/v1/namespaces/app/rolebindings/all")
          .status,
      200);
  EXPECT_EQ(as(token, "GET", path).status, 403);
}

TEST_F(Rbac, TokenRequestNeedsTheAccountAndAtLeastTenMinutes) {
  EXPECT_EQ(
      as(kAdmin, "POST", "/api/v1/namespaces/default/serviceaccounts/nope/token", json::object{})
          .status,
      404);
  admin_create("/api/v1/namespaces/default/serviceaccounts",
               R"({"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"sa"}})");
  const auto short_lived = as(kAdmin, "POST", "/api/v1/namespaces/default/serviceaccounts/sa/token",
                              json::parse(R"({"spec":{"expirationSeconds":60}})"));
  EXPECT_EQ(short_lived.status, 422);
  EXPECT_NE(message(short_lived).find("may not specify a duration less than 10 minutes"),
            std::string::npos);
  const auto ok =
      as(kAdmin, "POST", "/api/v1/namespaces/default/serviceaccounts/sa/token", json::object{});
  ASSERT_EQ(ok.status, 201);
  const auto tr = json::parse(ok.body_string());
  EXPECT_EQ(tr.at("kind"), "TokenRequest");
  EXPECT_EQ(tr.at("spec").at("expirationSeconds"), 3600);
  // Discovery lists the subresource as kube-apiserver does.
  const auto v1 = json::parse(as(kAdmin, "GET", "/api/v1").body_string());
  bool listed = false;
  for (const auto& r : v1.at("resources").as_array()) {
    listed = listed || (r.at("name") == "serviceaccounts/token" && r.at("kind") == "TokenRequest");
  }
  EXPECT_TRUE(listed);
}

TEST_F(Rbac, TheAccessLogCountsRequestsByUserAndOutcomeButNotTheAdministratorsReads) {
  const std::string token = service_account();
  api_.reset_stats();
  as(kAdmin, "GET", "/api/v1/namespaces/app/configmaps");
  as(token, "GET", "/api/v1/namespaces/app/configmaps", nullptr, "op/1.0");
  as(token, "GET", "/api/v1/namespaces/app/configmaps", nullptr, "op/1.0");
  as(token, "GET", "/api/v1/namespaces/default/configmaps", nullptr, "op/1.0");
  as(kAdmin, "POST", "/api/v1/namespaces/app/configmaps",
     json::parse(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}})"));
  Request r;
  r.method = "GET";
  r.target = "/admin/access";
  const auto items = json::parse(api_.handle(r).body_string()).at("items").as_array();
  std::vector<std::string> seen;
  for (const auto& i : items) {
    seen.push_back(std::string(i.at("user").as_string()) + " " +
                   std::string(i.at("verb").as_string()) + " " +
                   std::string(i.at("resource").as_string()) + " " +
                   std::string(i.at("namespace").as_string()) + " " +
                   std::to_string(i.at("code").to_number<int>()) + " x" +
                   std::to_string(i.at("count").to_number<int>()));
  }
  EXPECT_EQ(seen, (std::vector<std::string>{
                      "admin create configmaps app 201 x1",
                      "system:serviceaccount:app:op list configmaps app 200 x2",
                      "system:serviceaccount:app:op list configmaps default 403 x1"}));
}

TEST(TokenFile, LinesAreTokenUserUidAndQuotedGroups) {
  Authenticator auth;
  ASSERT_TRUE(auth.load_token_csv("# comment\n\nt1,alice,u1,\"devs,ops\"\nt2,bob,u2\n", "test"));
  const auto alice = auth.authenticate("Bearer t1");
  ASSERT_TRUE(alice.has_value());
  EXPECT_EQ(alice->name, "alice");
  EXPECT_EQ(alice->groups, (std::vector<std::string>{"devs", "ops", "system:authenticated"}));
  EXPECT_EQ(auth.authenticate("Bearer t2")->name, "bob");
  EXPECT_FALSE(auth.authenticate("Bearer t3").has_value());
  EXPECT_FALSE(auth.authenticate("t1").has_value()) << "only bearer tokens";
  const auto bad = auth.load_token_csv("only-a-token\n", "--token-file x");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message,
            "--token-file x: line 1: expected token,user,uid[,\"group1,group2\"]");
}

}  // namespace
}  // namespace aop::sim::testing
