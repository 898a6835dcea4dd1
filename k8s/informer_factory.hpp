// Shared informers, and one cache per kind across the namespaces the operator watches.
//
// Both controllers read some kinds (Namespaces above all), and each kind must be listed
// and watched once, not once per reader. With `--namespaces a,b` a namespaced kind is
// one informer per namespace (least privilege: a Role per namespace suffices); without
// it, one cluster-wide informer. A KindCache hides that: it lists, gets and notifies
// across all of them. Cluster-scoped kinds are always one cluster-wide informer.
//
// A kind the API server does not serve (its CRD is not installed) is reported once with
// what to do, shows in unsynced() for /readyz, and discovery is polled until it appears:
// the informer's next retry then finds the resource, without a restart.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include "net/clock.hpp"

#include "k8s/informer.hpp"

namespace aop::k8s {

struct CacheSpec {
  GroupVersionKind gvk;
  bool namespaced = true;
  Transform transform;
  std::string label_selector;  // server-side filter (e.g. managed-by for owned kinds)
  std::string field_selector;

  auto operator<=>(const CacheSpec& o) const {
    return std::tie(gvk, namespaced, transform.drop_managed_fields, transform.drop_last_applied,
                    transform.metadata_only, label_selector, field_selector) <=>
           std::tie(o.gvk, o.namespaced, o.transform.drop_managed_fields,
                    o.transform.drop_last_applied, o.transform.metadata_only, o.label_selector,
                    o.field_selector);
  }
  bool operator==(const CacheSpec& o) const { return (*this <=> o) == 0; }
};

// One kind's objects across the watched namespaces. Thread-safe reads.
class KindCache {
 public:
  KindCache(CacheSpec spec, std::vector<std::unique_ptr<Informer>> informers);

  const CacheSpec& spec() const { return spec_; }
  ObjectPtr get(const ObjectKey& key) const;
  // All objects, or those of one namespace ("" = all).
  std::vector<ObjectPtr> list(std::string_view ns = {}) const;
  std::vector<ObjectPtr> by_index(std::string_view index, std::string_view value) const;
  // The objects of `ns` ("" = all) that `selector` matches. With the label index
  // (add_label_index()), the candidates are those holding one of the values of the
  // selector's first `In` requirement (matchLabels are such requirements) instead of
  // every object of the kind.
  std::vector<ObjectPtr> select(std::string_view ns, const LabelSelector& selector) const;
  std::size_t size() const;
  bool has_synced() const;
  // The health of each informer of the kind (one, or one per namespace), with its namespace.
  std::vector<std::pair<std::string, InformerHealth>> health() const;
  // Both before start(): every informer of the kind gets the handler / index.
  void add_handler(const EventHandler& handler);
  void add_index(const std::string& name, const IndexFunc& fn);
  void add_label_index();

  void start();
  void stop();

 private:
  Informer* for_namespace(std::string_view ns) const;

  CacheSpec spec_;
  std::vector<std::unique_ptr<Informer>> informers_;  // one, or one per namespace
  bool label_index_ = false;
};

class InformerFactory {
 public:
  // `namespaces` empty = cluster-wide informers.
  InformerFactory(boost::asio::any_io_executor executor, ApiClient& client,
                  std::vector<std::string> namespaces);

  // The cache for `spec`, created on first request; the same spec yields the same cache.
  KindCache& cache(const CacheSpec& spec);

  // Starts every cache created so far (and later ones as they are created).
  void start();
  void stop();
  bool all_synced() const;
  // Kinds not yet synced, for /readyz ("ServiceMonitor (not served: is its CRD installed?)").
  std::vector<std::string> unsynced() const;
  // Caches whose watch has not been working for longer than `threshold` (only synced
  // ones: an unsynced cache shows in unsynced()), for /readyz:
  // "ServiceMonitor (disconnected for 212 s)".
  std::vector<std::string> disconnected(net::Duration threshold) const;
  // How often discovery is polled while some kind is not served.
  void set_discovery_period(net::Duration period) { discovery_period_ = period; }
  // The stall timeout of the watches of caches created from now on (InformerOptions).
  void set_watch_stall_timeout(std::chrono::milliseconds timeout) { stall_timeout_ = timeout; }
  const std::vector<std::string>& namespaces() const { return namespaces_; }

 private:
  boost::asio::any_io_executor executor_;
  ApiClient& client_;
  std::vector<std::string> namespaces_;
  mutable std::mutex mutex_;  // owns caches_ and started_
  std::map<CacheSpec, std::unique_ptr<KindCache>> caches_;
  bool started_ = false;
  bool polling_ = false;
  std::map<GroupVersionKind, bool> unserved_;  // kind -> still unserved (owned by mutex_)
  net::Duration discovery_period_ = std::chrono::seconds(30);
  std::chrono::milliseconds stall_timeout_ = kDefaultStallTimeout;
  std::shared_ptr<std::atomic<bool>> stopped_ = std::make_shared<std::atomic<bool>>(false);

  void start_discovery_poll();  // mutex_ held
  boost::asio::awaitable<void> poll_discovery(std::shared_ptr<std::atomic<bool>> stopped);
};

}  // namespace aop::k8s
