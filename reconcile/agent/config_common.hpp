// Internal building blocks of the render-fragments stage (fragments.hpp): optional-field
// rules, secret helpers, TLS/relabel/SD/remote_write blocks, and the renderers of each
// kind of fragment. Not part of the library's interface.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "reconcile/agent/config.hpp"
#include "reconcile/agent/fragments.hpp"
#include "reconcile/agent/hierarchy.hpp"

namespace aop::agent::detail {

using boost::json::array;
using boost::json::object;
using boost::json::value;

inline constexpr std::string_view kSecretsDir = "/var/lib/grafana-agent/secrets/";
inline constexpr std::string_view kDataDir = "/var/lib/grafana-agent/data";
// The prefixes of the Pod label meta labels of Kubernetes service discovery.
inline constexpr std::string_view kPodLabel = "__meta_kubernetes_pod_label_";
inline constexpr std::string_view kPodLabelPresent = "__meta_kubernetes_pod_labelpresent_";

// ---- optional-field rules (upstream's omitempty)
// ----------------------------------------------------
inline void set_ne(object& o, std::string_view key, const std::string& s) {
  if (!s.empty()) o[key] = s;
}
inline void set_nz(object& o, std::string_view key, double n) {
  if (n != 0) o[key] = n;
}
inline void set_true(object& o, std::string_view key, bool b) {
  if (b) o[key] = true;
}
inline void set_ne_list(object& o, std::string_view key, array a) {
  if (!a.empty()) o[key] = std::move(a);
}
inline void set_ne_map(object& o, std::string_view key, object m) {
  if (!m.empty()) o[key] = std::move(m);
}
array string_array(const std::vector<std::string>& v);
object string_object(const StringMap& m);

// The state of rendering one fragment: what it may read (the agent, the asset store and
// the options: nothing else of the hierarchy, so that a member's fragment depends only on
// the member and these), the problems found and the first fatal error.
class RenderContext {
 public:
  RenderContext(const GrafanaAgent& agent, const AssetStore& assets, const Options& options,
                std::vector<Problem>* problems, std::vector<AssetRead>* reads = nullptr)
      : agent_(agent), assets_(assets), options_(options), problems_(problems), reads_(reads) {}

  const GrafanaAgent& agent() const { return agent_; }
  const Options& options() const { return options_; }
  bool fixed() const { return options_.compat == Compat::fixed; }

  // A referenced key's value: the stored value; a missing one records `key not provided:
  // <key>`
  // and yields null.
  value secret_value(std::string_view ns, const SecretKeySelector& sel);
  value secret_value(std::string_view ns, const std::optional<SecretKeySelector>& sel) {
    return sel ? secret_value(ns, *sel) : value(nullptr);
  }
  value config_map_value(std::string_view ns, const ConfigMapKeySelector& sel);
  // The path a referenced key is mounted at in the agent's pod: never checks existence.
  static std::string secret_path(std::string_view ns, const SecretKeySelector& sel);
  static value secret_path(std::string_view ns, const std::optional<SecretKeySelector>& sel);
  static value secret_path(std::string_view ns, const SecretOrConfigMap& s);

  void fail(std::string message) {
    if (!error_) error_ = std::move(message);
  }
  bool failed() const { return error_.has_value(); }
  const std::optional<std::string>& error() const { return error_; }

  void problem(Kind kind, const ObjectMeta& m, std::string field, std::string message) {
    if (problems_ != nullptr) {
      problems_->push_back(
          make_problem(kind, {m.ns, m.name}, std::move(field), std::move(message)));
    }
  }
  // A warning about the output, never fatal. A block rendered into more than one file
  // (metrics.global) reports it once.
  void warn(Kind kind, const ObjectMeta& m, std::string field, std::string message);

 private:
  // A referenced key's value (recorded in reads_), or null after fail().
  value asset_value(std::string key);

  const GrafanaAgent& agent_;
  const AssetStore& assets_;
  const Options& options_;
  std::vector<Problem>* problems_;
  std::vector<AssetRead>* reads_;
  std::optional<std::string> error_;
};

// ---- shared blocks -----------------------------------------------------------------
object tls_safe(RenderContext& ctx, std::string_view ns, const SafeTLSConfig& t);
object tls_full(RenderContext& ctx, std::string_view ns, const TLSConfig& t);
object relabel(const RelabelConfig& r);
array relabels(const std::vector<RelabelConfig>& list);
// kubernetes_sd_configs entry with the agent's apiServer connection block.
object sd_config(RenderContext& ctx, std::string_view role, const std::vector<std::string>& names);
// The namespaces a monitor's service discovery covers: its own namespace when
// `ignore` (ignoreNamespaceSelectors) or no selector, none for `any`, else the listed ones.
std::vector<std::string> sd_namespaces(const NamespaceSelector& sel, const std::string& own_ns,
                                       bool ignore);
object oauth2_block(RenderContext& ctx, std::string_view ns, const OAuth2& o);
// The upstream-compatible output drops an OAuth2 client ID taken from a ConfigMap (an
// upstream bug kept on purpose), and the agent refuses an oauth2 block without one: a
// warning on the object that holds it (`field` is the path of its oauth2 block),
// suggesting --agent-compat=fixed.
void warn_dropped_client_id(RenderContext& ctx, Kind kind, const ObjectMeta& m,
                            const std::string& field, const std::optional<OAuth2>& o);
object remote_write(RenderContext& ctx, std::string_view ns, const RemoteWriteSpec& rw);
// External labels: `name_override` nil → `cluster`, "" → none; then `extra`;
// then the replica label when `replica_name` is given (nil → `__replica__`, "" → none).
object external_labels(const GrafanaAgent& agent, const std::optional<std::string>& name_override,
                       const StringMap& extra, const std::optional<std::string>* replica_name);
object server_block(const GrafanaAgent& agent);
// Additional scrape configs (a YAML list in a Secret) appended to `out`; errors
// recorded in ctx.
void append_additional_scrape_configs(RenderContext& ctx, std::string_view ns,
                                      const std::optional<SecretKeySelector>& sel,
                                      const std::string& owner, array& out);

// Label-selector relabel rules (keep/drop per matchLabels and matchExpressions) with the
// given label prefixes. The validate stage has left out members whose selectors have an
// unknown operator or an In/NotIn without values.
void selector_rules(const LabelSelectorSpec& sel, std::string_view label_prefix,
                    std::string_view present_prefix, array& out);

// ---- fragments (config_metrics.cpp, config_logs.cpp) ----------------------------------

// A member's scrape configs: none, with a problem, when the member cannot be rendered.
array service_monitor_scrape_configs(RenderContext& ctx, const ServiceMonitor& sm);
array pod_monitor_scrape_configs(RenderContext& ctx, const PodMonitor& pm);
array probe_scrape_configs(RenderContext& ctx, const Probe& p);
array pod_logs_scrape_configs(RenderContext& ctx, const PodLogs& pl);
// An instance's own fields (before its scrape_configs), and a LogsInstance's trailing
// ones (after them).
object metrics_instance_fields(RenderContext& ctx, const MetricsInstance& mi);
object logs_instance_fields(RenderContext& ctx, const LogsInstance& li);
object logs_instance_trailing(const LogsInstance& li);
// metrics.global, with or without the replica external label.
object metrics_global(RenderContext& ctx, bool with_replica);

}  // namespace aop::agent::detail
