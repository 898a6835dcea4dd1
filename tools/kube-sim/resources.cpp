#include "tools/kube-sim/resources.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <set>

#include <boost/json.hpp>

#include "tools/kube-sim/schema.hpp"

namespace aop::sim {

namespace json = boost::json;

namespace {

constexpr std::array<std::string_view, 6> kBuiltinGroupOrder = {"",
                                                                "apps",
                                                                "events.k8s.io",
                                                                "coordination.k8s.io",
                                                                "rbac.authorization.k8s.io",
                                                                "apiextensions.k8s.io"};

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

void ResourceRegistry::add(ResourceType t) {
  if (t.singular.empty()) t.singular = lower(t.kind);
  types_.push_back(std::make_shared<const ResourceType>(std::move(t)));
}

ResourceRegistry::ResourceRegistry() {
  // Built with a function returning the value: GCC 12 at -O3 warns (falsely) about
  // copies of a default-constructed local whose strings are assigned piecemeal.
  auto make = [](std::string group, std::string resource, std::string kind) {
    ResourceType t;
    t.group = std::move(group);
    t.version = "v1";
    t.resource = std::move(resource);
    t.kind = std::move(kind);
    return t;
  };
  {
    auto t = make("", "namespaces", "Namespace");
    t.short_names = {"ns"};
    t.namespaced = false;
    t.status_subresource = true;
    t.name_rule = NameRule::dns_label;
    t.field_labels = {"status.phase"};
    add(std::move(t));
  }
  {
    auto t = make("", "configmaps", "ConfigMap");
    t.short_names = {"cm"};
    add(std::move(t));
  }
  {
    auto t = make("", "secrets", "Secret");
    t.field_labels = {"type"};
    add(std::move(t));
  }
  {
    auto t = make("", "services", "Service");
    t.short_names = {"svc"};
    t.categories = {"all"};
    t.status_subresource = true;
    t.name_rule = NameRule::dns1035_label;
    add(std::move(t));
  }
  {
    auto t = make("", "endpoints", "Endpoints");
    t.singular = "endpoints";
    t.short_names = {"ep"};
    t.create_on_update = true;
    add(std::move(t));
  }
  {
    auto t = make("", "events", "Event");
    t.short_names = {"ev"};
    t.create_on_update = true;
    t.name_rule = NameRule::path_segment;
    t.field_labels = {"involvedObject.kind",
                      "involvedObject.namespace",
                      "involvedObject.name",
                      "involvedObject.uid",
                      "involvedObject.apiVersion",
                      "involvedObject.resourceVersion",
                      "involvedObject.fieldPath",
                      "reason",
                      "reportingComponent",
                      "source",
                      "type"};
    add(std::move(t));
  }
  {
    auto t = make("", "pods", "Pod");
    t.short_names = {"po"};
    t.categories = {"all"};
    t.status_subresource = true;
    t.field_labels = {
        "spec.nodeName",    "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
        "spec.hostNetwork", "status.phase",       "status.podIP",       "status.nominatedNodeName"};
    add(std::move(t));
  }
  {
    auto t = make("", "nodes", "Node");
    t.short_names = {"no"};
    t.namespaced = false;
    t.status_subresource = true;
    t.field_labels = {"spec.unschedulable"};
    add(std::move(t));
  }
  {
    auto t = make("", "resourcequotas", "ResourceQuota");
    t.short_names = {"quota"};
    t.status_subresource = true;
    add(std::move(t));
  }
  {
    auto t = make("", "serviceaccounts", "ServiceAccount");
    t.short_names = {"sa"};
    t.token_subresource = true;
    add(std::move(t));
  }
  for (const auto& [res, kind, sn] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"deployments", "Deployment", "deploy"},
           {"statefulsets", "StatefulSet", "sts"},
           {"daemonsets", "DaemonSet", "ds"}}) {
    auto t = make("apps", res, kind);
    if (kind != "DaemonSet") {
      t.scale_spec_path = ".spec.replicas";
      t.scale_status_path = ".status.replicas";
      t.scale_selector_path = ".spec.selector";
    }
    t.short_names = {sn};
    t.categories = {"all"};
    t.status_subresource = true;
    t.generation = true;
    add(std::move(t));
  }
  {
    auto t = make("events.k8s.io", "events", "Event");
    t.short_names = {"ev"};
    t.create_on_update = true;
    t.name_rule = NameRule::path_segment;
    add(std::move(t));
  }
  {
    auto t = make("coordination.k8s.io", "leases", "Lease");
    add(std::move(t));
  }
  {
    auto t = make("policy", "poddisruptionbudgets", "PodDisruptionBudget");
    t.short_names = {"pdb"};
    t.status_subresource = true;
    t.generation = true;
    add(std::move(t));
  }
  for (const auto& [res, kind, namespaced] :
       std::vector<std::tuple<std::string, std::string, bool>>{
           {"roles", "Role", true},
           {"rolebindings", "RoleBinding", true},
           {"clusterroles", "ClusterRole", false},
           {"clusterrolebindings", "ClusterRoleBinding", false}}) {
    auto t = make("rbac.authorization.k8s.io", res, kind);
    t.namespaced = namespaced;
    t.name_rule = NameRule::path_segment;
    add(std::move(t));
  }
  {
    auto t = make("apiextensions.k8s.io", "customresourcedefinitions", "CustomResourceDefinition");
    t.short_names = {"crd", "crds"};
    t.namespaced = false;
    t.status_subresource = true;
    t.generation = true;
    add(std::move(t));
  }
}

TypePtr ResourceRegistry::find(std::string_view group, std::string_view version,
                               std::string_view resource) const {
  for (const auto& t : types_) {
    if (t->group == group && t->version == version && t->resource == resource) return t;
  }
  return nullptr;
}

TypePtr ResourceRegistry::find_kind(std::string_view api_version, std::string_view kind) const {
  std::string_view group;
  std::string_view version = api_version;
  if (auto slash = api_version.find('/'); slash != std::string_view::npos) {
    group = api_version.substr(0, slash);
    version = api_version.substr(slash + 1);
  }
  for (const auto& t : types_) {
    if (t->group == group && t->version == version && t->kind == kind) return t;
  }
  return nullptr;
}

TypePtr ResourceRegistry::find_group_kind(std::string_view group, std::string_view kind) const {
  TypePtr any;
  for (const auto& t : types_) {
    if (t->group == group && t->kind == kind) {
      if (t->storage_version) return t;
      if (!any) any = t;
    }
  }
  return any;
}

std::vector<GroupVersions> ResourceRegistry::groups() const {
  std::vector<GroupVersions> out;
  auto find_group = [&](const std::string& g) -> GroupVersions* {
    for (auto& gv : out) {
      if (gv.group == g) return &gv;
    }
    return nullptr;
  };
  for (const auto g : kBuiltinGroupOrder) out.push_back({std::string(g), {}});
  std::set<std::string> crd_groups;
  for (const auto& t : types_) {
    if (!find_group(t->group)) crd_groups.insert(t->group);
  }
  for (const auto& g : crd_groups) out.push_back({g, {}});
  for (const auto& t : types_) {
    auto* gv = find_group(t->group);
    if (std::find(gv->versions.begin(), gv->versions.end(), t->version) == gv->versions.end()) {
      if (t->storage_version) {
        gv->versions.insert(gv->versions.begin(), t->version);
      } else {
        gv->versions.push_back(t->version);
      }
    }
  }
  std::erase_if(out, [](const GroupVersions& g) { return g.versions.empty(); });
  return out;
}

std::vector<TypePtr> ResourceRegistry::types(std::string_view group,
                                             std::string_view version) const {
  std::vector<TypePtr> out;
  for (const auto& t : types_) {
    if (t->group == group && t->version == version) out.push_back(t);
  }
  return out;
}

void ResourceRegistry::set_crd_types(const std::string& crd_name, std::vector<TypePtr> types) {
  std::erase_if(types_, [&](const TypePtr& t) { return t->crd_name == crd_name; });
  for (auto& t : types) types_.push_back(std::move(t));
}

namespace {

bool is_dns_label(std::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  if (s.front() == '-' || s.back() == '-') return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  });
}

std::string str_at(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->as_string()) : std::string();
}

}  // namespace

CrdTypes read_crd(json::object& crd) {
  CrdTypes out;
  auto& errs = out.errors;
  std::string name;
  if (auto* md = crd.if_contains("metadata"); md != nullptr && md->is_object()) {
    name = str_at(md->as_object(), "name");
  }
  auto* specv = crd.if_contains("spec");
  if (specv == nullptr || !specv->is_object()) {
    errs.push_back(errors::field_required("spec"));
    return out;
  }
  auto& spec = specv->as_object();
  // Before taking references into `spec`: inserting may move its members.
  if (!spec.contains("conversion")) spec["conversion"] = json::object{{"strategy", "None"}};
  const std::string group = str_at(spec, "group");
  if (group.empty()) {
    errs.push_back(errors::field_required("spec.group"));
  } else if (group.find('.') == std::string::npos) {
    errs.push_back(errors::field_invalid("spec.group", errors::quote(group),
                                         "should be a domain with at least one dot"));
  }
  auto* namesv = spec.if_contains("names");
  if (namesv == nullptr || !namesv->is_object()) {
    errs.push_back(errors::field_required("spec.names.plural"));
    errs.push_back(errors::field_required("spec.names.kind"));
    return out;
  }
  auto& names = namesv->as_object();
  const std::string plural = str_at(names, "plural");
  const std::string kind = str_at(names, "kind");
  if (plural.empty()) {
    errs.push_back(errors::field_required("spec.names.plural"));
  } else if (!is_dns_label(plural)) {
    errs.push_back(errors::field_invalid(
        "spec.names.plural", errors::quote(plural),
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
        "and must start and end with an alphanumeric character"));
  }
  if (kind.empty()) errs.push_back(errors::field_required("spec.names.kind"));
  if (!plural.empty() && !group.empty() && name != plural + "." + group) {
    errs.push_back(errors::field_invalid("metadata.name", errors::quote(name),
                                         "must be spec.names.plural+\".\"+spec.group"));
  }
  if (str_at(names, "singular").empty()) names["singular"] = lower(kind);
  if (str_at(names, "listKind").empty()) names["listKind"] = kind + "List";
  const std::string scope = str_at(spec, "scope");
  if (scope != "Namespaced" && scope != "Cluster") {
    errs.push_back(errors::field_not_supported("spec.scope", errors::quote(scope),
                                               {"\"Cluster\"", "\"Namespaced\""}));
  }
  auto* versionsv = spec.if_contains("versions");
  if (versionsv == nullptr || !versionsv->is_array() || versionsv->as_array().empty()) {
    errs.push_back(errors::field_invalid(
        "spec.versions", "null", "must have exactly one version marked as storage version"));
    return out;
  }
  int storage_count = 0;
  std::vector<ResourceType> types;
  std::set<std::string> seen;
  auto& versions = versionsv->as_array();
  for (std::size_t i = 0; i < versions.size(); ++i) {
    const std::string path = "spec.versions[" + std::to_string(i) + "]";
    if (!versions[i].is_object()) {
      errs.push_back(errors::field_invalid(path, "\"" + json::serialize(versions[i]) + "\"",
                                           "must be an object"));
      continue;
    }
    auto& v = versions[i].as_object();
    const std::string vname = str_at(v, "name");
    if (vname.empty()) {
      errs.push_back(errors::field_required(path + ".name"));
      continue;
    }
    if (!seen.insert(vname).second) {
      errs.push_back(errors::field_invalid("spec.versions", errors::quote(vname),
                                           "must contain unique version names"));
    }
    const auto* served = v.if_contains("served");
    const auto* storage = v.if_contains("storage");
    if (served == nullptr || !served->is_bool())
      errs.push_back(errors::field_required(path + ".served"));
    if (storage == nullptr || !storage->is_bool())
      errs.push_back(errors::field_required(path + ".storage"));
    const bool is_storage = storage != nullptr && storage->is_bool() && storage->as_bool();
    if (is_storage) ++storage_count;
    const json::value* schema = nullptr;
    if (const auto* s = v.if_contains("schema"); s != nullptr && s->is_object()) {
      schema = s->as_object().if_contains("openAPIV3Schema");
    }
    if (schema == nullptr) {
      errs.push_back(
          errors::field_required(path + ".schema.openAPIV3Schema", "schemas are required"));
    } else {
      auto sub = check_structural_schema(*schema, path + ".schema.openAPIV3Schema");
      errs.insert(errs.end(), sub.begin(), sub.end());
    }
    if (served == nullptr || !served->is_bool() || !served->as_bool()) continue;
    ResourceType t;
    t.group = group;
    t.version = vname;
    t.resource = plural;
    t.kind = kind;
    t.singular = str_at(names, "singular");
    if (const auto* sn = names.if_contains("shortNames"); sn != nullptr && sn->is_array()) {
      for (const auto& s : sn->as_array()) {
        if (s.is_string()) t.short_names.emplace_back(s.as_string());
      }
    }
    if (const auto* cats = names.if_contains("categories"); cats != nullptr && cats->is_array()) {
      for (const auto& s : cats->as_array()) {
        if (s.is_string()) t.categories.emplace_back(s.as_string());
      }
    }
    t.namespaced = scope != "Cluster";
    if (const auto* sub = v.if_contains("subresources"); sub != nullptr && sub->is_object()) {
      t.status_subresource = sub->as_object().contains("status");
      if (const auto* sc = sub->as_object().if_contains("scale");
          sc != nullptr && sc->is_object()) {
        t.scale_spec_path = str_at(sc->as_object(), "specReplicasPath");
        t.scale_status_path = str_at(sc->as_object(), "statusReplicasPath");
        t.scale_selector_path = str_at(sc->as_object(), "labelSelectorPath");
      }
    }
    t.builtin = false;
    t.generation = true;
    t.name_rule = NameRule::dns_subdomain;
    if (schema != nullptr) t.schema = *schema;
    if (const auto* pc = v.if_contains("additionalPrinterColumns");
        pc != nullptr && pc->is_array()) {
      t.printer_columns = *pc;
    }
    t.crd_name = name;
    t.storage_version = is_storage;
    types.push_back(std::move(t));
  }
  if (storage_count != 1) {
    errs.push_back(errors::field_invalid(
        "spec.versions", "[]apiextensions.CustomResourceDefinitionVersion{...}",
        "must have exactly one version marked as storage version"));
  }
  if (!errs.empty()) return out;
  for (auto& t : types) out.types.push_back(std::make_shared<const ResourceType>(std::move(t)));
  return out;
}

}  // namespace aop::sim
