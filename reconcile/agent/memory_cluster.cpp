#include "reconcile/agent/memory_cluster.hpp"
#include "k8s/base64.hpp"

#include "reconcile/agent/encoding.hpp"

namespace aop::agent {
namespace {

using boost::json::object;

std::string_view str_at(const object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return (v != nullptr && v->is_string()) ? std::string_view(v->get_string()) : std::string_view();
}

const object* obj_at(const object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return (v != nullptr && v->is_object()) ? &v->get_object() : nullptr;
}

std::string_view group_of(std::string_view api_version) {
  const auto slash = api_version.find('/');
  return slash == std::string_view::npos ? std::string_view() : api_version.substr(0, slash);
}

Result<std::map<std::string, std::string>> base64_map(const object* m, std::string_view what) {
  std::map<std::string, std::string> out;
  if (m == nullptr) return out;
  for (const auto& kv : *m) {
    if (!kv.value().is_string()) {
      return make_error(std::string(what) + "." + std::string(kv.key()) + ": expected string");
    }
    auto bytes = k8s::base64_decode(kv.value().get_string());
    if (!bytes) {
      return make_error(std::string(what) + "." + std::string(kv.key()) +
                        ": not valid base64 (write plain text under stringData instead)");
    }
    out[std::string(kv.key())] = std::move(*bytes);
  }
  return out;
}

std::map<std::string, std::string> string_map(const object* m) {
  std::map<std::string, std::string> out;
  if (m == nullptr) return out;
  for (const auto& kv : *m) {
    if (kv.value().is_string()) out[std::string(kv.key())] = std::string(kv.value().get_string());
  }
  return out;
}

}  // namespace

std::optional<Kind> kind_of(const object& o) {
  const auto group = group_of(str_at(o, "apiVersion"));
  const auto kind = str_at(o, "kind");
  if (group == kGrafanaGroup) {
    if (kind == "GrafanaAgent") return Kind::grafana_agent;
    if (kind == "MetricsInstance") return Kind::metrics_instance;
    if (kind == "LogsInstance") return Kind::logs_instance;
    if (kind == "PodLogs") return Kind::pod_logs;
    if (kind == "Integration") return Kind::integration;
  } else if (group == "monitoring.coreos.com") {
    if (kind == "ServiceMonitor") return Kind::service_monitor;
    if (kind == "PodMonitor") return Kind::pod_monitor;
    if (kind == "Probe") return Kind::probe;
  } else if (group.empty()) {
    if (kind == "Secret") return Kind::secret;
    if (kind == "ConfigMap") return Kind::config_map;
    if (kind == "Namespace") return Kind::namespace_;
  }
  return std::nullopt;
}

Result<void> MemoryCluster::add(boost::json::value v) {
  if (!v.is_object()) return make_error("expected a Kubernetes object (a mapping)");
  object& o = v.get_object();
  if (str_at(o, "kind").empty()) return make_error("object has no kind");
  const object* md = obj_at(o, "metadata");
  const auto name = md != nullptr ? str_at(*md, "name") : std::string_view();
  if (name.empty()) {
    return make_error(std::string(str_at(o, "kind")) + " has no metadata.name");
  }
  for (const char* field : {"name", "namespace"}) {
    // A YAML 1.1 scalar such as `namespace: y` reads as a boolean, as with kubectl.
    if (const auto* v = md->if_contains(field); v != nullptr && !v->is_null() && !v->is_string()) {
      return make_error(std::string(str_at(o, "kind")) + " " + std::string(name) + ": metadata." +
                        field + " must be a string (quote it in YAML)");
    }
  }
  const auto kind = kind_of(o);
  if (!kind) return {};
  Key key{std::string(*kind == Kind::namespace_ ? std::string_view() : str_at(*md, "namespace")),
          std::string(name)};
  if (key.ns.empty() && *kind != Kind::namespace_) key.ns = "default";
  // Normalise so that every listed object carries its namespace.
  if (*kind != Kind::namespace_) o["metadata"].as_object()["namespace"] = key.ns;
  // Kept whole: render's input is what the user wrote, nothing is dropped.
  k8s::Transform keep_all;
  keep_all.drop_managed_fields = false;
  keep_all.drop_last_applied = false;
  k8s::ObjectPtr compact = k8s::Object::from_json(v, keep_all);
  objects_[*kind][std::move(key)] = Stored{std::move(o), std::move(compact)};
  return {};
}

std::vector<const object*> MemoryCluster::objects(Kind kind) const {
  std::vector<const object*> out;
  const auto it = objects_.find(kind);
  if (it == objects_.end()) return out;
  for (const auto& [key, o] : it->second) out.push_back(&o.json);
  return out;
}

std::vector<k8s::ObjectPtr> MemoryCluster::compact(Kind kind) const {
  std::vector<k8s::ObjectPtr> out;
  const auto it = objects_.find(kind);
  if (it == objects_.end()) return out;
  for (const auto& [key, o] : it->second) out.push_back(o.compact);
  return out;
}

const object* MemoryCluster::find(Kind kind, std::string_view ns, std::string_view name) const {
  const auto it = objects_.find(kind);
  if (it == objects_.end()) return nullptr;
  const auto found = it->second.find(Key{std::string(ns), std::string(name)});
  return found == it->second.end() ? nullptr : &found->second.json;
}

Result<void> MemoryCluster::list(Kind kind, std::string_view ns, const k8s::LabelSelector&,
                                 const std::function<void(const ListedObject&)>& visit) const {
  const auto it = objects_.find(kind);
  if (it == objects_.end()) return {};
  for (const auto& [key, o] : it->second) {
    if (ns.empty() || key.ns == ns) visit(ListedObject{*o.compact, &o.json});
  }
  return {};
}

Result<Labels> MemoryCluster::namespace_labels(std::string_view ns) const {
  Labels out;
  const object* o = find(Kind::namespace_, "", ns);
  if (o == nullptr) return out;
  const object* md = obj_at(*o, "metadata");
  if (md == nullptr) return out;
  for (auto& [k, v] : string_map(obj_at(*md, "labels"))) out.emplace(k, v);
  return out;
}

Result<std::optional<SecretData>> MemoryCluster::secret(std::string_view ns,
                                                        std::string_view name) const {
  const object* o = find(Kind::secret, ns, name);
  if (o == nullptr) return std::optional<SecretData>();
  auto data = base64_map(obj_at(*o, "data"),
                         "Secret " + std::string(ns) + "/" + std::string(name) + " data");
  if (!data) return data.error();
  SecretData out{std::move(*data)};
  // stringData is write-only sugar the API server merges into data.
  for (auto& [k, v] : string_map(obj_at(*o, "stringData"))) out.data[k] = v;
  return std::optional<SecretData>(std::move(out));
}

Result<std::optional<ConfigMapData>> MemoryCluster::config_map(std::string_view ns,
                                                               std::string_view name) const {
  const object* o = find(Kind::config_map, ns, name);
  if (o == nullptr) return std::optional<ConfigMapData>();
  auto binary = base64_map(obj_at(*o, "binaryData"), "ConfigMap " + std::string(ns) + "/" +
                                                         std::string(name) + " binaryData");
  if (!binary) return binary.error();
  ConfigMapData out{string_map(obj_at(*o, "data")), std::move(*binary)};
  return std::optional<ConfigMapData>(std::move(out));
}

}  // namespace aop::agent
