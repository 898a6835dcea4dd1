// The integrations translation: Integrations (from custom resources through the static
// backend's discovery, or written by hand) to Alloy exporters, their label normalisation
// and scrape, and the decision to keep an Integration on static. Every output goes through
// the Alloy checker; the worked example of the backend specification must come out byte
// for byte as golden/worked_example/integrations-ds (typed in from the specification).
#include <algorithm>
#include <map>

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "reconcile/agent/config.hpp"
#include "reconcile/alloy/integrations.hpp"
#include "reconcile/alloy/labels.hpp"
#include "reconcile/alloy/pack.hpp"
#include "tests/alloy/support.hpp"

namespace aop::alloy {
namespace {

namespace fs = std::filesystem;
using boost::json::value;
using test::file;
using test::problems_text;

IntegrationsRoot root_of(const test::Root& r, bool integers = false) {
  return {r.ns(), r.name(), integers, test::agent_clients(r.hierarchy)};
}

value integrations_tree(const test::Root& r, bool all_nodes, const agent::Options& options = {}) {
  auto tree = agent::integrations_config_tree(r.hierarchy, r.assets, options, all_nodes, nullptr);
  EXPECT_TRUE(tree.has_value());
  return tree ? *tree : value();
}

// Translates, writes and checks.
std::vector<check::SourceFile> translate_checked(const value& tree,
                                                 const std::vector<IntegrationMember>& members,
                                                 bool all_nodes, const IntegrationsRoot& root,
                                                 IntegrationsConfig* out = nullptr) {
  IntegrationsConfig c = translate_integrations(tree, members, all_nodes, root);
  auto files = test::written(c.files, root.ns, root.name);
  const auto v = check::check_config(files, root.ns, root.name);
  EXPECT_TRUE(v.empty()) << check::to_string(v);
  if (out != nullptr) *out = std::move(c);
  return files;
}

TEST(IntegrationsTranslation, WorkedExampleIsReproducedByteForByte) {
  const auto roots = test::roots(test::read(test::worked_example() / "input.yaml"));
  ASSERT_EQ(roots.size(), 1U);
  const auto& r = roots[0];
  IntegrationsConfig c;
  const auto files = translate_checked(integrations_tree(r, true), test::members(r.hierarchy), true,
                                       root_of(r), &c);
  EXPECT_TRUE(c.problems.empty()) << problems_text(c.problems);
  EXPECT_TRUE(c.kept.empty());
  const fs::path dir = test::worked_example() / "integrations-ds";
  const std::vector<std::string> keys = {"main.alloy", "mi_monitoring_primary_7f26355a.alloy",
                                         "integration_monitoring_node_92957cb5.alloy"};
  ASSERT_EQ(files.size(), keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    EXPECT_EQ(files[i].key, keys[i]);
    EXPECT_EQ(files[i].text, test::read(dir / keys[i])) << keys[i];
  }
  // The Deployment subset is empty: no configuration, no workload.
  const auto deploy = translate_integrations(integrations_tree(r, false),
                                             test::members(r.hierarchy), false, root_of(r));
  EXPECT_TRUE(deploy.files.empty());
  EXPECT_TRUE(deploy.problems.empty());
  auto secrets = pack_config("monitoring", "agent", "agent-alloy-integrations-ds-config", c.files);
  ASSERT_TRUE(secrets.has_value());
  std::vector<check::ConfigSecret> view;
  for (const auto& s : *secrets) {
    check::ConfigSecret cs{s.name, {}};
    for (const auto& e : s.entries) cs.data.push_back({e.key, e.text});
    view.push_back(std::move(cs));
  }
  const auto v =
      check::check_config_secrets(view, "agent-alloy-integrations-ds-config",
                                  {"agent-alloy-integrations-ds-config"}, "monitoring", "agent");
  EXPECT_TRUE(v.empty()) << check::to_string(v);
}

}  // namespace
}  // namespace aop::alloy
