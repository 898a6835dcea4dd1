// The build-objects stage (pipeline.hpp). Each builder returns the object exactly as it
// is sent to the API server; field omission follows the Go types' `omitempty` so that a
// generated object and what upstream sends compare equal.
#include "reconcile/agent/objects.hpp"

#include <set>

#include "k8s/base64.hpp"
#include "reconcile/agent/config.hpp"
#include "reconcile/agent/fragment_cache.hpp"
#include "reconcile/agent/names.hpp"
#include "reconcile/agent/pipeline.hpp"
#include "reconcile/agent/sanitize.hpp"
#include "reconcile/agent/validate_integrations.hpp"
#include "reconcile/agent/workload.hpp"

namespace aop::agent {
namespace {

using boost::json::array;
using boost::json::object;

constexpr std::string_view kDefaultAgentVersion = "v0.44.8";
constexpr std::string_view kDataDir = "/var/lib/grafana-agent/data";
constexpr std::int64_t kAgentPort = 8080;

PodOptions metrics_pod_options(const GrafanaAgent& a, const std::string& workload, int shard,
                               std::int64_t shards, bool with_storage) {
  PodOptions o = data_volume_options(with_storage ? a.spec.storage : std::optional<StorageSpec>(),
                                     workload + "-wal", kDataDir);
  o.selector_labels[std::string(kShardLabel)] = std::to_string(shard);
  o.selector_labels[std::string(kTypeLabel)] = "metrics";
  o.env.emplace_back(env_value("SHARD", std::to_string(shard)));
  o.env.emplace_back(env_value("SHARDS", std::to_string(shards)));
  return o;
}

PodOptions logs_pod_options() {
  PodOptions o;
  o.selector_labels[std::string(kTypeLabel)] = "logs";
  o.privileged = true;
  o.env.emplace_back(env_field("HOSTNAME", "spec.nodeName"));
  o.env.emplace_back(env_value("SHARD", "0"));
  o.volumes.emplace_back(host_path_volume("varlog", "/var/log"));
  o.volumes.emplace_back(host_path_volume("dockerlogs", "/var/lib/docker/containers"));
  o.volumes.emplace_back(host_path_volume("data", kDataDir));
  o.mounts.emplace_back(volume_mount("varlog", "/var/log", true));
  o.mounts.emplace_back(volume_mount("dockerlogs", "/var/lib/docker/containers", true));
  o.mounts.emplace_back(volume_mount("data", kDataDir, false));
  return o;
}

struct PodTemplate {
  object template_;  // {metadata, spec}
  Labels selector;   // workload selector.matchLabels
  Labels workload_labels;
};

// The pod template every workload shares, with the user's containers merged in.
PodTemplate pod_template(const GrafanaAgent& a, const std::string& config_base,
                         const PodOptions& opts, const Options& options) {
  const auto& spec = a.spec;
  const std::string& name = a.metadata.name;
  Labels selector{{"app.kubernetes.io/name", "grafana-agent"},
                  {"app.kubernetes.io/instance", name},
                  {"grafana-agent", name},
                  {std::string(kManagedByKey), std::string(kManagedByValue)},
                  {std::string(kAgentNameLabel), name}};
  for (const auto& [k, v] : opts.selector_labels) selector[k] = v;
  const PodLabels labels = pod_labels(a, selector, options);

  Labels annotations;
  if (spec.pod_metadata) annotations = spec.pod_metadata->annotations;
  annotations["kubectl.kubernetes.io/default-container"] = "grafana-agent";

  array volumes{secret_volume("config", config_base + "-config"), empty_dir_volume("config-out"),
                secret_volume("secrets", name + "-secrets")};
  for (const auto& v : opts.volumes) volumes.push_back(v);
  array mounts{volume_mount("config", "/var/lib/grafana-agent/config-in", true),
               volume_mount("config-out", "/var/lib/grafana-agent/config", false),
               volume_mount("secrets", "/var/lib/grafana-agent/secrets", true)};
  for (const auto& m : opts.mounts) mounts.push_back(m);
  append_user_volumes(a, volumes, mounts);

  array env{env_field("POD_NAME", "metadata.name"), env_value("AGENT_DEPLOY_MODE", "operator")};
  for (const auto& e : opts.env) env.push_back(e);

  object reloader =
      reloader_container(a,
                         array{"--config-file=/var/lib/grafana-agent/config-in/agent.yml",
                               "--config-envsubst-file=/var/lib/grafana-agent/config/agent.yml",
                               "--watch-interval=1m", "--statefulset-ordinal-from-envvar=POD_NAME",
                               "--reload-url=http://127.0.0.1:8080/-/reload"},
                         env, mounts);

  array args{"-config.file=/var/lib/grafana-agent/config/agent.yml", "-config.expand-env=true",
             "-server.http.address=0.0.0.0:8080", "-enable-features=integrations-next"};
  if (spec.enable_config_read_api) args.emplace_back("-config.enable-read-api");
  if (spec.disable_reporting) args.emplace_back("-disable-reporting");
  if (spec.disable_support_bundle) args.emplace_back("-disable-support-bundle");
  const std::string image =
      spec.image && !spec.image->empty()
          ? *spec.image
          : "grafana/agent:" +
                (spec.version.empty() ? std::string(kDefaultAgentVersion) : spec.version);
  object agent = agent_container(a, "grafana-agent", image, std::move(args), std::move(env),
                                 std::move(mounts), kAgentPort, opts.privileged);

  PodTemplate t;
  t.template_ = object{
      {"metadata",
       object{{"labels", labels_json(labels.pod)}, {"annotations", labels_json(annotations)}}},
      {"spec",
       pod_spec(a, merge_containers(array{std::move(reloader), std::move(agent)}, spec.containers),
                std::move(volumes))}};
  t.selector = labels.selector;
  t.workload_labels = labels.workload;
  return t;
}

// One shard's StatefulSet.
object stateful_set(const GrafanaAgent& a, int shard, std::int64_t shards, const Options& options) {
  const std::string& name = a.metadata.name;
  const std::string ss_name = shard == 0 ? name : name + "-shard-" + std::to_string(shard);
  const PodTemplate t =
      pod_template(a, name, metrics_pod_options(a, ss_name, shard, shards, true), options);
  const auto replicas = a.spec.metrics.replicas.value_or(1);

  object spec{{"replicas", replicas < 0 ? 0 : replicas},
              {"selector", object{{"matchLabels", labels_json(t.selector)}}},
              {"serviceName", name + "-operated"},
              {"template", t.template_},
              {"podManagementPolicy", "Parallel"},
              {"updateStrategy", object{{"type", "RollingUpdate"}}}};
  if (auto claim = claim_template(a.spec.storage, ss_name + "-wal")) {
    spec["volumeClaimTemplates"] = array{std::move(*claim)};
  }
  return object{{"apiVersion", "apps/v1"},
                {"kind", "StatefulSet"},
                {"metadata", workload_metadata(a, ss_name, t.workload_labels)},
                {"spec", std::move(spec)}};
}

object daemon_set(const GrafanaAgent& a, const std::string& name, const PodOptions& opts,
                  const Options& options) {
  const PodTemplate t = pod_template(a, name, opts, options);
  return object{{"apiVersion", "apps/v1"},
                {"kind", "DaemonSet"},
                {"metadata", workload_metadata(a, name, t.workload_labels)},
                {"spec", object{{"selector", object{{"matchLabels", labels_json(t.selector)}}},
                                {"template", t.template_},
                                {"updateStrategy", object{{"type", "RollingUpdate"}}}}}};
}

object deployment(const GrafanaAgent& a, const std::string& name, const PodOptions& opts,
                  const Options& options) {
  const PodTemplate t = pod_template(a, name, opts, options);
  return object{{"apiVersion", "apps/v1"},
                {"kind", "Deployment"},
                {"metadata", workload_metadata(a, name, t.workload_labels)},
                {"spec", object{{"selector", object{{"matchLabels", labels_json(t.selector)}}},
                                {"template", t.template_},
                                {"strategy", object{{"type", "RollingUpdate"}}}}}};
}

object secret(const GrafanaAgent& a, const std::string& name, const Labels& labels,
              const std::map<std::string, std::string>& data) {
  object d;
  for (const auto& [k, v] : data) d[k] = k8s::base64_encode(v);
  return object{{"apiVersion", "v1"},
                {"kind", "Secret"},
                {"metadata", object_metadata(a, name, labels, false)},
                {"data", std::move(d)}};
}

// The headless governing Service of the metrics StatefulSets.
object governing_service(const GrafanaAgent& a, const Options& options) {
  const std::string& name = a.metadata.name;
  const Labels labels =
      merge_operator_labels({{std::string(kManagedByKey), std::string(kManagedByValue)},
                             {std::string(kAgentNameLabel), name},
                             {"operated-agent", "true"}},
                            options);
  const std::string pname = port_name(a);
  object selector{{"app.kubernetes.io/name", "grafana-agent"},
                  {std::string(kAgentNameLabel), name}};
  if (options.compat == Compat::fixed) selector[std::string(kTypeLabel)] = "metrics";
  return object{
      {"apiVersion", "v1"},
      {"kind", "Service"},
      {"metadata", object_metadata(a, name + "-operated", labels, true)},
      {"spec", object{{"clusterIP", "None"},
                      {"ports",
                       array{object{{"name", pname}, {"port", kAgentPort}, {"targetPort", pname}}}},
                      {"selector", std::move(selector)}}}};
}

// The config Secret of `file`, or its deletion when the hierarchy does not need it.
// False when it is needed but failed to assemble: the steps end here. `kept`: the root's
// kept chunks of the file's gzip encoding (config_text.hpp).
bool config_secret_step(const Hierarchy& h, ConfigFile file, ConfigTrees& configs,
                        const Options& options, runtime::ApplyPlan& steps,
                        FragmentCache::Use* kept = nullptr) {
  const GrafanaAgent& a = h.agent;
  const std::string secret_name = config_secret_name(a, file);
  if (!config_needed(h, file)) {
    steps.delete_if_managed(gvk(Kind::secret), {a.metadata.ns, secret_name});
    return true;
  }
  auto& tree = configs[file];
  if (!tree) return false;
  const Labels labels =
      merge_operator_labels({{std::string(kManagedByKey), std::string(kManagedByValue)}}, options);
  const ConfigText text = emit_config_text(std::move(*tree), options, configs.members);
  steps.apply(secret(a, secret_name, labels,
                     {{"agent.yml", config_secret_payload(
                                        text, kept != nullptr ? &kept->chunks(file) : nullptr)}}));
  return true;
}

bool labelled_alloy(const k8s::Object& o) {
  return o.label(kBackendLabel) == std::optional<std::string_view>("alloy");
}

}  // namespace

object assets_secret(const GrafanaAgent& a, const AssetStore& assets) {
  // Exactly the managed-by label; the -labels flag is not applied.
  return secret(a, a.metadata.name + "-secrets",
                {{std::string(kManagedByKey), std::string(kManagedByValue)}},
                asset_secret_data(assets, a, nullptr));
}

bool append_integrations(const Hierarchy& h, ConfigTrees& configs, const Options& options,
                         runtime::ApplyPlan& steps) {
  const GrafanaAgent& a = h.agent;
  const std::string& name = a.metadata.name;
  const std::string& ns = a.metadata.ns;
  const auto shards_spec = a.spec.metrics.shards.value_or(1);
  const std::int64_t shards = shards_spec > 1 ? shards_spec : 1;
  std::vector<const Integration*> deploy_set;
  std::vector<const Integration*> ds_set;
  for (const auto& in : h.integrations) (in.spec.all_nodes ? ds_set : deploy_set).push_back(&in);
  const std::string deploy_name = name + "-integrations-deploy";
  const std::string ds_name = name + "-integrations-ds";
  if (!config_secret_step(h, ConfigFile::integrations_deploy, configs, options, steps)) {
    return false;
  }
  if (!config_secret_step(h, ConfigFile::integrations_ds, configs, options, steps)) return false;
  auto integration_options = [&](const std::vector<const Integration*>& set,
                                 const std::string& workload, bool daemon_set) {
    PodOptions integrations = integration_pod_options(a, set);
    integrations.selector_labels[std::string(kTypeLabel)] = "integrations";
    std::vector<PodOptions> inputs{std::move(integrations),
                                   metrics_pod_options(a, workload, 0, shards, false),
                                   logs_pod_options()};
    PodOptions merged = merge_pod_options(inputs);
    // Upstream drops the flag while merging; Compat::fixed keeps the DaemonSet's.
    merged.privileged = daemon_set && options.compat == Compat::fixed;
    return merged;
  };
  if (!deploy_set.empty()) {
    steps.apply(
        deployment(a, deploy_name, integration_options(deploy_set, deploy_name, false), options));
  } else {
    steps.delete_if_managed(gvk(Kind::deployment), {ns, deploy_name});
  }
  if (!ds_set.empty()) {
    steps.apply(daemon_set(a, ds_name, integration_options(ds_set, ds_name, true), options));
  } else {
    steps.delete_if_managed(gvk(Kind::daemon_set), {ns, ds_name});
  }
  return true;
}

std::vector<WorkloadRef> integrations_workloads(const Hierarchy& h) {
  std::vector<WorkloadRef> out;
  const std::string& name = h.agent.metadata.name;
  const std::string& ns = h.agent.metadata.ns;
  if (config_needed(h, ConfigFile::integrations_deploy)) {
    out.push_back({Kind::deployment, {ns, name + "-integrations-deploy"}});
  }
  if (config_needed(h, ConfigFile::integrations_ds)) {
    out.push_back({Kind::daemon_set, {ns, name + "-integrations-ds"}});
  }
  return out;
}

namespace {}  // namespace

Labels merge_operator_labels(Labels m, const Options& options) {
  for (const auto& [k, v] : options.operator_labels) m[k] = v;
  return m;
}

const object* DesiredObjects::find(Kind kind, std::string_view name) const {
  const auto gk = runtime::GroupKind::of(gvk(kind));
  for (const auto& s : plan.steps) {
    if (s.action == runtime::ApplyStep::Action::apply && runtime::GroupKind::of(s.kind) == gk &&
        s.key.name == name) {
      return &s.object;
    }
  }
  return nullptr;
}

namespace {

// The objects of build_objects() before their names are checked.
Outcome<DesiredObjects> objects_in_order(const Hierarchy& h, const AssetStore& assets,
                                         ConfigTrees configs, const Options& options,
                                         FragmentCache::Use* kept) {
  Outcome<DesiredObjects> out;
  const GrafanaAgent& a = h.agent;
  runtime::ApplyPlan& steps = out.value.plan;
  const std::string& name = a.metadata.name;
  const std::string& ns = a.metadata.ns;
  const Labels managed{{std::string(kManagedByKey), std::string(kManagedByValue)}};
  const Labels config_labels = merge_operator_labels(managed, options);

  // Every workload the hierarchy calls for, whatever happens to the steps below.
  const auto shards_spec = a.spec.metrics.shards.value_or(1);
  const std::int64_t shards = shards_spec > 1 ? shards_spec : 1;
  auto& workloads = out.value.workloads;
  if (config_needed(h, ConfigFile::metrics)) {
    for (std::int64_t n = 0; n < shards; ++n) {
      workloads.push_back(
          {Kind::stateful_set, {ns, n == 0 ? name : name + "-shard-" + std::to_string(n)}});
    }
  }
  if (config_needed(h, ConfigFile::logs))
    workloads.push_back({Kind::daemon_set, {ns, name + "-logs"}});
  for (auto& w : integrations_workloads(h)) workloads.push_back(std::move(w));

  auto config_step = [&](ConfigFile file) {
    return config_secret_step(h, file, configs, options, steps, kept);
  };

  // 1. The assets Secret.
  steps.apply(assets_secret(a, assets));

  // 2.–4. Metrics: config, governing Service, one StatefulSet per shard, stale shards.
  const bool metrics = config_needed(h, ConfigFile::metrics);
  if (!config_step(ConfigFile::metrics)) return out;
  if (metrics) {
    steps.apply(governing_service(a, options));
  } else {
    steps.delete_if_managed(gvk(Kind::service), {ns, name + "-operated"});
  }
  if (metrics) {
    for (std::int64_t n = 0; n < shards; ++n) {
      steps.apply(stateful_set(a, static_cast<int>(n), shards, options));
    }
  }
  if (!a.metadata.uid.empty()) {  // never prune without an owner to scope by
    runtime::PruneScope prune;
    prune.kinds = {gvk(Kind::stateful_set)};
    prune.owner_uid = a.metadata.uid;
    prune.controller_only = true;
    prune.namespaces = {ns};
    prune.match_labels = {{std::string(kManagedByKey), std::string(kManagedByValue)},
                          {std::string(kAgentNameLabel), name}};
    // The Alloy backend's StatefulSets carry the same labels; they are not shards.
    prune.owned = [](const k8s::Object& o) { return !labelled_alloy(o); };
    steps.prune(std::move(prune));
  }

  // 5.–6. Logs.
  if (!config_step(ConfigFile::logs)) return out;
  if (config_needed(h, ConfigFile::logs)) {
    steps.apply(daemon_set(a, name + "-logs", logs_pod_options(), options));
  } else {
    steps.delete_if_managed(gvk(Kind::daemon_set), {ns, name + "-logs"});
  }

  // 7.–10. Integrations.
  append_integrations(h, configs, options, steps);
  return out;
}

}  // namespace

Outcome<DesiredObjects> build_objects(const Hierarchy& h, const AssetStore& assets,
                                      ConfigTrees configs, const Options& options,
                                      FragmentCache::Use* kept) {
  auto out = objects_in_order(h, assets, std::move(configs), options, kept);
  // A name the API server would refuse fails the root before any write: applying the
  // steps up to the refused object would leave a half-built root retried forever.
  if (auto e = generated_names_error(h.agent, check_generated_names(out.value.plan.steps))) {
    out.failure = StageFailure{Stage::build_objects, runtime::Errc::invalid_name, std::move(*e)};
    out.value.plan.steps.clear();
  }
  return out;
}

}  // namespace aop::agent
