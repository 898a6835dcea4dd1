// The build-objects stage (pipeline.hpp). Each builder returns the object exactly as it
// is sent to the API server; field omission follows the Go types' `omitempty` so that a
// generated object and what upstream sends compare equal.
#include "reconcile/agent/objects.hpp"

#include <set>

#include "k8s/base64.hpp"
#include "reconcile/agent/config.hpp"
#include "reconcile/agent/encoding.hpp"
#include "reconcile/agent/names.hpp"
#include "reconcile/agent/pipeline.hpp"
#include "reconcile/agent/sanitize.hpp"
#include "reconcile/agent/validate_integrations.hpp"

namespace aop::agent {
namespace {

using boost::json::array;
using boost::json::object;
using boost::json::value;

constexpr std::string_view kDefaultAgentVersion = "v0.44.8";
constexpr std::string_view kDefaultReloaderVersion = "v0.67.1";
constexpr std::string_view kDefaultPortName = "http-metrics";
constexpr std::string_view kDataDir = "/var/lib/grafana-agent/data";
constexpr std::int64_t kAgentPort = 8080;

object labels_json(const Labels& l) {
  object o;
  for (const auto& [k, v] : l) o[k] = v;
  return o;
}

std::string port_name(const GrafanaAgent& a) {
  return a.spec.port_name.empty() ? std::string(kDefaultPortName) : a.spec.port_name;
}

object owner_reference(const GrafanaAgent& a, bool controller) {
  object o{{"apiVersion", std::string(kGrafanaGroup) + "/" + std::string(kGrafanaVersion)},
           {"kind", "GrafanaAgent"},
           {"name", a.metadata.name},
           {"uid", a.metadata.uid},
           {"blockOwnerDeletion", true}};
  if (controller) o["controller"] = true;
  return o;
}

object metadata(const GrafanaAgent& a, const std::string& name, const Labels& labels,
                bool controller) {
  object md{{"name", name}, {"namespace", a.metadata.ns}};
  if (!labels.empty()) md["labels"] = labels_json(labels);
  md["ownerReferences"] = array{owner_reference(a, controller)};
  return md;
}

object env_value(std::string_view name, std::string_view v) {
  return object{{"name", name}, {"value", v}};
}
object env_field(std::string_view name, std::string_view path) {
  return object{{"name", name}, {"valueFrom", object{{"fieldRef", object{{"fieldPath", path}}}}}};
}
object mount(std::string_view name, std::string_view path, bool read_only) {
  object o{{"name", name}, {"mountPath", path}};
  if (read_only) o["readOnly"] = true;
  return o;
}
object secret_volume(std::string_view name, std::string_view secret) {
  return object{{"name", name}, {"secret", object{{"secretName", secret}}}};
}
object empty_dir_volume(std::string_view name) {
  return object{{"name", name}, {"emptyDir", object()}};
}
object host_path_volume(std::string_view name, std::string_view path) {
  return object{{"name", name}, {"hostPath", object{{"path", path}}}};
}

std::string str_field(const value& v, std::string_view key) {
  if (!v.is_object()) return {};
  const auto* f = v.get_object().if_contains(key);
  return (f != nullptr && f->is_string()) ? std::string(f->get_string()) : std::string();
}

// Per-workload additions to the shared pod template (StatefulSet, DaemonSet, Deployment).
struct PodOptions {
  Labels selector_labels;
  array env;
  array volumes;
  array mounts;
  bool privileged = false;
};

PodOptions metrics_pod_options(const GrafanaAgent& a, const std::string& workload, int shard,
                               std::int64_t shards, bool with_storage) {
  PodOptions o;
  o.selector_labels[std::string(kShardLabel)] = std::to_string(shard);
  o.selector_labels[std::string(kTypeLabel)] = "metrics";
  o.env.emplace_back(env_value("SHARD", std::to_string(shard)));
  o.env.emplace_back(env_value("SHARDS", std::to_string(shards)));
  const auto& storage = with_storage ? a.spec.storage : std::optional<StorageSpec>();
  std::string wal = workload + "-wal";
  if (storage && !storage->volume_claim_template_name.empty()) {
    wal = storage->volume_claim_template_name;
  }
  o.mounts.emplace_back(mount(wal, kDataDir, false));
  if (!storage) {
    o.volumes.emplace_back(empty_dir_volume(wal));
  } else if (storage->empty_dir) {
    o.volumes.emplace_back(object{{"name", wal}, {"emptyDir", *storage->empty_dir}});
  }
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
  o.mounts.emplace_back(mount("varlog", "/var/log", true));
  o.mounts.emplace_back(mount("dockerlogs", "/var/lib/docker/containers", true));
  o.mounts.emplace_back(mount("data", kDataDir, false));
  return o;
}

// The Integrations' volumes, mounts and files (their Secret/ConfigMap keys, mounted from
// the assets Secret), names prefixed with the Integration's namespace and name.
PodOptions integration_pod_options(const GrafanaAgent& a,
                                   const std::vector<const Integration*>& list) {
  PodOptions o;
  o.selector_labels[std::string(kTypeLabel)] = "integrations";
  // The validate stage has left out Integrations whose prefixed names the API server
  // would refuse.
  auto prefixed = [&](const Integration& in, const object& item) {
    object copy = item;
    copy["name"] = integration_volume_name(in.metadata, str_field(value(item), "name"));
    return copy;
  };
  bool any_files = false;
  for (const auto* in : list) {
    for (std::size_t i = 0; i < in->spec.volumes.size(); ++i) {
      o.volumes.emplace_back(prefixed(*in, in->spec.volumes[i]));
    }
    for (std::size_t i = 0; i < in->spec.volume_mounts.size(); ++i) {
      o.mounts.emplace_back(prefixed(*in, in->spec.volume_mounts[i]));
    }
    if (!in->spec.secrets.empty() || !in->spec.config_maps.empty()) any_files = true;
  }
  if (any_files) {
    array items;
    std::set<std::string> seen;
    for (const auto* in : list) {
      for (const auto& s : in->spec.secrets) {
        const std::string key = secret_asset_key(in->metadata.ns, s);
        if (!seen.insert(key).second) continue;
        items.emplace_back(
            object{{"key", sanitize_label_name(key)},
                   {"path", "secrets/" + in->metadata.ns + "/" + s.name + "/" + s.key}});
      }
      for (const auto& c : in->spec.config_maps) {
        const std::string key = config_map_asset_key(in->metadata.ns, c);
        if (!seen.insert(key).second) continue;
        items.emplace_back(
            object{{"key", sanitize_label_name(key)},
                   {"path", "configMaps/" + in->metadata.ns + "/" + c.name + "/" + c.key}});
      }
    }
    const std::string vol = a.metadata.name + "-integrations-secrets";
    o.volumes.emplace_back(object{{"name", vol},
                                  {"secret", object{{"secretName", a.metadata.name + "-secrets"},
                                                    {"items", std::move(items)}}}});
    o.mounts.emplace_back(mount(vol, "/etc/grafana-agent/integrations", true));
  }
  return o;
}

// Merges pod options: earlier inputs win; privileged is not merged (as upstream).
PodOptions merge_pod_options(const std::vector<PodOptions>& inputs) {
  PodOptions out;
  std::set<std::string> mount_names;
  std::set<std::string> mount_paths;
  std::set<std::string> volume_names;
  std::set<std::string> env_names;
  for (const auto& in : inputs) {
    for (const auto& [k, v] : in.selector_labels) out.selector_labels.emplace(k, v);
    std::set<std::string> ignored;
    for (const auto& m : in.mounts) {
      const std::string name = str_field(m, "name");
      const std::string path = str_field(m, "mountPath");
      if (mount_names.count(name) != 0 || mount_paths.count(path) != 0) {
        ignored.insert(name);
        continue;
      }
      mount_names.insert(name);
      mount_paths.insert(path);
      out.mounts.push_back(m);
    }
    for (const auto& v : in.volumes) {
      const std::string name = str_field(v, "name");
      if (ignored.count(name) != 0 || volume_names.count(name) != 0) continue;
      volume_names.insert(name);
      out.volumes.push_back(v);
    }
    for (const auto& e : in.env) {
      if (env_names.insert(str_field(e, "name")).second) out.env.push_back(e);
    }
  }
  return out;
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

  Labels pod_labels{{std::string(kVersionLabel), sanitize_volume_name(options.operator_version)}};
  if (spec.pod_metadata) {
    for (const auto& [k, v] : spec.pod_metadata->labels) pod_labels[k] = v;
  }
  for (const auto& [k, v] : selector) pod_labels[k] = v;
  pod_labels = merge_operator_labels(std::move(pod_labels), options);

  Labels annotations;
  if (spec.pod_metadata) annotations = spec.pod_metadata->annotations;
  annotations["kubectl.kubernetes.io/default-container"] = "grafana-agent";

  array volumes{secret_volume("config", config_base + "-config"), empty_dir_volume("config-out"),
                secret_volume("secrets", name + "-secrets")};
  for (const auto& v : opts.volumes) volumes.push_back(v);
  for (const auto& v : spec.volumes) volumes.push_back(v);
  array mounts{mount("config", "/var/lib/grafana-agent/config-in", true),
               mount("config-out", "/var/lib/grafana-agent/config", false),
               mount("secrets", "/var/lib/grafana-agent/secrets", true)};
  for (const auto& m : opts.mounts) mounts.push_back(m);
  for (const auto& m : spec.volume_mounts) mounts.push_back(m);
  for (const auto& s : spec.secrets) {
    const std::string vol = sanitize_volume_name("secret-" + s);
    volumes.emplace_back(secret_volume(vol, s));
    mounts.emplace_back(mount(vol, "/var/lib/grafana-agent/extra-secrets/" + s, true));
  }
  for (const auto& c : spec.config_maps) {
    const std::string vol = sanitize_volume_name("configmap-" + c);
    volumes.emplace_back(object{{"name", vol}, {"configMap", object{{"name", c}}}});
    mounts.emplace_back(mount(vol, "/var/lib/grafana-agent/extra-configmaps/" + c, true));
  }

  array env{env_field("POD_NAME", "metadata.name"), env_value("AGENT_DEPLOY_MODE", "operator")};
  for (const auto& e : opts.env) env.push_back(e);

  const std::string pname = port_name(a);
  object reloader{
      {"name", "config-reloader"},
      {"image",
       spec.config_reloader_image && !spec.config_reloader_image->empty()
           ? *spec.config_reloader_image
           : "quay.io/prometheus-operator/prometheus-config-reloader:" +
                 (spec.config_reloader_version.empty() ? std::string(kDefaultReloaderVersion)
                                                       : spec.config_reloader_version)},
      {"args", array{"--config-file=/var/lib/grafana-agent/config-in/agent.yml",
                     "--config-envsubst-file=/var/lib/grafana-agent/config/agent.yml",
                     "--watch-interval=1m", "--statefulset-ordinal-from-envvar=POD_NAME",
                     "--reload-url=http://127.0.0.1:8080/-/reload"}},
      {"env", env},
      {"volumeMounts", mounts},
      {"resources", object()},
      {"securityContext", object{{"allowPrivilegeEscalation", false},
                                 {"readOnlyRootFilesystem", true},
                                 {"capabilities", object{{"drop", array{"ALL"}}}}}}};

  array args{"-config.file=/var/lib/grafana-agent/config/agent.yml", "-config.expand-env=true",
             "-server.http.address=0.0.0.0:8080", "-enable-features=integrations-next"};
  if (spec.enable_config_read_api) args.emplace_back("-config.enable-read-api");
  if (spec.disable_reporting) args.emplace_back("-disable-reporting");
  if (spec.disable_support_bundle) args.emplace_back("-disable-support-bundle");
  object agent{
      {"name", "grafana-agent"},
      {"image", spec.image && !spec.image->empty()
                    ? *spec.image
                    : "grafana/agent:" + (spec.version.empty() ? std::string(kDefaultAgentVersion)
                                                               : spec.version)},
      {"args", std::move(args)},
      {"ports", array{object{{"name", pname}, {"containerPort", kAgentPort}, {"protocol", "TCP"}}}},
      {"env", std::move(env)},
      {"volumeMounts", std::move(mounts)},
      {"readinessProbe", object{{"httpGet", object{{"path", "/-/ready"}, {"port", pname}}},
                                {"timeoutSeconds", 3},
                                {"periodSeconds", 5},
                                {"failureThreshold", 120}}},
      {"resources", spec.resources ? *spec.resources : object()},
      {"securityContext", object{{"privileged", opts.privileged}}},
      {"terminationMessagePolicy", "FallbackToLogsOnError"}};

  object pod;
  pod["containers"] =
      merge_containers(array{std::move(reloader), std::move(agent)}, spec.containers);
  if (!spec.image_pull_secrets.empty()) pod["imagePullSecrets"] = spec.image_pull_secrets;
  if (!spec.init_containers.empty()) pod["initContainers"] = spec.init_containers;
  if (spec.security_context) pod["securityContext"] = *spec.security_context;
  if (!spec.service_account_name.empty()) pod["serviceAccountName"] = spec.service_account_name;
  if (spec.node_selector && !spec.node_selector->empty()) pod["nodeSelector"] = *spec.node_selector;
  if (!spec.priority_class_name.empty()) pod["priorityClassName"] = spec.priority_class_name;
  if (spec.runtime_class_name) pod["runtimeClassName"] = *spec.runtime_class_name;
  pod["terminationGracePeriodSeconds"] = 4800;
  pod["volumes"] = std::move(volumes);
  if (!spec.tolerations.empty()) pod["tolerations"] = spec.tolerations;
  if (spec.affinity) pod["affinity"] = *spec.affinity;
  if (!spec.topology_spread_constraints.empty()) {
    pod["topologySpreadConstraints"] = spec.topology_spread_constraints;
  }

  PodTemplate t;
  t.template_ = object{{"metadata", object{{"labels", labels_json(pod_labels)},
                                           {"annotations", labels_json(annotations)}}},
                       {"spec", std::move(pod)}};
  t.selector = merge_operator_labels(selector, options);
  t.workload_labels = pod_labels;
  t.workload_labels.erase(std::string(kVersionLabel));
  return t;
}

object workload_metadata(const GrafanaAgent& a, const std::string& name, const PodTemplate& t) {
  object md = metadata(a, name, t.workload_labels, true);
  object annotations;
  for (const auto& [k, v] : a.metadata.annotations) {
    if (k.rfind("kubectl.kubernetes.io/", 0) != 0) annotations[k] = v;
  }
  if (!annotations.empty()) md["annotations"] = std::move(annotations);
  return md;
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
  const auto& storage = a.spec.storage;
  if (storage && !storage->empty_dir) {
    object claim;
    object src = storage->volume_claim_template.value_or(object());
    for (const char* k : {"apiVersion", "kind"}) {
      if (const auto* v = src.if_contains(k);
          v != nullptr && v->is_string() && !v->get_string().empty()) {
        claim[k] = *v;
      }
    }
    object md;
    md["name"] = storage->volume_claim_template_name.empty() ? ss_name + "-wal"
                                                             : storage->volume_claim_template_name;
    if (const auto* m = src.if_contains("metadata"); m != nullptr && m->is_object()) {
      for (const char* k : {"labels", "annotations"}) {
        if (const auto* v = m->get_object().if_contains(k);
            v != nullptr && v->is_object() && !v->get_object().empty()) {
          md[k] = *v;
        }
      }
    }
    claim["metadata"] = std::move(md);
    object cspec;
    if (const auto* s = src.if_contains("spec"); s != nullptr && s->is_object()) {
      cspec = s->get_object();
    }
    if (const auto* am = cspec.if_contains("accessModes"); am == nullptr || am->is_null()) {
      cspec["accessModes"] = array{"ReadWriteOnce"};
    }
    claim["spec"] = std::move(cspec);
    if (const auto* st = src.if_contains("status");
        st != nullptr && st->is_object() && !st->get_object().empty()) {
      claim["status"] = *st;
    }
    spec["volumeClaimTemplates"] = array{std::move(claim)};
  }
  return object{{"apiVersion", "apps/v1"},
                {"kind", "StatefulSet"},
                {"metadata", workload_metadata(a, ss_name, t)},
                {"spec", std::move(spec)}};
}

object daemon_set(const GrafanaAgent& a, const std::string& name, const PodOptions& opts,
                  const Options& options) {
  const PodTemplate t = pod_template(a, name, opts, options);
  return object{{"apiVersion", "apps/v1"},
                {"kind", "DaemonSet"},
                {"metadata", workload_metadata(a, name, t)},
                {"spec", object{{"selector", object{{"matchLabels", labels_json(t.selector)}}},
                                {"template", t.template_},
                                {"updateStrategy", object{{"type", "RollingUpdate"}}}}}};
}

object deployment(const GrafanaAgent& a, const std::string& name, const PodOptions& opts,
                  const Options& options) {
  const PodTemplate t = pod_template(a, name, opts, options);
  return object{{"apiVersion", "apps/v1"},
                {"kind", "Deployment"},
                {"metadata", workload_metadata(a, name, t)},
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
                {"metadata", metadata(a, name, labels, false)},
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
      {"metadata", metadata(a, name + "-operated", labels, true)},
      {"spec", object{{"clusterIP", "None"},
                      {"ports",
                       array{object{{"name", pname}, {"port", kAgentPort}, {"targetPort", pname}}}},
                      {"selector", std::move(selector)}}}};
}

}  // namespace

Labels merge_operator_labels(Labels m, const Options& options) {
  for (const auto& [k, v] : options.operator_labels) m[k] = v;
  return m;
}

std::string config_secret_payload(const std::string& text) {
  return text.size() > kGzipThreshold ? gzip_compress(text) : text;
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
                                         ConfigTrees configs, const Options& options) {
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
  if (config_needed(h, ConfigFile::integrations_deploy)) {
    workloads.push_back({Kind::deployment, {ns, name + "-integrations-deploy"}});
  }
  if (config_needed(h, ConfigFile::integrations_ds)) {
    workloads.push_back({Kind::daemon_set, {ns, name + "-integrations-ds"}});
  }

  // The config Secret of `file`, or its deletion when the hierarchy does not need it.
  // False when it is needed but failed to assemble: the steps end here.
  auto config_step = [&](ConfigFile file) {
    const std::string secret_name = config_secret_name(a, file);
    if (!config_needed(h, file)) {
      steps.delete_if_managed(gvk(Kind::secret), {ns, secret_name});
      return true;
    }
    auto& tree = configs[file];
    if (!tree) return false;
    steps.apply(
        secret(a, secret_name, config_labels,
               {{"agent.yml", config_secret_payload(emit_config(std::move(*tree), options))}}));
    return true;
  };

  // 1. The assets Secret: exactly the managed-by label; the -labels flag is not applied.
  steps.apply(secret(a, name + "-secrets", managed, asset_secret_data(assets, a, nullptr)));

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
  std::vector<const Integration*> deploy_set;
  std::vector<const Integration*> ds_set;
  for (const auto& in : h.integrations) (in.spec.all_nodes ? ds_set : deploy_set).push_back(&in);
  const std::string deploy_name = name + "-integrations-deploy";
  const std::string ds_name = name + "-integrations-ds";
  if (!config_step(ConfigFile::integrations_deploy)) return out;
  if (!config_step(ConfigFile::integrations_ds)) return out;
  auto integration_options = [&](const std::vector<const Integration*>& set,
                                 const std::string& workload, bool daemon_set) {
    std::vector<PodOptions> inputs{integration_pod_options(a, set),
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
  return out;
}

}  // namespace

Outcome<DesiredObjects> build_objects(const Hierarchy& h, const AssetStore& assets,
                                      ConfigTrees configs, const Options& options) {
  auto out = objects_in_order(h, assets, std::move(configs), options);
  // A name the API server would refuse fails the root before any write: applying the
  // steps up to the refused object would leave a half-built root retried forever.
  if (auto e = generated_names_error(h.agent, check_generated_names(out.value.plan.steps))) {
    out.failure = StageFailure{Stage::build_objects, runtime::Errc::invalid_name, std::move(*e)};
    out.value.plan.steps.clear();
  }
  return out;
}

}  // namespace aop::agent
