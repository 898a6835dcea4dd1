// What a root reads, as plain values: the vocabulary of the dependency index
// (dependency_index.hpp) and of the controllers' pure cores, which describe their reads
// in these terms so that the runtime can reconcile the root again when any of it changes.
#pragma once

#include <compare>
#include <map>
#include <string>
#include <vector>

#include "k8s/label_selector.hpp"
#include "k8s/resource.hpp"

namespace aop::runtime {

// A kind independent of its API version (events and reads of one kind may use different
// versions; the index does not care).
struct GroupKind {
  std::string group;  // "" for the core group
  std::string kind;

  static GroupKind of(const k8s::GroupVersionKind& gvk) { return {gvk.group, gvk.kind}; }
  std::string str() const { return group.empty() ? kind : kind + "." + group; }
  auto operator<=>(const GroupKind&) const = default;
};

enum class NamespaceScope {
  one,       // objects in `ns` only ("" for cluster-scoped kinds)
  selected,  // objects in namespaces whose labels match `namespace_selector`
  all,       // objects in every namespace
};

// "Every object of `kind` in these namespaces whose labels match `selector`".
struct KindSelection {
  GroupKind kind;
  NamespaceScope scope = NamespaceScope::one;
  std::string ns;                         // scope == one
  k8s::LabelSelector namespace_selector;  // scope == selected
  k8s::LabelSelector selector;            // LabelSelector::nothing() selects nothing
  bool operator==(const KindSelection&) const = default;
};

struct ObjectDependency {
  GroupKind kind;
  k8s::ObjectKey key;
  auto operator<=>(const ObjectDependency&) const = default;
};

struct RootDependencies {
  std::vector<ObjectDependency> objects;
  std::vector<KindSelection> selections;
  bool operator==(const RootDependencies&) const = default;
};

using Labels = std::map<std::string, std::string, std::less<>>;

}  // namespace aop::runtime
