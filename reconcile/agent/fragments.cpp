// The render-fragments stage (pipeline.hpp): each member's share of the configuration,
// rendered on its own with its own problems and error.
#include <algorithm>

#include <boost/json/serialize.hpp>

#include "reconcile/agent/config.hpp"
#include "reconcile/agent/config_common.hpp"
#include "reconcile/agent/fragment_cache.hpp"
#include "reconcile/agent/pipeline.hpp"
#include "reconcile/runtime/apply_plan.hpp"

namespace aop::agent {

using detail::RenderContext;
namespace json = boost::json;

namespace {

// Runs `render(ctx)` in a context of its own, over `agent`, and keeps what it found (and,
// with `reads`, every referenced key it looked up).
template <class Render>
ScrapeFragment scrape_fragment(const GrafanaAgent& agent, const AssetStore& assets,
                               const Options& options, Render&& render,
                               std::vector<AssetRead>* reads = nullptr) {
  ScrapeFragment f;
  RenderContext ctx(agent, assets, options, &f.problems, reads);
  f.configs = render(ctx);
  f.error = ctx.error();
  return f;
}

GlobalFragment global_fragment(const Hierarchy& h, const AssetStore& assets, const Options& options,
                               bool with_replica) {
  GlobalFragment f;
  RenderContext ctx(h.agent, assets, options, &f.problems);
  f.fields = detail::metrics_global(ctx, with_replica);
  f.error = ctx.error();
  return f;
}

template <class Instance, class Fields>
InstanceFragment instance_fragment(const Hierarchy& h, const AssetStore& assets,
                                   const Options& options, const Instance& instance,
                                   const std::string& owner, Fields&& fields) {
  InstanceFragment f;
  {
    RenderContext ctx(h.agent, assets, options, &f.problems);
    f.fields = fields(ctx);
    f.error = ctx.error();
  }
  f.additional = scrape_fragment(h.agent, assets, options, [&](RenderContext& ctx) {
    json::array configs;
    detail::append_additional_scrape_configs(
        ctx, instance.metadata.ns, instance.spec.additional_scrape_configs, owner, configs);
    return configs;
  });
  return f;
}

// What a member's fragment is rendered from besides the member.
struct MemberInputs {
  const MemberView& view;
  const AssetStore& assets;
  const Options& options;
  FragmentCache::Use* kept;
  bool as_text;
};

template <class Member, class Render>
void member_fragment(Fragments& f, const MemberInputs& in, Kind kind, const Member& m,
                     Render&& render) {
  MemberKey key{kind, {m.metadata.ns, m.metadata.name}};
  if (f.members.contains(key)) return;  // selected by an earlier instance too
  FragmentCache::Use* const reuse = in.kept;
  if (reuse != nullptr) {
    if (auto kept = reuse->find(key, m.metadata, in.assets, in.view.key, in.as_text)) {
      f.members.emplace(std::move(key), std::move(*kept));
      return;
    }
  }
  const bool as_text = in.as_text;
  const Options& options = in.options;
  std::vector<AssetRead> reads;
  ScrapeFragment fragment = scrape_fragment(
      in.view.agent, in.assets, options, [&](RenderContext& ctx) { return render(ctx, m); },
      reuse != nullptr ? &reads : nullptr);
  // A null item would be left out of the file, and a list of nulls would be an empty
  // list there: such (never rendered) configs stay a tree.
  if (as_text && !fragment.configs.empty() &&
      std::none_of(fragment.configs.begin(), fragment.configs.end(),
                   [](const json::value& c) { return c.is_null(); })) {
    fragment.text = emit_scrape_configs(std::move(fragment.configs), options);
    fragment.configs = json::array();
  }
  if (reuse != nullptr) {
    reuse->keep(key, m.metadata, std::move(reads), fragment, in.view.key, as_text);
  }
  f.members.emplace(std::move(key), std::move(fragment));
}

}  // namespace

bool config_needed(const Hierarchy& h, ConfigFile file) {
  switch (file) {
    case ConfigFile::metrics:
      return !h.metrics.empty();
    case ConfigFile::logs:
      return !h.logs.empty();
    case ConfigFile::integrations_deploy:
    case ConfigFile::integrations_ds: {
      const bool all_nodes = file == ConfigFile::integrations_ds;
      for (const auto& in : h.integrations) {
        if (in.spec.all_nodes == all_nodes) return true;
      }
      return false;
    }
  }
  return false;
}

std::string config_secret_name(const GrafanaAgent& agent, ConfigFile file) {
  const std::string& name = agent.metadata.name;
  switch (file) {
    case ConfigFile::metrics:
      return name + "-config";
    case ConfigFile::logs:
      return name + "-logs-config";
    case ConfigFile::integrations_deploy:
      return name + "-integrations-deploy-config";
    case ConfigFile::integrations_ds:
      return name + "-integrations-ds-config";
  }
  return {};
}

namespace {

// Options as member_view() keys them: a field added to Options changes its size and stops
// the build here, until the key includes it (a flag that shapes the output but is not in
// the key would leave fragments rendered under its old value in use).
struct OptionsAsKeyed {
  Labels operator_labels;
  std::string operator_version;
  Compat compat;
  Backend backend;
  std::string alloy_image;
};
static_assert(sizeof(Options) == sizeof(OptionsAsKeyed),
              "a field was added to agent::Options: add it to member_view()'s key");

template <class T>
json::value optional_json(const std::optional<T>& v) {
  return v ? json::value(*v) : json::value(nullptr);
}

}  // namespace

MemberView member_view(const GrafanaAgent& a, const AssetStore& assets, const Options& options) {
  MemberView v;
  GrafanaAgent& view = v.agent;
  // The service discovery block (config_common.cpp sd_config) reads the API server
  // connection and resolves its references in the agent's namespace.
  view.metadata.ns = a.metadata.ns;
  view.spec.api_server = a.spec.api_server;
  // config_metrics.cpp: sharding, limits, honor overrides, namespace rules.
  auto& m = view.spec.metrics;
  const auto& am = a.spec.metrics;
  m.shards = am.shards;
  m.enforced_sample_limit = am.enforced_sample_limit;
  m.enforced_target_limit = am.enforced_target_limit;
  m.override_honor_labels = am.override_honor_labels;
  m.override_honor_timestamps = am.override_honor_timestamps;
  m.ignore_namespace_selectors = am.ignore_namespace_selectors;
  m.enforced_namespace_label = am.enforced_namespace_label;
  // config_logs.cpp: namespace rules.
  view.spec.logs.ignore_namespace_selectors = a.spec.logs.ignore_namespace_selectors;
  view.spec.logs.enforced_namespace_label = a.spec.logs.enforced_namespace_label;

  // The key: the same fields, the API server block as members write it (with the values
  // of the keys it references, or the error of one missing), and the options.
  RenderContext ctx(view, assets, options, nullptr);
  const json::object sd = detail::sd_config(ctx, "", {});
  json::object labels;
  for (const auto& [k, val] : options.operator_labels) labels[k] = val;
  const json::object key{
      {"metrics", json::object{{"shards", optional_json(m.shards)},
                               {"enforcedSampleLimit", optional_json(m.enforced_sample_limit)},
                               {"enforcedTargetLimit", optional_json(m.enforced_target_limit)},
                               {"overrideHonorLabels", m.override_honor_labels},
                               {"overrideHonorTimestamps", m.override_honor_timestamps},
                               {"ignoreNamespaceSelectors", m.ignore_namespace_selectors},
                               {"enforcedNamespaceLabel", m.enforced_namespace_label}}},
      {"logs", json::object{{"ignoreNamespaceSelectors", view.spec.logs.ignore_namespace_selectors},
                            {"enforcedNamespaceLabel", view.spec.logs.enforced_namespace_label}}},
      {"apiServer", sd},
      {"apiServerError", ctx.error() ? json::value(*ctx.error()) : json::value(nullptr)},
      {"options", json::object{{"operator_labels", std::move(labels)},
                               {"operator_version", options.operator_version},
                               {"compat", options.compat == Compat::fixed ? "fixed" : "upstream"},
                               {"backend", backend_name(options.backend)},
                               {"alloy_image", options.alloy_image}}}};
  v.key = runtime::sha256_hex(json::serialize(key));
  return v;
}

Outcome<Fragments> render_fragments(const Hierarchy& h, const AssetStore& assets,
                                    const Options& options, FragmentCache::Use* r, bool as_text) {
  Outcome<Fragments> out;
  Fragments& f = out.value;
  const MemberView view = member_view(h.agent, assets, options);
  const MemberInputs in{view, assets, options, r, as_text};
  f.server = detail::server_block(h.agent);
  // Rendered whatever files the hierarchy needs: an error in one matters only to the
  // files that include it.
  f.metrics_global = global_fragment(h, assets, options, true);
  f.integrations_global = global_fragment(h, assets, options, false);
  for (const auto& e : h.metrics) {
    const auto& mi = e.instance;
    f.metrics_instances.push_back(instance_fragment(
        h, assets, options, mi, "MetricsInstance " + mi.metadata.ns + "/" + mi.metadata.name,
        [&](RenderContext& ctx) { return detail::metrics_instance_fields(ctx, mi); }));
    for (const auto& sm : e.service_monitors) {
      member_fragment(f, in, Kind::service_monitor, *sm, detail::service_monitor_scrape_configs);
    }
    for (const auto& pm : e.pod_monitors) {
      member_fragment(f, in, Kind::pod_monitor, *pm, detail::pod_monitor_scrape_configs);
    }
    for (const auto& p : e.probes) {
      member_fragment(f, in, Kind::probe, *p, detail::probe_scrape_configs);
    }
  }
  for (const auto& e : h.logs) {
    const auto& li = e.instance;
    InstanceFragment inst = instance_fragment(
        h, assets, options, li, "LogsInstance " + li.metadata.ns + "/" + li.metadata.name,
        [&](RenderContext& ctx) { return detail::logs_instance_fields(ctx, li); });
    inst.trailing = detail::logs_instance_trailing(li);
    f.logs_instances.push_back(std::move(inst));
    for (const auto& pl : e.pod_logs) {
      member_fragment(f, in, Kind::pod_logs, *pl, detail::pod_logs_scrape_configs);
    }
  }
  for (const auto& in : h.integrations) {
    json::value config = json::object();
    if (in.spec.config && !in.spec.config->is_null()) config = *in.spec.config;
    f.integrations.push_back(std::move(config));
  }
  return out;
}

}  // namespace aop::agent
