// The read-only views of the cluster that hierarchy discovery and asset resolution read.
//
// Two implementations exist: the live informer caches (live_view.hpp) and the in-memory
// MemoryCluster (memory_cluster.hpp) used by `agent-operator render` and by tests. Both
// are synchronous and must not block on the network: discovery is a pure function of
// what the view returns. Objects are handed over in the caches' compact form
// (k8s/object.hpp): identity and labels are read without building JSON, and the decode
// stage builds it only for objects whose resourceVersion it has not decoded before.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>

#include "k8s/label_selector.hpp"
#include "k8s/object.hpp"
#include "net/result.hpp"
#include "reconcile/agent/kinds.hpp"
#include "reconcile/agent/types.hpp"

namespace aop::agent {

// One object a view lists: in the caches' compact form, and as JSON when the view holds
// it that way already (MemoryCluster), which spares the decode stage building it.
struct ListedObject {
  const k8s::Object& compact;
  const boost::json::object* json = nullptr;
};

class ClusterView {
 public:
  virtual ~ClusterView() = default;

  // Calls `visit` with every object of `kind` in namespace `ns` (all namespaces when
  // `ns` is empty). `selector` is a hint: an implementation may skip objects whose
  // labels do not match it (e.g. through an index), but discovery re-checks every object
  // it is given. The order of visits does not matter. An error aborts discovery.
  virtual Result<void> list(Kind kind, std::string_view ns, const k8s::LabelSelector& selector,
                            const std::function<void(const ListedObject&)>& visit) const = 0;

  // The labels of Namespace `ns`. An error (including "no such namespace" where the view
  // knows all namespaces) aborts discovery, as upstream's failed Namespace GET does.
  virtual Result<Labels> namespace_labels(std::string_view ns) const = 0;
};

// The data of a referenced Secret or ConfigMap, decoded (Secret `data` is raw bytes, not
// base64).
struct SecretData {
  std::map<std::string, std::string> data;
};
struct ConfigMapData {
  std::map<std::string, std::string> data;
  std::map<std::string, std::string> binary_data;  // decoded bytes
};

// Lookup of referenced Secrets and ConfigMaps by namespace/name. nullopt: the object
// does not exist (not an error: a reference to an absent object renders nothing, as
// upstream). An error: the lookup itself failed.
class AssetSource {
 public:
  virtual ~AssetSource() = default;
  virtual Result<std::optional<SecretData>> secret(std::string_view ns,
                                                   std::string_view name) const = 0;
  virtual Result<std::optional<ConfigMapData>> config_map(std::string_view ns,
                                                          std::string_view name) const = 0;
  // The keys of a Secret (kind secret) or ConfigMap (config_map: those of data, then of
  // binaryData), each sorted; nullopt when it does not exist. The default reads the object; an
  // implementation that holds contents answers without copying the values.
  virtual Result<std::optional<std::vector<std::string>>> keys(Kind kind, std::string_view ns,
                                                               std::string_view name) const {
    std::optional<std::vector<std::string>> out;
    if (kind == Kind::secret) {
      auto s = secret(ns, name);
      if (!s) return s.error();
      if (*s) {
        out.emplace();
        for (const auto& [k, v] : (*s)->data) out->push_back(k);
      }
    } else {
      auto c = config_map(ns, name);
      if (!c) return c.error();
      if (*c) {
        out.emplace();
        for (const auto& [k, v] : (*c)->data) out->push_back(k);
        for (const auto& [k, v] : (*c)->binary_data) out->push_back(k);
      }
    }
    return out;
  }
  // Whether a Secret (kind secret) or ConfigMap (config_map) exists, without its contents:
  // for messages such as "a ConfigMap of that name exists, but this field takes a Secret".
  // The default reads the object; implementations with a metadata cache answer from it.
  virtual Result<bool> exists(Kind kind, std::string_view ns, std::string_view name) const {
    if (kind == Kind::secret) {
      auto s = secret(ns, name);
      if (!s) return s.error();
      return s->has_value();
    }
    auto c = config_map(ns, name);
    if (!c) return c.error();
    return c->has_value();
  }
};

}  // namespace aop::agent
