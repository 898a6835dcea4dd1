// Test support; see support.hpp.
#include "tests/alloy/support.hpp"

#include <algorithm>
#include <fstream>
#include <random>
#include <sstream>

#include <gtest/gtest.h>

#include "k8s/yaml.hpp"
#include "reconcile/agent/decode.hpp"
#include "reconcile/agent/memory_cluster.hpp"
#include "reconcile/agent/pipeline.hpp"
#include "reconcile/alloy/pack.hpp"

namespace aop::alloy::test {

namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot read " << p;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<Root> roots(std::string_view yaml, const agent::Options& options,
                        unsigned shuffle_seed) {
  std::vector<Root> out;
  auto docs = k8s::yaml::parse_all(std::string(yaml));
  EXPECT_TRUE(docs.has_value()) << (docs ? "" : docs.error().message);
  if (!docs) return out;
  if (shuffle_seed != 0) {
    std::mt19937 rng(shuffle_seed);
    std::shuffle(docs->begin(), docs->end(), rng);
  }
  agent::MemoryCluster cluster;
  for (auto& d : *docs) EXPECT_TRUE(cluster.add(std::move(d)).has_value());
  std::vector<agent::GrafanaAgent> agents;
  for (const auto* o : cluster.objects(agent::Kind::grafana_agent)) {
    auto ga = agent::decode_grafana_agent(boost::json::value(*o));
    EXPECT_TRUE(ga.has_value());
    if (ga) agents.push_back(std::move(*ga));
  }
  std::sort(agents.begin(), agents.end(), [](const auto& a, const auto& b) {
    return std::tie(a.metadata.ns, a.metadata.name) < std::tie(b.metadata.ns, b.metadata.name);
  });
  for (const auto& ga : agents) {
    agent::DecodeCache uncached(false);
    auto d = agent::discover(ga, cluster, uncached);
    if (!d.ok()) continue;
    auto h = agent::validate(std::move(d.value.hierarchy), cluster, options);
    if (!h.ok()) continue;
    auto store = agent::resolve_assets(h.value, cluster);
    if (!store.ok()) continue;
    out.push_back(Root{std::move(h.value), std::move(store.value)});
  }
  return out;
}

std::optional<boost::json::value> static_tree(const Root& r, agent::ConfigFile file,
                                              const agent::Options& options) {
  auto fragments = agent::render_fragments(r.hierarchy, r.assets, options);
  auto tree = agent::assemble_file(std::move(fragments.value), r.hierarchy, file);
  if (!tree.ok()) return std::nullopt;
  return std::move(tree.value);
}

std::set<std::string> agent_clients(const agent::Hierarchy& h) {
  std::set<std::string> out;
  for (const auto& e : h.logs) {
    if (e.instance.spec.clients.empty()) {
      out.insert(e.instance.metadata.ns + "/" + e.instance.metadata.name);
    }
  }
  return out;
}

std::vector<IntegrationMember> members(const agent::Hierarchy& h) {
  std::vector<IntegrationMember> out;
  for (const auto& in : h.integrations) {
    out.push_back({in.metadata.ns, in.metadata.name, in.spec.name, in.spec.all_nodes,
                   in.spec.config.value_or(boost::json::value())});
  }
  return out;
}

std::vector<check::SourceFile> written(const std::vector<File>& files, const std::string& ns,
                                       const std::string& name) {
  std::vector<check::SourceFile> out;
  out.reserve(files.size());
  for (const auto& f : files) out.push_back({f.key, write_file(ns, name, f.blocks)});
  return out;
}

std::vector<check::Violation> check_packed(const std::vector<File>& files, const std::string& ns,
                                           const std::string& name, const std::string& base,
                                           std::size_t* secrets) {
  auto packed = pack_config(ns, name, base, files);
  EXPECT_TRUE(packed.has_value());
  if (!packed) return {};
  std::vector<check::ConfigSecret> view;
  std::vector<std::string> names;
  for (const auto& s : *packed) {
    check::ConfigSecret cs{s.name, {}};
    for (const auto& e : s.entries) cs.data.push_back({e.key, e.text});
    view.push_back(std::move(cs));
    names.push_back(s.name);
  }
  if (secrets != nullptr) *secrets = packed->size();
  return check::check_config_secrets(view, base, names, ns, name);
}

std::string problems_text(const std::vector<TranslationProblem>& ps) {
  std::string out;
  for (const auto& p : ps) {
    const char* cls = p.cls == ProblemClass::a   ? "A"
                      : p.cls == ProblemClass::b ? "B"
                      : p.cls == ProblemClass::c ? "C"
                                                 : "kept";
    out += std::string(cls) + " " + p.kind + " " + p.ns + "/" + p.name + " " + p.message + "\n";
  }
  return out;
}

const check::SourceFile* file(const std::vector<check::SourceFile>& files, std::string_view key) {
  for (const auto& f : files) {
    if (f.key == key) return &f;
  }
  return nullptr;
}

std::vector<std::pair<std::string, std::string>> static_inputs() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& e : fs::directory_iterator(fs::path(AOP_SOURCE_DIR) / "tests/agent/golden")) {
    if (fs::exists(e.path() / "input.yaml")) {
      out.emplace_back(e.path().filename().string(), read(e.path() / "input.yaml"));
    }
  }
  std::sort(out.begin(), out.end());
  std::string examples;
  for (const auto& e : fs::directory_iterator(fs::path(AOP_SOURCE_DIR) / "deploy/examples")) {
    if (e.path().extension() == ".yaml") examples += read(e.path()) + "\n---\n";
  }
  out.emplace_back("deploy/examples", std::move(examples));
  return out;
}

fs::path worked_example() {
  return fs::path(AOP_SOURCE_DIR) / "tests/alloy/golden/worked_example";
}

}  // namespace aop::alloy::test
