// The apply engine: makes the cluster hold exactly the desired objects of one root.
//
// Given the desired objects (boost::json objects with apiVersion, kind, metadata) it
// creates what is missing, updates what differs, and deletes the root's owned objects
// that are no longer desired. Reads come from the informer caches of the owned kinds
// (ObjectCache); the API server is read only to recover from a conflict.
//
// Idempotence. A SHA-256 of the desired object's canonical JSON (keys sorted) is stored
// in an annotation (`hash_annotation`). A live object carrying the same hash is not
// written. On top of that the engine remembers, per object, the resourceVersion and
// generation its own last write produced: when the live object has moved on since (some
// other writer edited it), the engine compares what it would write with the live object
// (desired fields must be present and equal; server-defaulted extras are fine) and
// writes only if something it owns was changed. An object first seen after a restart is
// taken as the baseline (no write) when its hash matches.
//
// What an update preserves (spec §3.11 of the Grafana Agent operator, configurable):
//   * labels and annotations: live overlaid by desired (others' keys are kept, and so are
//     keys the operator stopped setting);
//   * ownerReferences: live plus desired ones whose UID is not present; a live
//     controller reference to an owner with the same kind and name (a recreated root)
//     is replaced;
//   * `carry_over` paths copied from the live object when the desired one lacks them:
//     by default metadata.finalizers on everything, Service spec.clusterIP(s),
//     ipFamilies, ipFamilyPolicy, and spec.replicas of Deployments/StatefulSets.
//
// Autoscalers and spec.replicas. A controller that knows another actor (an HPA) owns
// replicas omits spec.replicas from the desired object and the live value is carried
// over. A desired spec.replicas is applied on create and whenever the desired content
// changes; it is never re-applied just because the live value drifted (drift repair
// keeps the live spec.replicas, `drift_ignore`), so an autoscaler is not fought in a
// loop: each of its scalings costs at most one comparison and no write.
//
// Echoes. The watch event of the engine's own write (same UID, a resourceVersion one of
// its recent writes produced; or the deletion of an object it deleted) tells the
// controller nothing new: owner_event_handler(..., engine, kind) drops such events, so
// a root is not reconciled a second time by its own writes. Events that arrive before
// the write's answer wait for it. Every other event of an owned object (another
// writer's edit or delete, a workload's status) still reconciles the owner.
//
// Failures. A 409 Conflict (or AlreadyExists on create) re-reads the object from the API
// server and decides again, up to `conflict_retries` times. An update rejected as
// Invalid (422) or NotAcceptable (406) for a kind in `recreate_on_invalid` (immutable
// StatefulSet selector or volumeClaimTemplates, ...) deletes the object, waits until it
// is gone, and creates it again; counted in agent_operator_apply_recreates_total.
//
// Every write is gated by `may_write` (leader election): when it says no, nothing is
// written and the report says so.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "k8s/api_client.hpp"
#include "net/clock.hpp"
#include "net/metrics.hpp"
#include "reconcile/runtime/dependency_index.hpp"
#include "reconcile/runtime/object_cache.hpp"

namespace aop::runtime {

using JsonPath = std::vector<std::string>;

struct ApplyOptions {
  std::string controller = "controller";  // metric label
  std::string hash_annotation = "operator.agent.grafana.com/applied-hash";
  // Pruning only ever deletes objects carrying this label with this value.
  std::string managed_by_label = "app.kubernetes.io/managed-by";
  std::string managed_by_value;

  // Spec §3.11 merge rules (true) or replacement by the desired values (false).
  bool merge_labels = true;
  bool merge_annotations = true;
  bool merge_owner_references = true;

  // Copied from the live object into an update when the desired object lacks them.
  // Applied to every kind: `carry_over_all`; per kind: `carry_over`.
  std::vector<JsonPath> carry_over_all = {{"metadata", "finalizers"}};
  std::map<GroupKind, std::vector<JsonPath>> carry_over = default_carry_over();
  // Kept from the live object when an update only repairs drift (desired unchanged).
  std::map<GroupKind, std::vector<JsonPath>> drift_ignore = default_drift_ignore();

  // Kinds recreated when an update is rejected as Invalid/NotAcceptable, with the delete
  // options to use (spec: StatefulSets with gracePeriodSeconds 5).
  std::map<GroupKind, k8s::DeleteOptions> recreate_on_invalid = default_recreate();
  // How long to wait for a deleted object to be gone before creating it again.
  net::Duration recreate_timeout = std::chrono::seconds(60);
  net::Duration recreate_poll = std::chrono::milliseconds(200);

  int conflict_retries = 3;
  // How long caches_caught_up() waits for the owned caches to show a root's writes before
  // it gives up waiting (an object deleted by someone meanwhile never shows up).
  net::Duration expectation_timeout = std::chrono::seconds(10);
  // Stop at the first failing object (spec §3.1: later steps are skipped); pruning is
  // skipped whenever an object failed.
  bool stop_on_error = true;

  // Leader election: writes happen only while this returns true (nullptr = always).
  std::function<bool()> may_write;
  net::metrics::Registry* registry = nullptr;  // nullptr = the process-wide registry

  static std::map<GroupKind, std::vector<JsonPath>> default_carry_over();
  static std::map<GroupKind, std::vector<JsonPath>> default_drift_ignore();
  static std::map<GroupKind, k8s::DeleteOptions> default_recreate();
};

// Which live objects belong to the root, for pruning: objects of `kinds` carrying the
// managed-by label, and
//   * with an ownerReference to `owner_uid` when it is set (found through the cache's
//     owner-UID index), restricted to `namespaces` when that is not empty;
//   * else in one of `namespaces` (a controller whose objects carry no ownerReference,
//     e.g. across namespaces), further filtered by `owned` when given.
// Neither an owner UID nor namespaces: nothing is pruned.
struct PruneScope {
  std::vector<k8s::GroupVersionKind> kinds;
  std::string owner_uid;
  std::vector<std::string> namespaces;
  std::function<bool(const k8s::Object&)> owned;
  k8s::DeleteOptions delete_options{k8s::PropagationPolicy::background};
};

struct ApplyRequest {
  std::string root;                          // the root key, for logs
  std::vector<boost::json::object> desired;  // applied in this order
  std::optional<PruneScope> prune;           // nullopt: delete nothing
  // content_hash() of each desired object when the caller has them already (computed
  // off the io threads, or cached); any other size: the engine computes them.
  std::vector<std::string> hashes;
};

struct ApplyReport {
  int created = 0;
  int updated = 0;
  int unchanged = 0;
  int deleted = 0;
  int recreated = 0;
  int conflicts = 0;
  // The API server's answers to this apply's creates and updates, in order: the objects
  // as written (e.g. a new workload's spec and status before the cache shows it).
  std::vector<boost::json::value> written;
  // "<Kind> <namespace/name>: <what failed>", in order.
  std::vector<std::string> errors;
  bool write_blocked = false;  // may_write said no: nothing (more) was written
  bool waiting = false;        // an object is being deleted: apply again shortly

  bool ok() const { return errors.empty() && !write_blocked; }
  int writes() const { return created + updated + deleted + recreated; }
};

// What happened to an owned object, as an informer reports it.
enum class OwnedEvent { added, updated, deleted };

class ApplyEngine {
 public:
  // `client` and `cache` must outlive the engine.
  ApplyEngine(k8s::ApiClient& client, const ObjectCache& cache, ApplyOptions options);
  ~ApplyEngine();
  ApplyEngine(const ApplyEngine&) = delete;
  ApplyEngine& operator=(const ApplyEngine&) = delete;

  // Applies one root's desired state. Safe to call concurrently for different roots.
  boost::asio::awaitable<ApplyReport> apply(ApplyRequest request);

  // Expectations (client-go's name for it): after an apply that wrote, the owned caches
  // lag behind the server for a moment, and a reconcile deciding on them would repeat
  // the writes (a create answered AlreadyExists, a delete answered NotFound). This is
  // true once the caches show every object the last writing apply of `root` applied
  // (with its content hash) and none it deleted, or once expectation_timeout passed.
  // Controllers whose own writes trigger reconciles call it first and requeue shortly
  // (e.g. 20 ms) while it is false. Kinds without a cache are not waited for.
  bool caches_caught_up(const std::string& root);

  // Echo suppression. Calls `otherwise` unless the event only reflects this engine's own
  // write: an add or update carrying the UID and a resourceVersion one of the engine's
  // recent creates/updates of the object produced, or the deletion of an object the
  // engine deleted. An echo tells the controller nothing it did not know when it wrote,
  // so it must not reconcile the root again; anything else (another writer's edit or
  // deletion, a workload's status) does. When the event arrives while a write of the
  // object is still awaiting its answer, the verdict (and `otherwise`) waits for that
  // answer. Thread-safe; `otherwise` runs on the calling thread or on the one that
  // received the answer. Counted in agent_operator_apply_echoes_total.
  void unless_own_write(const GroupKind& kind, const k8s::Object& object, OwnedEvent what,
                        std::function<void()> otherwise);
  // Echoes dropped so far.
  std::uint64_t echoes() const;

  // Deletes one object (if present and managed); NotFound is success.
  boost::asio::awaitable<k8s::ApiResult<void>> remove(const k8s::GroupVersionKind& gvk,
                                                      const k8s::ObjectKey& key);

  const ApplyOptions& options() const;

  // The hash stored in `hash_annotation`: SHA-256 (hex) of the canonical JSON of the
  // object without that annotation, resourceVersion and status.
  std::string content_hash(const boost::json::object& desired) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// owner_event_handler() (dependency_index.hpp) for owned objects of kind `owned`, minus
// the echoes of `engine`'s own writes (ApplyEngine::unless_own_write). `engine` must
// outlive the informer the handler is added to.
k8s::EventHandler owner_event_handler(GroupKind owner, bool owner_namespaced, bool controller_only,
                                      Enqueue enqueue, ApplyEngine& engine, const GroupKind& owned);

// Pure helpers, exposed for tests and for controllers.

// JSON with object keys sorted at every level (deterministic bytes for hashing).
std::string canonical_json(const boost::json::value& v);

// True when every field of `desired` is present and equal in `live` (objects: subset of
// keys; arrays: same length, element-wise subset; numbers compared by value).
bool json_subset(const boost::json::value& desired, const boost::json::value& live);

// The body of an update of `live` to `desired` under `options` (merge rules and
// carry-over; `drift_repair` also keeps drift_ignore paths), with the live
// resourceVersion and the hash annotation set.
boost::json::object update_body(const boost::json::object& desired, const boost::json::object& live,
                                const ApplyOptions& options, const std::string& hash,
                                bool drift_repair);

// apiVersion + kind of a JSON object.
std::optional<k8s::GroupVersionKind> gvk_of(const boost::json::object& obj);

}  // namespace aop::runtime
