// The render-fragments stage (pipeline.hpp): each member's share of the configuration,
// rendered on its own with its own problems and error.
#include <algorithm>

#include "reconcile/agent/config.hpp"
#include "reconcile/agent/config_common.hpp"
#include "reconcile/agent/encoding.hpp"
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

// One root's kept fragments during a render: what the last render kept (`old`) and what
// this one keeps (`now`: the fragments it used), put back into the cache at the end.
class Reuse {
 public:
  Reuse(FragmentCache& cache, std::string root_uid, std::string_view inputs, bool as_text)
      : cache_(cache),
        root_uid_(std::move(root_uid)),
        inputs_(inputs),
        as_text_(as_text),
        old_(cache.take(root_uid_)) {}
  ~Reuse() {
    cache_.count(hits_, misses_);
    cache_.put(root_uid_, std::move(now_));
  }
  Reuse(const Reuse&) = delete;
  Reuse& operator=(const Reuse&) = delete;

  // The kept fragment of `key` if it was rendered from the same inputs.
  std::optional<ScrapeFragment> find(const MemberKey& key, const ObjectMeta& m,
                                     const AssetStore& assets) {
    if (!keepable(m)) return std::nullopt;
    const auto it = old_.find(key);
    if (it == old_.end() || !current(it->second, m, assets)) {
      ++misses_;
      return std::nullopt;
    }
    ++hits_;
    const FragmentCache::Entry& e = now_.insert_or_assign(key, std::move(it->second)).first->second;
    old_.erase(it);
    ScrapeFragment f = e.fragment;
    if (!e.packed_text.empty()) {
      auto text = std::make_shared<k8s::yaml::Splice>();
      text->indent = e.text_indent;
      text->text = unpack(e.packed_text, e.text_size);
      f.text = std::move(text);
    }
    return f;
  }

  void keep(const MemberKey& key, const ObjectMeta& m, std::vector<AssetRead> reads,
            const ScrapeFragment& fragment) {
    if (!keepable(m)) return;
    FragmentCache::Entry e{m.uid,    m.resource_version, inputs_,
                           as_text_, std::move(reads),   fragment};
    if (fragment.text) {
      e.fragment.text.reset();
      e.packed_text = pack(fragment.text->text);
      e.text_size = fragment.text->text.size();
      e.text_indent = fragment.text->indent;
    }
    now_.insert_or_assign(key, std::move(e));
  }

 private:
  static bool keepable(const ObjectMeta& m) {
    return !m.uid.empty() && !m.resource_version.empty();
  }

  bool current(const FragmentCache::Entry& e, const ObjectMeta& m, const AssetStore& assets) const {
    if (e.uid != m.uid || e.resource_version != m.resource_version || e.root_inputs != inputs_ ||
        e.as_text != as_text_) {
      return false;
    }
    for (const auto& read : e.reads) {
      const auto it = assets.values.find(read.key);
      const bool found = it != assets.values.end();
      if (found != read.value.has_value() || (found && it->second != *read.value)) return false;
    }
    return true;
  }

  FragmentCache& cache_;
  std::string root_uid_;
  std::string inputs_;
  bool as_text_;
  FragmentCache::RootEntries old_;
  FragmentCache::RootEntries now_;
  std::uint64_t hits_ = 0;
  std::uint64_t misses_ = 0;
};

template <class Member, class Render>
void member_fragment(Fragments& f, Reuse* reuse, bool as_text, Kind kind, const Member& m,
                     const Hierarchy& h, const AssetStore& assets, const Options& options,
                     Render&& render) {
  MemberKey key{kind, {m.metadata.ns, m.metadata.name}};
  if (f.members.contains(key)) return;  // selected by an earlier instance too
  if (reuse != nullptr) {
    if (auto kept = reuse->find(key, m.metadata, assets)) {
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
  if (reuse != nullptr) reuse->keep(key, m.metadata, std::move(reads), fragment);
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
                                    const Options& options, FragmentCache* cache,
                                    std::string_view root_inputs, bool as_text) {
  Outcome<Fragments> out;
  std::optional<Reuse> reuse;
  if (cache != nullptr && cache->enabled() && !h.agent.metadata.uid.empty() &&
      !root_inputs.empty()) {
    reuse.emplace(*cache, h.agent.metadata.uid, root_inputs, as_text);
  }
  Reuse* const r = reuse ? &*reuse : nullptr;
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
      member_fragment(f, r, as_text, Kind::service_monitor, sm, h, assets, options,
                      detail::service_monitor_scrape_configs);
    }
    for (const auto& pm : e.pod_monitors) {
      member_fragment(f, r, as_text, Kind::pod_monitor, pm, h, assets, options,
                      detail::pod_monitor_scrape_configs);
    }
    for (const auto& p : e.probes) {
      member_fragment(f, r, as_text, Kind::probe, p, h, assets, options,
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
      member_fragment(f, r, as_text, Kind::pod_logs, pl, h, assets, options,
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
