#include "k8s/api_request.hpp"

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "net/error.hpp"

namespace json = boost::json;
using namespace aop::k8s;
using namespace std::chrono_literals;

namespace {

ResourceInfo info(std::string group, std::string version, std::string kind, std::string resource,
                  bool namespaced) {
  ResourceInfo i;
  i.gvk = {std::move(group), std::move(version), std::move(kind)};
  i.resource = std::move(resource);
  i.namespaced = namespaced;
  return i;
}

}  // namespace

TEST(ApiRequest, ResourcePaths) {
  const auto pods = info("", "v1", "Pod", "pods", true);
  const auto deploy = info("apps", "v1", "Deployment", "deployments", true);
  const auto ns = info("", "v1", "Namespace", "namespaces", false);
  EXPECT_EQ(resource_path(pods, ""), "/api/v1/pods");
  EXPECT_EQ(resource_path(pods, "kube-system"), "/api/v1/namespaces/kube-system/pods");
  EXPECT_EQ(resource_path(pods, "a", "web-1", "status"), "/api/v1/namespaces/a/pods/web-1/status");
  EXPECT_EQ(resource_path(deploy, "a", "d"), "/apis/apps/v1/namespaces/a/deployments/d");
  EXPECT_EQ(resource_path(ns, "ignored", "team-a"), "/api/v1/namespaces/team-a");
  EXPECT_EQ(resource_path(pods, "a b", "x/y"), "/api/v1/namespaces/a%20b/pods/x%2Fy");
}

TEST(ApiRequest, ListQuery) {
  ListOptions o;
  EXPECT_EQ(list_query(o, ""), "?limit=500");
  o.label_selector = "app in (a,b),!x";
  o.field_selector = "metadata.name=n";
  o.resource_version = "0";
  o.limit = 0;
  EXPECT_EQ(list_query(o, ""),
            "?labelSelector=app%20in%20%28a%2Cb%29%2C%21x&fieldSelector=metadata.name%3Dn"
            "&resourceVersion=0");
  o.limit = 2;
  // A continue token fixes the snapshot: no resourceVersion with it.
  EXPECT_EQ(list_query(o, "tok=="),
            "?labelSelector=app%20in%20%28a%2Cb%29%2C%21x&fieldSelector=metadata.name%3Dn"
            "&limit=2&continue=tok%3D%3D");
}

TEST(ApiRequest, WatchQuery) {
  WatchOptions o;
  o.resource_version = "123";
  o.timeout = 420s;
  EXPECT_EQ(watch_query(o),
            "?watch=true&resourceVersion=123&allowWatchBookmarks=true&timeoutSeconds=420");
  o.resource_version.clear();
  o.send_initial_events = true;
  o.allow_bookmarks = true;
  o.label_selector = "a=b";
  EXPECT_EQ(watch_query(o),
            "?watch=true&labelSelector=a%3Db&allowWatchBookmarks=true&sendInitialEvents=true"
            "&resourceVersionMatch=NotOlderThan&timeoutSeconds=420");
}

TEST(ApiRequest, DeleteBody) {
  DeleteOptions o;
  EXPECT_EQ(delete_body(o), json::parse(R"({"kind":"DeleteOptions","apiVersion":"v1"})"));
  o.propagation = PropagationPolicy::foreground;
  o.precondition_uid = "u1";
  o.precondition_resource_version = "7";
  o.grace_period_seconds = 0;
  EXPECT_EQ(delete_body(o), json::parse(R"({"kind":"DeleteOptions","apiVersion":"v1",
      "propagationPolicy":"Foreground","preconditions":{"uid":"u1","resourceVersion":"7"},
      "gracePeriodSeconds":0})"));
}

TEST(ApiRequest, StatusBodiesBecomeErrors) {
  const auto e = error_from_response(409, R"({"kind":"Status","apiVersion":"v1","status":"Failure",
      "message":"Operation cannot be fulfilled on configmaps \"x\": the object has been modified",
      "reason":"Conflict","code":409})");
  EXPECT_TRUE(e.conflict());
  EXPECT_FALSE(e.already_exists());
  EXPECT_EQ(e.reason, "Conflict");
  EXPECT_NE(e.message.find("has been modified"), std::string::npos);
  EXPECT_EQ(e.describe().substr(0, 13), "409 Conflict:");

  const auto exists = error_from_response(
      409, R"({"kind":"Status","reason":"AlreadyExists","message":"exists","code":409})");
  EXPECT_TRUE(exists.already_exists());

  // Not a Status (a proxy's page): reason from the code, message from the body.
  const auto proxy = error_from_response(502, "<html>Bad Gateway</html>\n");
  EXPECT_EQ(proxy.reason, "InternalError");
  EXPECT_EQ(proxy.message, "<html>Bad Gateway</html>");
  const auto gone = error_from_response(410, "");
  EXPECT_TRUE(gone.gone());
  EXPECT_EQ(gone.reason, "Expired");
  EXPECT_EQ(gone.message, "HTTP 410");
  EXPECT_TRUE(error_from_response(404, "{}").not_found());
  EXPECT_TRUE(error_from_response(422, "").invalid());
}

TEST(ApiRequest, RetryAfter) {
  EXPECT_EQ(parse_retry_after("3"), std::optional<aop::net::Duration>(3s));
  EXPECT_EQ(parse_retry_after(" 0 "), std::optional<aop::net::Duration>(0s));
  EXPECT_EQ(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), std::nullopt);
  EXPECT_EQ(parse_retry_after("-1"), std::nullopt);
  EXPECT_EQ(parse_retry_after(""), std::nullopt);
  EXPECT_EQ(parse_retry_after("99999999999"), std::optional<aop::net::Duration>(86400s));
}

TEST(ApiRequest, RetryReasons) {
  ApiError throttled;
  throttled.code = 429;
  ApiError server;
  server.code = 503;
  ApiError not_impl;
  not_impl.code = 501;
  ApiError conflict;
  conflict.code = 409;
  ApiError reset;
  reset.transport = boost::asio::error::connection_reset;
  ApiError aborted;
  aborted.transport = boost::asio::error::operation_aborted;
  ApiError tls;
  tls.transport = aop::net::Errc::tls_unknown_ca;

  // 429: the server did not act, so any verb.
  EXPECT_EQ(retry_reason(throttled, false, true), RetryReason::throttled);
  EXPECT_EQ(retry_reason(throttled, true, true), RetryReason::throttled);
  // 5xx: reads only.
  EXPECT_EQ(retry_reason(server, true, true), RetryReason::server_error);
  EXPECT_EQ(retry_reason(server, false, true), RetryReason::none);
  EXPECT_EQ(retry_reason(not_impl, true, true), RetryReason::none);
  EXPECT_EQ(retry_reason(conflict, true, true), RetryReason::none);
  // Connection errors: reads, or writes never sent.
  EXPECT_EQ(retry_reason(reset, true, true), RetryReason::connection);
  EXPECT_EQ(retry_reason(reset, false, true), RetryReason::none);
  EXPECT_EQ(retry_reason(reset, false, false), RetryReason::connection);
  // Never: our own cancellation, and certificate failures (retrying cannot help).
  EXPECT_EQ(retry_reason(aborted, true, false), RetryReason::none);
  EXPECT_EQ(retry_reason(tls, true, false), RetryReason::none);
}

TEST(ApiRequest, Discovery) {
  const auto list =
      json::parse(R"({"kind":"APIResourceList","groupVersion":"monitoring.grafana.com/v1alpha1",
    "resources":[
      {"name":"grafanaagents","singularName":"grafanaagent","namespaced":true,"kind":"GrafanaAgent",
       "verbs":["get","list","watch","create"]},
      {"name":"grafanaagents/status","namespaced":true,"kind":"GrafanaAgent","verbs":["get","patch"]},
      {"name":"podlogs","namespaced":true,"kind":"PodLogs","verbs":["list"]},
      {"name":"clusterthings","namespaced":false,"kind":"ClusterThing","verbs":[]}]})");
  const auto infos = parse_api_resource_list(list, "monitoring.grafana.com", "v1alpha1");
  ASSERT_EQ(infos.size(), 3u);
  EXPECT_EQ(infos[0].gvk,
            (aop::k8s::GroupVersionKind{"monitoring.grafana.com", "v1alpha1", "GrafanaAgent"}));
  EXPECT_EQ(infos[0].resource, "grafanaagents");
  EXPECT_TRUE(infos[0].has_status);
  EXPECT_EQ(infos[0].verbs.size(), 4u);
  EXPECT_FALSE(infos[1].has_status);
  EXPECT_FALSE(infos[2].namespaced);

  const auto groups = json::parse(R"({"kind":"APIGroupList","groups":[
    {"name":"apps","versions":[{"groupVersion":"apps/v1","version":"v1"}],
     "preferredVersion":{"groupVersion":"apps/v1","version":"v1"}},
    {"name":"x.io","versions":[{"groupVersion":"x.io/v2","version":"v2"},
                              {"groupVersion":"x.io/v1","version":"v1"}]}]})");
  EXPECT_EQ(parse_api_group_list(groups),
            (std::vector<std::string>{"apps/v1", "x.io/v2", "x.io/v1"}));
  EXPECT_EQ(split_api_version("apps/v1"), (std::pair<std::string, std::string>{"apps", "v1"}));
  EXPECT_EQ(split_api_version("v1"), (std::pair<std::string, std::string>{"", "v1"}));
}

TEST(ResourceRegistry, BuiltinsAndDiscoveredKinds) {
  ResourceRegistry r;
  const auto secrets = r.find({"", "v1", "Secret"});
  ASSERT_TRUE(secrets);
  EXPECT_EQ(secrets->resource, "secrets");
  EXPECT_TRUE(secrets->namespaced);
  EXPECT_FALSE(r.find({"", "v1", "Namespace"})->namespaced);
  EXPECT_TRUE(r.find({"coordination.k8s.io", "v1", "Lease"}));
  EXPECT_FALSE(r.find({"monitoring.grafana.com", "v1alpha1", "GrafanaAgent"}));
  r.add(info("monitoring.grafana.com", "v1alpha1", "GrafanaAgent", "grafanaagents", true));
  EXPECT_EQ(r.find({"monitoring.grafana.com", "v1alpha1", "GrafanaAgent"})->resource,
            "grafanaagents");
  EXPECT_EQ(r.find_resource({"apps", "v1", "deployments"})->gvk.kind, "Deployment");
  EXPECT_FALSE(r.find_resource({"apps", "v1", "nothings"}));
}
