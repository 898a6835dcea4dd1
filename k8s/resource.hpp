// Identifiers of Kubernetes kinds and objects, shared by every layer.
#pragma once

#include <compare>
#include <string>
#include <string_view>

namespace aop::k8s {

struct GroupVersionKind {
  std::string group;  // "" for the core group
  std::string version;
  std::string kind;

  // "v1" or "apps/v1"
  std::string api_version() const { return group.empty() ? version : group + "/" + version; }
  auto operator<=>(const GroupVersionKind&) const = default;
};

struct GroupVersionResource {
  std::string group;
  std::string version;
  std::string resource;  // plural, lower case: "servicemonitors"

  auto operator<=>(const GroupVersionResource&) const = default;
};

// namespace/name of an object; namespace is empty for cluster-scoped objects.
struct ObjectKey {
  std::string ns;
  std::string name;

  std::string str() const { return ns.empty() ? name : ns + "/" + name; }
  auto operator<=>(const ObjectKey&) const = default;
};

}  // namespace aop::k8s
