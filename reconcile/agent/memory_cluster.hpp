// An in-memory cluster: a set of JSON objects acting as both ClusterView and
// AssetSource. Used by `agent-operator render` (the objects come from YAML files) and by
// tests. Namespaces that have no Namespace object exist with no labels, as `render`
// specifies.
#pragma once

#include <map>
#include <vector>

#include <boost/json/value.hpp>

#include "reconcile/agent/cluster_view.hpp"

namespace aop::agent {

class MemoryCluster final : public ClusterView, public AssetSource {
 public:
  MemoryCluster() = default;

  // Adds one object (apiVersion, kind, metadata.name[, metadata.namespace]). Objects of
  // kinds the controller does not read are kept but never listed. A later object with the
  // same kind/namespace/name replaces the earlier one. Errors name the problem (not an
  // object, missing kind or name).
  Result<void> add(boost::json::value object);

  // Every stored object of `kind`, sorted by (namespace, name): as given, and in the
  // caches' compact form (what the pipeline reads).
  std::vector<const boost::json::object*> objects(Kind kind) const;
  std::vector<k8s::ObjectPtr> compact(Kind kind) const;

  Result<void> list(Kind kind, std::string_view ns, const k8s::LabelSelector& selector,
                    const std::function<void(const ListedObject&)>& visit) const override;
  Result<Labels> namespace_labels(std::string_view ns) const override;

  Result<std::optional<SecretData>> secret(std::string_view ns,
                                           std::string_view name) const override;
  Result<std::optional<ConfigMapData>> config_map(std::string_view ns,
                                                  std::string_view name) const override;

 private:
  struct Key {
    std::string ns;
    std::string name;
    auto operator<=>(const Key&) const = default;
  };
  const boost::json::object* find(Kind kind, std::string_view ns, std::string_view name) const;

  struct Stored {
    boost::json::object json;
    k8s::ObjectPtr compact;
  };
  std::map<Kind, std::map<Key, Stored>> objects_;
};

// The Kind of a JSON object by apiVersion group and kind; nullopt for kinds the
// controller does not read.
std::optional<Kind> kind_of(const boost::json::object& object);

}  // namespace aop::agent
