#include "reconcile/agent/workload.hpp"

#include <set>

#include "reconcile/agent/hierarchy.hpp"
#include "reconcile/agent/kinds.hpp"
#include "reconcile/agent/sanitize.hpp"
#include "reconcile/agent/validate_integrations.hpp"

namespace aop::agent {
namespace {

using boost::json::array;
using boost::json::object;
using boost::json::value;

constexpr std::string_view kDefaultPortName = "http-metrics";
constexpr std::string_view kDefaultReloaderVersion = "v0.67.1";
constexpr std::string_view kVersionLabelKey = "app.kubernetes.io/version";

std::string str_field(const value& v, std::string_view key) {
  if (!v.is_object()) return {};
  const auto* f = v.get_object().if_contains(key);
  return (f != nullptr && f->is_string()) ? std::string(f->get_string()) : std::string();
}

}  // namespace

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

object object_metadata(const GrafanaAgent& a, const std::string& name, const Labels& labels,
                       bool controller) {
  object md{{"name", name}, {"namespace", a.metadata.ns}};
  if (!labels.empty()) md["labels"] = labels_json(labels);
  md["ownerReferences"] = array{owner_reference(a, controller)};
  return md;
}

object workload_metadata(const GrafanaAgent& a, const std::string& name, const Labels& labels) {
  object md = object_metadata(a, name, labels, true);
  object annotations;
  for (const auto& [k, v] : a.metadata.annotations) {
    if (k.rfind("kubectl.kubernetes.io/", 0) != 0) annotations[k] = v;
  }
  if (!annotations.empty()) md["annotations"] = std::move(annotations);
  return md;
}

object env_value(std::string_view name, std::string_view v) {
  return object{{"name", name}, {"value", v}};
}
object env_field(std::string_view name, std::string_view path) {
  return object{{"name", name}, {"valueFrom", object{{"fieldRef", object{{"fieldPath", path}}}}}};
}
object volume_mount(std::string_view name, std::string_view path, bool read_only) {
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

PodOptions integration_pod_options(const GrafanaAgent& a,
                                   const std::vector<const Integration*>& list) {
  PodOptions o;
  // The validate stage has left out Integrations whose prefixed names the API server
  // would refuse.
  auto prefixed = [&](const Integration& in, const object& item) {
    object copy = item;
    copy["name"] = integration_volume_name(in.metadata, str_field(value(item), "name"));
    return copy;
  };
  bool any_files = false;
  for (const auto* in : list) {
    for (const auto& v : in->spec.volumes) o.volumes.emplace_back(prefixed(*in, v));
    for (const auto& m : in->spec.volume_mounts) o.mounts.emplace_back(prefixed(*in, m));
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
    o.mounts.emplace_back(volume_mount(vol, "/etc/grafana-agent/integrations", true));
  }
  return o;
}

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

PodOptions data_volume_options(const std::optional<StorageSpec>& storage,
                               const std::string& default_name, std::string_view path) {
  PodOptions o;
  std::string name = default_name;
  if (storage && !storage->volume_claim_template_name.empty()) {
    name = storage->volume_claim_template_name;
  }
  o.mounts.emplace_back(volume_mount(name, path, false));
  if (!storage) {
    o.volumes.emplace_back(empty_dir_volume(name));
  } else if (storage->empty_dir) {
    o.volumes.emplace_back(object{{"name", name}, {"emptyDir", *storage->empty_dir}});
  }
  return o;
}

std::optional<object> claim_template(const std::optional<StorageSpec>& storage,
                                     const std::string& default_name) {
  if (!storage || storage->empty_dir) return std::nullopt;
  object claim;
  object src = storage->volume_claim_template.value_or(object());
  for (const char* k : {"apiVersion", "kind"}) {
    if (const auto* v = src.if_contains(k);
        v != nullptr && v->is_string() && !v->get_string().empty()) {
      claim[k] = *v;
    }
  }
  object md;
  md["name"] = storage->volume_claim_template_name.empty() ? default_name
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
  return claim;
}

PodLabels pod_labels(const GrafanaAgent& a, const Labels& selector, const Options& options) {
  PodLabels out;
  out.pod[std::string(kVersionLabelKey)] = sanitize_volume_name(options.operator_version);
  if (a.spec.pod_metadata) {
    for (const auto& [k, v] : a.spec.pod_metadata->labels) out.pod[k] = v;
  }
  for (const auto& [k, v] : selector) out.pod[k] = v;
  for (const auto& [k, v] : options.operator_labels) out.pod[k] = v;
  out.selector = selector;
  for (const auto& [k, v] : options.operator_labels) out.selector[k] = v;
  out.workload = out.pod;
  out.workload.erase(std::string(kVersionLabelKey));
  return out;
}

void append_user_volumes(const GrafanaAgent& a, array& volumes, array& mounts) {
  for (const auto& v : a.spec.volumes) volumes.push_back(v);
  for (const auto& m : a.spec.volume_mounts) mounts.push_back(m);
  for (const auto& s : a.spec.secrets) {
    const std::string vol = sanitize_volume_name("secret-" + s);
    volumes.emplace_back(secret_volume(vol, s));
    mounts.emplace_back(volume_mount(vol, "/var/lib/grafana-agent/extra-secrets/" + s, true));
  }
  for (const auto& c : a.spec.config_maps) {
    const std::string vol = sanitize_volume_name("configmap-" + c);
    volumes.emplace_back(object{{"name", vol}, {"configMap", object{{"name", c}}}});
    mounts.emplace_back(volume_mount(vol, "/var/lib/grafana-agent/extra-configmaps/" + c, true));
  }
}

object reloader_container(const GrafanaAgent& a, array args, array env, array mounts) {
  const auto& spec = a.spec;
  return object{{"name", "config-reloader"},
                {"image", spec.config_reloader_image && !spec.config_reloader_image->empty()
                              ? *spec.config_reloader_image
                              : "quay.io/prometheus-operator/prometheus-config-reloader:" +
                                    (spec.config_reloader_version.empty()
                                         ? std::string(kDefaultReloaderVersion)
                                         : spec.config_reloader_version)},
                {"args", std::move(args)},
                {"env", std::move(env)},
                {"volumeMounts", std::move(mounts)},
                {"resources", object()},
                {"securityContext", object{{"allowPrivilegeEscalation", false},
                                           {"readOnlyRootFilesystem", true},
                                           {"capabilities", object{{"drop", array{"ALL"}}}}}}};
}

object agent_container(const GrafanaAgent& a, std::string_view name, std::string_view image,
                       array args, array env, array mounts, std::int64_t port, bool privileged) {
  const std::string pname = port_name(a);
  return object{
      {"name", name},
      {"image", image},
      {"args", std::move(args)},
      {"ports", array{object{{"name", pname}, {"containerPort", port}, {"protocol", "TCP"}}}},
      {"env", std::move(env)},
      {"volumeMounts", std::move(mounts)},
      {"readinessProbe", object{{"httpGet", object{{"path", "/-/ready"}, {"port", pname}}},
                                {"timeoutSeconds", 3},
                                {"periodSeconds", 5},
                                {"failureThreshold", 120}}},
      {"resources", a.spec.resources ? *a.spec.resources : object()},
      {"securityContext", object{{"privileged", privileged}}},
      {"terminationMessagePolicy", "FallbackToLogsOnError"}};
}

object pod_spec(const GrafanaAgent& a, array containers, array volumes) {
  const auto& spec = a.spec;
  object pod;
  pod["containers"] = std::move(containers);
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
  return pod;
}

}  // namespace aop::agent
