// The render-fragments stage (pipeline.hpp): each member's share of the configuration,
// rendered on its own with its own problems and error.
#include <algorithm>

#include "reconcile/agent/config.hpp"
#include "reconcile/agent/config_common.hpp"
#include "reconcile/agent/fragment_cache.hpp"
#include "reconcile/agent/pipeline.hpp"

namespace aop::agent {

using detail::RenderContext;
namespace json = boost::json;

namespace {

// Runs `render(ctx)` in a context of its own and keeps what it found (and, with `reads`,
// every referenced key it looked up).
template <class Render>
ScrapeFragment scrape_fragment(const Hierarchy& h, const AssetStore& assets, const Options& options,
                               Render&& render, std::vector<AssetRead>* reads = nullptr) {
  ScrapeFragment f;
  RenderContext ctx(h.agent, assets, options, &f.problems, reads);
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
  f.additional = scrape_fragment(h, assets, options, [&](RenderContext& ctx) {
    json::array configs;
    detail::append_additional_scrape_configs(
        ctx, instance.metadata.ns, instance.spec.additional_scrape_configs, owner, configs);
    return configs;
  });
  return f;
}

template <class Member, class Render>
void member_fragment(Fragments& f, FragmentCache::Use* reuse, bool as_text, Kind kind,
                     const Member& m, const Hierarchy& h, const AssetStore& assets,
                     const Options& options, Render&& render) {
  MemberKey key{kind, {m.metadata.ns, m.metadata.name}};
  if (f.members.contains(key)) return;  // selected by an earlier instance too
  if (reuse != nullptr) {
    if (auto kept = reuse->find(key, m.metadata, assets, as_text)) {
      f.members.emplace(std::move(key), std::move(*kept));
      return;
    }
  }
  std::vector<AssetRead> reads;
  ScrapeFragment fragment = scrape_fragment(
      h, assets, options, [&](RenderContext& ctx) { return render(ctx, m); },
      reuse != nullptr ? &reads : nullptr);
  // A null item would be left out of the file, and a list of nulls would be an empty
  // list there: such (never rendered) configs stay a tree.
  if (as_text && !fragment.configs.empty() &&
      std::none_of(fragment.configs.begin(), fragment.configs.end(),
                   [](const json::value& c) { return c.is_null(); })) {
    fragment.text = emit_scrape_configs(std::move(fragment.configs), options);
    fragment.configs = json::array();
  }
  if (reuse != nullptr) reuse->keep(key, m.metadata, std::move(reads), fragment, as_text);
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

Outcome<Fragments> render_fragments(const Hierarchy& h, const AssetStore& assets,
                                    const Options& options, FragmentCache::Use* r, bool as_text) {
  Outcome<Fragments> out;
  Fragments& f = out.value;
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
      member_fragment(f, r, as_text, Kind::service_monitor, *sm, h, assets, options,
                      detail::service_monitor_scrape_configs);
    }
    for (const auto& pm : e.pod_monitors) {
      member_fragment(f, r, as_text, Kind::pod_monitor, *pm, h, assets, options,
                      detail::pod_monitor_scrape_configs);
    }
    for (const auto& p : e.probes) {
      member_fragment(f, r, as_text, Kind::probe, *p, h, assets, options,
                      detail::probe_scrape_configs);
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
      member_fragment(f, r, as_text, Kind::pod_logs, *pl, h, assets, options,
                      detail::pod_logs_scrape_configs);
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
