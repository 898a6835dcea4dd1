// The configuration of one GrafanaAgent in two steps (the render-fragments and assemble
// stages of pipeline.hpp):
//
//   Fragments    what each member contributes, rendered on its own: a ServiceMonitor's or
//                PodMonitor's scrape configs (one per endpoint), a Probe's, a PodLogs
//                job, an Integration's config block, an instance's own fields and its
//                additional scrape configs, and the agent's global blocks;
//   ConfigTrees  the static-mode configuration files (`agent.yml` of each config Secret)
//                as JSON trees, assembled from the fragments in upstream's order.
//
// A fragment depends only on its member, the agent (root-level settings such as shards
// and the API server block), the resolved assets and the options, so a member's fragment
// can be kept for as long as those are unchanged. A fragment carries the problems found
// while rendering it (a member skipped, with the field at fault) and at most one error
// (`key not provided: ...`, malformed additional scrape configs): an error fails every
// file that includes the fragment, as upstream fails the whole file.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "k8s/yaml.hpp"
#include "reconcile/agent/config_text.hpp"
#include "reconcile/agent/hierarchy.hpp"
#include "reconcile/agent/options.hpp"

namespace aop::agent {

// One lookup of a referenced key while rendering a fragment: the asset key and what it
// held (nothing: not provided). A kept fragment stays valid while every read it made
// still finds the same (fragment_cache.hpp).
struct AssetRead {
  std::string key;
  std::optional<std::string> value;
  bool operator==(const AssetRead&) const = default;
};

// Scrape configs (or PodLogs jobs) of one member, in order; none when it was skipped.
// Rendered as text (render_fragments' `as_text`), the configs are `text` instead: what
// emit_config() writes for them, spliced into the file as it is (config_text.hpp).
struct ScrapeFragment {
  boost::json::array configs;
  std::shared_ptr<const MemberText> text;
  std::vector<Problem> problems;
  std::optional<std::string> error;
};

// A MetricsInstance's or LogsInstance's own part of its config entry.
struct InstanceFragment {
  boost::json::object fields;        // before the entry's scrape_configs (name, remote_write, ...)
  boost::json::object trailing;      // after them (a LogsInstance's target_config)
  std::vector<Problem> problems;     // of `fields`
  std::optional<std::string> error;  // of `fields`
  ScrapeFragment additional;         // spec.additionalScrapeConfigs, after the members' jobs
};

// One block of the agent's own settings.
struct GlobalFragment {
  boost::json::object fields;
  std::vector<Problem> problems;
  std::optional<std::string> error;
};

struct MemberKey {
  Kind kind = Kind::service_monitor;
  k8s::ObjectKey key;
  auto operator<=>(const MemberKey&) const = default;
};

struct Fragments {
  boost::json::object server;          // the `server` block of every file
  GlobalFragment metrics_global;       // metrics.global with the replica label (metrics file)
  GlobalFragment integrations_global;  // metrics.global without it (integrations files)
  std::vector<InstanceFragment> metrics_instances;  // as Hierarchy::metrics
  std::vector<InstanceFragment> logs_instances;     // as Hierarchy::logs
  // ServiceMonitors, PodMonitors, Probes and PodLogs, each once however many instances
  // select it.
  std::map<MemberKey, ScrapeFragment> members;
  std::vector<boost::json::value> integrations;  // config blocks, as Hierarchy::integrations
};

// What of the root a member's fragment reads (config_metrics.cpp, config_logs.cpp and the
// service discovery block of config_common.cpp), and nothing else of it: the member
// renderers are given `agent`, a GrafanaAgent with these fields of the root copied and
// every other at its default, so their output cannot depend on another. `key` names
// them, with the API server block as members write it (the values of the keys it
// references read from `assets`) and the options: fragments rendered under the same key
// are the same whichever root rendered them (fragment_cache.hpp shares them).
struct MemberView {
  GrafanaAgent agent;
  std::string key;  // SHA-256, hex
};
MemberView member_view(const GrafanaAgent& agent, const AssetStore& assets, const Options& options);

// The configuration files of the static mode, in the order they are applied.
enum class ConfigFile { metrics, logs, integrations_deploy, integrations_ds };
inline constexpr std::array kConfigFiles = {ConfigFile::metrics, ConfigFile::logs,
                                            ConfigFile::integrations_deploy,
                                            ConfigFile::integrations_ds};

// Whether the hierarchy has anything for `file` (metrics: a MetricsInstance; logs: a
// LogsInstance; integrations: an Integration with allNodes false / true).
bool config_needed(const Hierarchy& h, ConfigFile file);
// The config Secret holding `file`: "<agent>-config", "<agent>-logs-config",
// "<agent>-integrations-deploy-config", "<agent>-integrations-ds-config".
std::string config_secret_name(const GrafanaAgent& agent, ConfigFile file);

// The assembled files as JSON trees (null-trimmed; numbers as the config's float64).
// A file is absent when the hierarchy does not need it, or when it (or a file before
// it) failed to assemble.
struct ConfigTrees {
  std::array<std::optional<boost::json::value>, kConfigFiles.size()> files;
  // The texts of the members rendered as text, which the trees refer to by splice items
  // (k8s::yaml::kSpliceKey, the index into this list) where their scrape configs go:
  // emit_config_text() writes them.
  std::vector<std::shared_ptr<const MemberText>> members;

  std::optional<boost::json::value>& operator[](ConfigFile f) {
    return files[static_cast<std::size_t>(f)];
  }
  const std::optional<boost::json::value>& operator[](ConfigFile f) const {
    return files[static_cast<std::size_t>(f)];
  }
};

}  // namespace aop::agent
