// The resource types kube-sim serves: the built-in kinds the operator and its tests use,
// and the types CustomResourceDefinitions add at run time (one ResourceType per served
// version; all versions of a resource share one storage collection and no conversion is
// done beyond rewriting apiVersion, i.e. the CRD `None` conversion strategy).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/value.hpp>

#include "tools/kube-sim/api_error.hpp"

namespace aop::sim {

enum class NameRule {
  dns_subdomain,  // most kinds, custom resources
  dns_label,      // namespaces
  dns1035_label,  // services
  path_segment,   // RBAC objects: anything but "/", "%", "." and ".."
};

struct ResourceType {
  std::string group;
  std::string version;
  std::string resource;  // plural
  std::string kind;
  std::string singular;
  std::vector<std::string> short_names;
  std::vector<std::string> categories;
  bool namespaced = true;
  bool status_subresource = false;
  // serviceaccounts/token (the TokenRequest API): POST issues a bearer token.
  bool token_subresource = false;
  // The scale subresource (autoscaling/v1 Scale), when the kind has one: JSON paths of
  // the replica counts and of the label selector (a string for CRDs; built-in kinds
  // render spec.selector).
  std::string scale_spec_path;
  std::string scale_status_path;
  std::string scale_selector_path;
  bool builtin = true;            // strategic merge patch only for built-in kinds
  bool generation = false;        // metadata.generation maintained (spec changes bump it)
  bool create_on_update = false;  // PUT of a missing object creates it
  NameRule name_rule = NameRule::dns_subdomain;
  std::vector<std::string> field_labels;  // field selector keys beyond metadata.name/namespace
  boost::json::value schema;              // custom resources: openAPIV3Schema (null if none)
  boost::json::value printer_columns;     // custom resources: additionalPrinterColumns
  std::string crd_name;                   // custom resources: owning CRD
  bool storage_version = true;

  std::string api_version() const { return group.empty() ? version : group + "/" + version; }
  std::string list_kind() const { return kind + "List"; }
  // Collection identity shared by every version: "configmaps", "deployments.apps".
  std::string storage_key() const { return group.empty() ? resource : resource + "." + group; }
  GroupResource group_resource() const { return {group, resource}; }
};

using TypePtr = std::shared_ptr<const ResourceType>;

struct GroupVersions {
  std::string group;
  std::vector<std::string> versions;  // preferred first
};

class ResourceRegistry {
 public:
  // Starts with the built-in kinds.
  ResourceRegistry();

  TypePtr find(std::string_view group, std::string_view version, std::string_view resource) const;
  // By apiVersion ("apps/v1") and kind ("Deployment").
  TypePtr find_kind(std::string_view api_version, std::string_view kind) const;
  // Any served version of a group+kind (owner references may name another version).
  TypePtr find_group_kind(std::string_view group, std::string_view kind) const;

  // Groups in discovery order: core ("") first, built-in groups, then CRD groups by name.
  std::vector<GroupVersions> groups() const;
  // Types of one group version, in registration order.
  std::vector<TypePtr> types(std::string_view group, std::string_view version) const;
  std::vector<TypePtr> all() const { return types_; }

  // Replaces the types of one CRD (empty `types` removes them).
  void set_crd_types(const std::string& crd_name, std::vector<TypePtr> types);

 private:
  void add(ResourceType t);
  std::vector<TypePtr> types_;
};

// Reads a CustomResourceDefinition (apiextensions.k8s.io/v1), applying the API server's
// defaults to `crd` in place (names.singular, names.listKind, conversion) and validating
// it. Returns the types of its served versions, or the field errors.
struct CrdTypes {
  std::vector<TypePtr> types;
  std::vector<StatusCause> errors;
};
CrdTypes read_crd(boost::json::object& crd);

}  // namespace aop::sim
