// `agent-operator render --agent-backend alloy` as a user runs it: every root of
// deploy/examples and of the static backend's golden inputs is printed as an Alloy
// deployment, and every workload's configuration (the config Secrets its projected volume
// names) goes through the Alloy checker.
#include <array>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "k8s/base64.hpp"
#include "k8s/yaml.hpp"
#include "tests/alloy/checker/checker.hpp"

namespace aop::alloy {
namespace {

namespace fs = std::filesystem;
using boost::json::value;

struct Rendered {
  std::vector<value> objects;
  int status = -1;
};

Rendered render(const std::vector<std::string>& args) {
  std::string command = std::string(AOP_BINARY_DIR) + "/bin/agent-operator render";
  for (const auto& a : args) command += " '" + a + "'";
  command += " 2>/dev/null";
  Rendered out;
  FILE* pipe = popen(command.c_str(), "r");
  EXPECT_NE(pipe, nullptr) << command;
  if (pipe == nullptr) return out;
  std::string text;
  std::array<char, 65536> buffer{};
  for (std::size_t n; (n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0;) {
    text.append(buffer.data(), n);
  }
  const int status = pclose(pipe);
  out.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  auto docs = k8s::yaml::parse_all(text);
  EXPECT_TRUE(docs.has_value()) << command;
  if (docs) {
    for (auto& d : *docs) {
      if (!d.is_null()) out.objects.push_back(std::move(d));
    }
  }
  return out;
}

std::string str(const value& v, std::initializer_list<std::string_view> path) {
  const value* p = &v;
  for (auto k : path) {
    if (!p->is_object()) return {};
    p = p->as_object().if_contains(k);
    if (p == nullptr) return {};
  }
  return p->is_string() ? std::string(p->as_string()) : std::string();
}

// Checks the configuration one Alloy workload loads: the Secrets its projected volume names.
void check_workload(const value& o, const std::map<std::string, const value*>& secrets) {
  const std::string ns = str(o, {"metadata", "namespace"});
  const std::string root = str(o, {"metadata", "labels", "operator.agent.grafana.com/name"});
  std::vector<std::string> sources;
  for (const auto& v : o.at("spec").at("template").at("spec").at("volumes").as_array()) {
    if (str(v, {"name"}) != "config") continue;
    for (const auto& s : v.at("projected").at("sources").as_array()) {
      sources.push_back(str(s, {"secret", "name"}));
    }
  }
  ASSERT_FALSE(sources.empty());
  std::vector<check::ConfigSecret> config;
  for (const auto& s : sources) {
    const auto it = secrets.find(s);
    ASSERT_NE(it, secrets.end()) << "config Secret " << s << " was not printed";
    check::ConfigSecret cs{s, {}};
    for (const auto& [key, data] : it->second->at("data").as_object()) {
      auto text = k8s::base64_decode(data.as_string());
      ASSERT_TRUE(text.has_value());
      cs.data.push_back({std::string(key), std::move(*text)});
    }
    config.push_back(std::move(cs));
  }
  const auto violations = check::check_config_secrets(config, sources[0], sources, ns, root);
  EXPECT_TRUE(violations.empty()) << check::to_string(violations);
}

// Checks every Alloy workload's configuration; returns the roots (ns/name) that have an
// Alloy workload.
std::set<std::string> check_workloads(const Rendered& r, const std::string& what) {
  std::map<std::string, const value*> secrets;
  for (const auto& o : r.objects) {
    if (str(o, {"kind"}) == "Secret") secrets[str(o, {"metadata", "name"})] = &o;
  }
  std::set<std::string> roots;
  for (const auto& o : r.objects) {
    const std::string kind = str(o, {"kind"});
    if (kind != "StatefulSet" && kind != "DaemonSet" && kind != "Deployment") continue;
    if (str(o, {"metadata", "labels", "operator.agent.grafana.com/backend"}) != "alloy") continue;
    const std::string ns = str(o, {"metadata", "namespace"});
    std::string trace = what;
    trace.append(": ").append(kind).append(" ").append(ns).append("/");
    trace.append(str(o, {"metadata", "name"}));
    SCOPED_TRACE(trace);
    roots.insert(ns + "/" + str(o, {"metadata", "labels", "operator.agent.grafana.com/name"}));
    check_workload(o, secrets);
  }
  return roots;
}

TEST(AlloyRender, DeployExamplesAreAnAlloyDeploymentThatLoads) {
  for (const char* compat : {"upstream", "fixed"}) {
    SCOPED_TRACE(compat);
    const Rendered r = render({"--agent-backend", "alloy", std::string("--agent-compat=") + compat,
                               "-f", std::string(AOP_SOURCE_DIR) + "/deploy/examples"});
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(check_workloads(r, "deploy/examples"),
              (std::set<std::string>{"monitoring/grafana-agent"}));
    std::multiset<std::string> workloads;
    for (const auto& o : r.objects) {
      const std::string kind = str(o, {"kind"});
      if (kind == "StatefulSet" || kind == "DaemonSet" || kind == "Deployment") {
        workloads.insert(kind + " " + str(o, {"metadata", "name"}));
      }
    }
    // shards: 2, replicas: 2 → two clusters of two members; nothing of static mode.
    EXPECT_EQ(
        workloads,
        (std::multiset<std::string>{
            "DaemonSet grafana-agent-alloy-integrations-ds", "DaemonSet grafana-agent-alloy-logs",
            "Deployment grafana-agent-alloy-integrations-deploy", "StatefulSet grafana-agent-alloy",
            "StatefulSet grafana-agent-alloy-replica-1"}));
  }
}

TEST(AlloyRender, TheAnnotationWinsOverTheFlag) {
  // The same examples with --agent-backend static: the root has no annotation, so static.
  const Rendered r =
      render({"--agent-backend", "static", "-f", std::string(AOP_SOURCE_DIR) + "/deploy/examples"});
  EXPECT_EQ(r.status, 0);
  EXPECT_TRUE(check_workloads(r, "static").empty());
  bool static_sts = false;
  for (const auto& o : r.objects) {
    if (str(o, {"kind"}) == "StatefulSet" && str(o, {"metadata", "name"}) == "grafana-agent") {
      static_sts = true;
    }
  }
  EXPECT_TRUE(static_sts);
  // The worked example's root is annotated alloy: Alloy whatever the flag says.
  const Rendered w =
      render({"--agent-backend", "static", "-f",
              std::string(AOP_SOURCE_DIR) + "/tests/alloy/golden/worked_example/input.yaml"});
  EXPECT_EQ(w.status, 0);
  EXPECT_EQ(check_workloads(w, "worked example"), (std::set<std::string>{"monitoring/agent"}));
}

TEST(AlloyRender, EveryGoldenInputRendersConfigsThatLoad) {
  std::size_t roots = 0;
  for (const auto& e : fs::directory_iterator(fs::path(AOP_SOURCE_DIR) / "tests/agent/golden")) {
    const fs::path input = e.path() / "input.yaml";
    if (!fs::exists(input)) continue;
    const Rendered r = render({"--agent-backend", "alloy", "-f", input.string()});
    roots += check_workloads(r, e.path().filename().string()).size();
  }
  // Most golden roots translate; the rest fail as a whole (class B) and print no workload.
  EXPECT_GE(roots, 15U);
}

}  // namespace
}  // namespace aop::alloy
