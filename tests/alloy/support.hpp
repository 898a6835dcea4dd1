// Shared by the translation tests: custom resources in YAML → the static backend's own
// config trees (the translations' input), written Alloy files, problem listings.
#pragma once

#include <filesystem>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/json/value.hpp>

#include <optional>

#include "reconcile/agent/fragments.hpp"
#include "reconcile/agent/hierarchy.hpp"
#include "reconcile/agent/options.hpp"
#include "reconcile/alloy/integrations.hpp"
#include "reconcile/alloy/problems.hpp"
#include "reconcile/alloy/syntax.hpp"
#include "tests/alloy/checker/checker.hpp"

namespace aop::alloy::test {

std::string read(const std::filesystem::path& p);

// One GrafanaAgent of a YAML cluster, discovered and with its assets resolved, as the
// static backend sees it before rendering.
struct Root {
  agent::Hierarchy hierarchy;
  agent::AssetStore assets;
  const std::string& ns() const { return hierarchy.agent.metadata.ns; }
  const std::string& name() const { return hierarchy.agent.metadata.name; }
};

// Every GrafanaAgent of a multi-document YAML cluster whose discovery succeeded, in
// (namespace, name) order. `shuffle_seed` non-zero: the documents are added to the cluster
// in a shuffled order (discovery must sort them back).
std::vector<Root> roots(std::string_view yaml, const agent::Options& options = {},
                        unsigned shuffle_seed = 0);

// The static backend's config tree of `file` (the render-fragments and assemble stages),
// whether or not the hierarchy needs the file; nullopt when it fails to render.
std::optional<boost::json::value> static_tree(const Root& r, agent::ConfigFile file,
                                              const agent::Options& options = {});

// `<ns>/<name>` of the LogsInstances without clients of their own (they use the
// GrafanaAgent's).
std::set<std::string> agent_clients(const agent::Hierarchy& h);

// The hierarchy's Integrations as the integrations translation takes them.
std::vector<IntegrationMember> members(const agent::Hierarchy& h);

// Files written with the header naming GrafanaAgent `ns`/`name`.
std::vector<check::SourceFile> written(const std::vector<File>& files, const std::string& ns,
                                       const std::string& name);

// Packs `files` into the Secrets `<base>`, `<base>-1`, ... (as the object builder will) and
// checks them as one configuration; `secrets` gets their number.
std::vector<check::Violation> check_packed(const std::vector<File>& files, const std::string& ns,
                                           const std::string& name, const std::string& base,
                                           std::size_t* secrets = nullptr);

// `<class> <kind> <ns>/<name> <message>` per line.
std::string problems_text(const std::vector<TranslationProblem>& ps);

const check::SourceFile* file(const std::vector<check::SourceFile>& files, std::string_view key);

// The static backend's test inputs, as (name, multi-document YAML): each golden
// directory's input.yaml in name order, then deploy/examples as one input.
std::vector<std::pair<std::string, std::string>> static_inputs();

// The golden directory of the worked example.
std::filesystem::path worked_example();

}  // namespace aop::alloy::test
