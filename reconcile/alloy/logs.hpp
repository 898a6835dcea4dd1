// The logs configuration of an Alloy root, translated from the static logs config tree
// (the JSON tree the static backend renders into the logs `agent.yml`: one entry per
// LogsInstance with its effective clients, its PodLogs jobs then its additional scrape
// configs, and target_config).
//
// Every static logs job becomes a pipeline
//
//   discovery.kubernetes (shared, this node's pods only) → discovery.relabel
//     → local.file_match → loki.source.file → loki.process → loki.write (each client)
//
// with the job's relabel rules unchanged (promtail adds no labels before relabeling) and
// one `stage.*` block per pipeline stage. `loki.source.file` imports the position file
// the static agent kept for the LogsInstance, so a node switching backends resumes each
// file where the static agent stopped.
//
// Files, in packing order: main.alloy (logging), one file per LogsInstance with its
// `loki.write` components, discovery.alloy, then one file per job.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include <boost/json/value.hpp>

#include "reconcile/alloy/metrics.hpp"

namespace aop::alloy {

struct LogsRoot {
  std::string ns;    // the GrafanaAgent's namespace
  std::string name;  // the GrafanaAgent's name
  // The static config wrote integral numbers as integers (compat `fixed`); see MetricsRoot.
  bool integer_numbers = false;
  // `<ns>/<name>` of the LogsInstances without clients of their own: their static clients
  // are the GrafanaAgent's spec.logs.clients, whose problems belong to the GrafanaAgent.
  std::set<std::string> agent_clients;
};

AlloyConfig translate_logs(const boost::json::value& static_tree, const LogsRoot& root);

// Bytes of a promtail size text (`drop.longer_than`, `cri.max_partial_line_size`): digits,
// then optionally spaces and a unit, read case-insensitively: none, `b`, `byte`; `k`,
// `kb`, `kib`, `kilo`, `kilobyte(s)` ×1024; likewise `m`/mega, `g`/giga, `t`/tera,
// `p`/peta, `e`/exa (all powers of 1024). nullopt for anything else or on overflow.
std::optional<std::uint64_t> parse_size(std::string_view text);

}  // namespace aop::alloy
