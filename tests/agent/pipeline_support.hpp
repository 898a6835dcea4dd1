// Helpers for the tests of the Grafana Agent pipeline's stages (reconcile/agent/
// pipeline.hpp): clusters from YAML, the root and its struct, and each stage run the way
// plan_root() runs it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "k8s/yaml.hpp"
#include "reconcile/agent/config.hpp"
#include "reconcile/agent/memory_cluster.hpp"
#include "reconcile/agent/pipeline.hpp"

namespace aop::agent::testing {

using boost::json::array;
using boost::json::object;
using boost::json::value;

inline value yaml(std::string_view text) {
  auto v = k8s::yaml::parse(text);
  EXPECT_TRUE(v.has_value()) << (v ? "" : v.error().message);
  return v ? *v : value();
}

// A cluster from a multi-document YAML stream.
inline MemoryCluster cluster_of(std::string_view text) {
  MemoryCluster c;
  auto docs = k8s::yaml::parse_all(text);
  EXPECT_TRUE(docs.has_value());
  if (!docs) return c;
  for (auto& d : *docs) EXPECT_TRUE(c.add(std::move(d)).has_value());
  return c;
}

// The GrafanaAgent `name` of the cluster, as stored (the decode stage's input).
inline k8s::ObjectPtr root_of(const MemoryCluster& c, std::string_view name = "agent") {
  for (const auto& o : c.compact(Kind::grafana_agent)) {
    if (o->name() == name) return o;
  }
  ADD_FAILURE() << "no GrafanaAgent " << name;
  return nullptr;
}

// ... decoded.
inline GrafanaAgent agent_of(const MemoryCluster& c, std::string_view name = "agent") {
  const auto root = root_of(c, name);
  if (!root) return {};
  DecodeCache uncached(false);
  auto a = decode_root(*root, uncached);
  EXPECT_TRUE(a.ok()) << (a.ok() ? "" : a.failure->message);
  return a.value;
}

inline Outcome<Discovered> discover_in(const MemoryCluster& c, const GrafanaAgent& agent) {
  DecodeCache uncached(false);
  return discover(agent, c, uncached);
}

// The validated hierarchy of the cluster's agent (discover, then validate).
inline Hierarchy hierarchy_of(const MemoryCluster& c, std::string_view name = "agent") {
  auto d = discover_in(c, agent_of(c, name));
  EXPECT_TRUE(d.ok()) << (d.ok() ? "" : d.failure->message);
  return validate(std::move(d.value.hierarchy), c, Options{}).value;
}

// Render fragments, then assemble: the config files of a hierarchy.
inline Outcome<ConfigTrees> configs_of(const Hierarchy& h, const AssetStore& assets = {},
                                       const Options& options = {}) {
  auto fragments = render_fragments(h, assets, options);
  auto configs = assemble(std::move(fragments.value), h);
  configs.problems.insert(configs.problems.begin(), fragments.problems.begin(),
                          fragments.problems.end());
  return configs;
}

// A config file's `agent.yml` text ("" when it was not assembled).
inline std::string config_text(const Outcome<ConfigTrees>& configs, ConfigFile file,
                               const Options& options = {}) {
  const auto& tree = configs.value[file];
  return tree ? emit_config(*tree, options) : std::string();
}

inline std::vector<std::string> names(const std::vector<MetricsEntry>& entries) {
  std::vector<std::string> out;
  out.reserve(entries.size());
  for (const auto& e : entries)
    out.push_back(e.instance.metadata.ns + "/" + e.instance.metadata.name);
  return out;
}

template <class T>
std::vector<std::string> names(const std::vector<T>& objs) {
  std::vector<std::string> out;
  out.reserve(objs.size());
  for (const auto& o : objs) {
    if constexpr (requires { o->metadata; }) {
      out.push_back(o->metadata.ns + "/" + o->metadata.name);
    } else {
      out.push_back(o.metadata.ns + "/" + o.metadata.name);
    }
  }
  return out;
}

inline std::vector<std::string> strs(const std::vector<Problem>& problems) {
  std::vector<std::string> out;
  out.reserve(problems.size());
  for (const auto& p : problems) out.push_back(p.str());
  return out;
}

}  // namespace aop::agent::testing
