// Drives kube-sim's ApiServer through handle() with plain request values: the same path
// the HTTP edge takes, without sockets. Time is fake.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "tools/kube-sim/api.hpp"

namespace aop::sim::testing {

namespace json = boost::json;

struct FakeTime {
  std::chrono::system_clock::time_point wall =
      std::chrono::system_clock::time_point(std::chrono::seconds(1'700'000'000));
  std::chrono::steady_clock::time_point mono =
      std::chrono::steady_clock::time_point(std::chrono::hours(1));

  void advance(std::chrono::milliseconds d) {
    wall += d;
    mono += d;
  }
};

inline ServerOptions fake_options(FakeTime& t, std::size_t history = 1000) {
  ServerOptions o;
  o.watch_history = history;
  o.seed = 42;
  o.server_address = "127.0.0.1:6443";
  o.clock.wall = [&t] { return t.wall; };
  o.clock.mono = [&t] { return t.mono; };
  return o;
}

class SimTest : public ::testing::Test {
 protected:
  explicit SimTest(std::size_t history = 1000) : api_(fake_options(time_, history)) {}

  Response call(std::string method, std::string target, std::string body = {},
                std::string content_type = "application/json", std::string accept = {},
                std::string user_agent = "sim-test") {
    Request r;
    r.method = std::move(method);
    r.target = std::move(target);
    r.body = std::move(body);
    r.content_type = std::move(content_type);
    r.accept = std::move(accept);
    r.user_agent = std::move(user_agent);
    Response resp = api_.handle(r);
    api_.run_background();
    return resp;
  }

  static json::value body(const Response& r) { return json::parse(r.body_string()); }

  json::value get(const std::string& target, int expect = 200) {
    auto r = call("GET", target);
    EXPECT_EQ(r.status, expect) << target << ": " << r.body_string();
    return body(r);
  }

  json::value post(const std::string& target, const json::value& obj, int expect = 201) {
    auto r = call("POST", target, json::serialize(obj));
    EXPECT_EQ(r.status, expect) << target << ": " << r.body_string();
    return body(r);
  }

  json::value put(const std::string& target, const json::value& obj, int expect = 200) {
    auto r = call("PUT", target, json::serialize(obj));
    EXPECT_EQ(r.status, expect) << target << ": " << r.body_string();
    return body(r);
  }

  json::value patch(const std::string& target, const std::string& type, const json::value& p,
                    int expect = 200) {
    auto r = call("PATCH", target, json::serialize(p), type);
    EXPECT_EQ(r.status, expect) << target << ": " << r.body_string();
    return body(r);
  }

  json::value del(const std::string& target, int expect = 200, const std::string& body = {}) {
    auto r = call("DELETE", target, body);
    EXPECT_EQ(r.status, expect) << target << ": " << r.body_string();
    return json::parse(r.body_string());
  }

  static json::object configmap(const std::string& name, const std::string& ns = "default",
                                json::object labels = {}) {
    json::object md{{"name", name}, {"namespace", ns}};
    if (!labels.empty()) md["labels"] = std::move(labels);
    return json::object{{"apiVersion", "v1"},
                        {"kind", "ConfigMap"},
                        {"metadata", std::move(md)},
                        {"data", json::object{{"k", "v"}}}};
  }

  json::value make_cm(const std::string& name, json::object labels = {},
                      const std::string& ns = "default") {
    return post("/api/v1/namespaces/" + ns + "/configmaps", configmap(name, ns, std::move(labels)));
  }

  static std::string rv_of(const json::value& obj) {
    return std::string(obj.at("metadata").at("resourceVersion").as_string());
  }

  static std::vector<std::string> names(const json::value& list) {
    std::vector<std::string> out;
    for (const auto& i : list.at("items").as_array()) {
      out.emplace_back(i.at("metadata").at("name").as_string());
    }
    return out;
  }

  // Drains a watch's pending output into parsed events.
  static std::vector<json::value> drain(const WatcherPtr& w) {
    std::vector<json::value> out;
    const std::string text = flatten(w->take());
    std::size_t start = 0;
    while (start < text.size()) {
      const auto nl = text.find('\n', start);
      EXPECT_NE(nl, std::string::npos) << "an event line must end with a newline";
      if (nl == std::string::npos) break;
      out.push_back(json::parse(std::string_view(text).substr(start, nl - start)));
      start = nl + 1;
    }
    return out;
  }

  static std::vector<std::string> types_and_names(const std::vector<json::value>& events) {
    std::vector<std::string> out;
    for (const auto& e : events) {
      std::string s(e.at("type").as_string());
      const auto& md = e.at("object").at("metadata").as_object();
      if (const auto* n = md.if_contains("name")) s += " " + std::string(n->as_string());
      out.push_back(s);
    }
    return out;
  }

  FakeTime time_;
  ApiServer api_;
};

}  // namespace aop::sim::testing
