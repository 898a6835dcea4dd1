// The live controller's reads: the pure core's ClusterView over the shared informer
// caches, and the narrow cache of referenced Secret/ConfigMap contents behind its
// AssetSource.
//
// Secrets and ConfigMaps are cached metadata-only (name, labels, resourceVersion): that
// is enough to notice a change and to know an object exists, and costs nothing for the
// thousands of Secrets a cluster holds that no hierarchy references. The contents of the
// referenced ones are read with GET on demand and kept, per object, for as long as some
// root references it and its resourceVersion is the one the metadata cache shows: an
// unchanged resync reads nothing.
//
// Planning stays pure and synchronous (plan_root takes an AssetSource), so fetching is
// two-phase:
//
//   PlanningAssets assets(caches, contents);
//   RootPlan plan = plan_root(root, {view, assets, options, decode_cache, hash});
//   if (assets.missed())                                   // some content not at hand
//     co_await contents.fetch(client, caches, plan.dependencies.objects);  // GETs
//     ... plan again
//
// In steady state the first plan finds everything and is the only one.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "k8s/api_client.hpp"
#include "k8s/informer_factory.hpp"
#include "reconcile/agent/cluster_view.hpp"
#include "reconcile/agent/hierarchy.hpp"
#include "reconcile/runtime/dependency_index.hpp"

namespace aop::agent {

// The caches the controller reads, one per kind (null for kinds it does not read).
struct LiveCaches {
  std::map<Kind, k8s::KindCache*> members;  // the 5 grafana and 3 coreos kinds, full objects
  k8s::KindCache* namespaces = nullptr;     // metadata-only
  k8s::KindCache* secrets = nullptr;        // metadata-only, every Secret
  k8s::KindCache* config_maps = nullptr;    // metadata-only, every ConfigMap
  // The operator's own workloads and Services (managed-by label), full objects: a root
  // switching backends looks for the other backend's objects.
  std::map<Kind, k8s::KindCache*> workloads;

  // members, namespaces, secrets, config maps, workloads or Services
  k8s::KindCache* of(Kind kind) const;
};

// ClusterView over the caches. Objects whose labels fail the selector hint are skipped;
// the others are handed over as cached (the decode stage decides whether to build JSON).
class LiveClusterView final : public ClusterView {
 public:
  explicit LiveClusterView(const LiveCaches& caches) : caches_(caches) {}

  Result<void> list(Kind kind, std::string_view ns, const k8s::LabelSelector& selector,
                    const std::function<void(const ListedObject&)>& visit) const override;
  // A Namespace missing from the cache is an error (as a failed GET is upstream); its
  // arrival is an event that reconciles the root again.
  Result<Labels> namespace_labels(std::string_view ns) const override;

 private:
  const LiveCaches& caches_;
};

// One referenced Secret or ConfigMap, by identity.
struct AssetObject {
  AssetKind kind = AssetKind::secret;
  std::string ns;
  std::string name;
  auto operator<=>(const AssetObject&) const = default;
  std::string str() const;  // "Secret ns/name"
};

// Contents of referenced Secrets/ConfigMaps, fetched with GET and kept while referenced.
// Thread-safe (reconciles of different roots run in parallel).
class AssetContents {
 public:
  // GETs every Secret/ConfigMap of `objects` whose content is not at hand for the
  // resourceVersion the metadata cache shows (objects absent from the cache are not
  // read: they do not exist). The error names the object and the API failure, never data.
  boost::asio::awaitable<Result<void>> fetch(k8s::ApiClient& client, const LiveCaches& caches,
                                             const std::vector<runtime::ObjectDependency>& objects);

  // Records what `root` references now; contents no root references any more are dropped.
  void retain(const std::string& root, std::set<AssetObject> objects);
  void release(const std::string& root) { retain(root, {}); }
  // The object was deleted: its content goes (the reconcile that fetched it retains it
  // under the root, so nothing else outlives every reference).
  void forget(const AssetObject& id);

  // Held contents (for tests and metrics) and GETs made so far.
  std::size_t size() const;
  std::uint64_t fetches() const;

 private:
  friend class PlanningAssets;
  struct Content {
    std::string seen_rv;                      // the metadata cache's resourceVersion when fetched
    std::string fetched_rv;                   // the GET response's resourceVersion
    bool exists = false;                      // false: the GET answered NotFound
    std::map<std::string, std::string> data;  // decoded
    std::map<std::string, std::string> binary_data;  // ConfigMaps, decoded
  };
  // The content valid for `current_rv`, if held (shared: never copied under the lock).
  std::shared_ptr<const Content> lookup(const AssetObject& id, std::string_view current_rv) const;

  mutable std::mutex mutex_;  // owns contents_, refs_, by_root_, fetches_
  std::map<AssetObject, std::shared_ptr<const Content>> contents_;
  std::map<AssetObject, int> refs_;
  std::map<std::string, std::set<AssetObject>> by_root_;
  std::uint64_t fetches_ = 0;
};

// The AssetSource of one planning pass: existence from the metadata caches, contents from
// AssetContents. A content not at hand is a miss: the lookup fails (so resolution stops
// before rendering) and missed() tells the caller to fetch and plan again. Each object is
// looked up once per pass (validation and asset resolution read the same ones).
class PlanningAssets final : public AssetSource {
 public:
  PlanningAssets(const LiveCaches& caches, const AssetContents& contents)
      : caches_(caches), contents_(contents) {}

  Result<std::optional<SecretData>> secret(std::string_view ns,
                                           std::string_view name) const override;
  Result<std::optional<ConfigMapData>> config_map(std::string_view ns,
                                                  std::string_view name) const override;
  Result<std::optional<std::vector<std::string>>> keys(Kind kind, std::string_view ns,
                                                       std::string_view name) const override;
  // From the metadata caches alone: asking does not make the pass fetch anything.
  Result<bool> exists(Kind kind, std::string_view ns, std::string_view name) const override;

  bool missed() const { return missed_; }

 private:
  // The content of `id` valid now, nullptr when the metadata cache has no such object;
  // an error on a miss. Memoized for the pass.
  Result<std::shared_ptr<const AssetContents::Content>> content(const AssetObject& id) const;

  const LiveCaches& caches_;
  const AssetContents& contents_;
  // One pass runs on one thread: these are its own.
  mutable bool missed_ = false;
  mutable std::map<AssetObject, Result<std::shared_ptr<const AssetContents::Content>>> looked_up_;
};

// The Secret or ConfigMap a dependency names; nullopt for other kinds.
std::optional<AssetObject> asset_object(const runtime::ObjectDependency& dep);

}  // namespace aop::agent
