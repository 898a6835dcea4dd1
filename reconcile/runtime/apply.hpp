// The apply engine: makes the cluster hold what one root's ApplyPlan (apply_plan.hpp)
// says, and reports what happened to each object.
//
// Given the plan's steps in order (objects to apply, objects to delete if this operator
// manages them, owned objects to prune) it creates what is missing, updates what
// differs, and deletes what must go. Reads come from the informer caches of the owned
// kinds (ObjectCache); the API server is read only to recover from a conflict.
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
// What an update preserves (the Grafana Agent operator's merge rules, configurable):
//   * labels and annotations: live overlaid by desired (others' keys are kept, and so are
//     keys the operator stopped setting);
//   * ownerReferences: live plus desired ones whose UID is not present;
//   * `carry_over` paths copied from the live object when the desired one lacks them:
//     by default metadata.finalizers on everything, Service spec.clusterIP(s),
//     ipFamilies, ipFamilyPolicy, and spec.replicas of Deployments/StatefulSets.
//
// Ownership. The engine never takes over an object that is not the root's: before it
// updates or deletes a live object it checks the plan's owner (ApplyPlan::owner_uid: an
// ownerReference with that UID and no controller reference to another owner; without an
// owner UID, the managed-by label). An object that fails the check (a user's object with
// a generated name, another root's object whose generated name collides) is not
// written: its outcome is `not_owned`, the step fails with an error naming the object and
// whose it is, and the controller reports it on the root. One exception waits instead:
// a live object whose every ownerReference names an owner of the root's group, kind and
// name with another UID belongs to an earlier root of that name (deleted and created
// again). That owner is gone, so the garbage collector deletes the object; the engine
// reports `waiting` and creates it once it is gone, rather than adopting it (which would
// race with the collector's delete).
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
//
// Time (expectation and recreate deadlines) comes from the injected clock.
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
#include "reconcile/runtime/apply_plan.hpp"
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

  // Merge rules (true: labels, annotations and ownerReferences of others are kept) or
  // replacement by the desired values (false).
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
  // options to use (StatefulSets with gracePeriodSeconds 5, as upstream).
  std::map<GroupKind, k8s::DeleteOptions> recreate_on_invalid = default_recreate();
  // How long to wait (on the injected clock) for a deleted object to be gone before
  // creating it again, and how often to ask the API server meanwhile.
  net::Duration recreate_timeout = std::chrono::seconds(60);
  net::Duration recreate_poll = std::chrono::milliseconds(200);

  int conflict_retries = 3;
  // How long caches_caught_up() waits for the owned caches to show a root's writes before
  // it gives up waiting (an object deleted by someone meanwhile never shows up).
  net::Duration expectation_timeout = std::chrono::seconds(10);
  // Stop at the first failing step (later steps are skipped, as upstream does); pruning
  // is skipped whenever an object failed.
  bool stop_on_error = true;

  // Leader election: writes happen only while this returns true (nullptr = always).
  std::function<bool()> may_write;
  net::metrics::Registry* registry = nullptr;  // nullptr = the process-wide registry

  static std::map<GroupKind, std::vector<JsonPath>> default_carry_over();
  static std::map<GroupKind, std::vector<JsonPath>> default_drift_ignore();
  static std::map<GroupKind, k8s::DeleteOptions> default_recreate();
};

// What became of one object of a plan.
enum class ObjectResult {
  created,
  updated,
  unchanged,  // already as desired: nothing written
  recreated,  // deleted and created again (an immutable field changed)
  deleted,    // deleted (delete_if_managed, or pruned)
  absent,     // delete_if_managed: not there, or not managed by this operator
  waiting,    // being deleted (or left to the garbage collector): applied once it is gone
  not_owned,  // exists and is not the root's: left as it is (`error` says whose it is)
  failed,     // `error` says why; the steps after it did not run
};

struct ObjectOutcome {
  GroupKind kind;
  k8s::ObjectKey key;
  ObjectResult result = ObjectResult::unchanged;
  // created, updated, recreated: the API server's answer (the object as written, e.g. a
  // new workload's spec and status before the cache shows it).
  boost::json::value written;
  std::string error;  // failed, not_owned: "<Kind> <namespace/name>: <what failed>"
};

struct ApplyReport {
  int created = 0;
  int updated = 0;
  int unchanged = 0;
  int deleted = 0;
  int recreated = 0;
  int conflicts = 0;
  // Every object the steps acted on or decided about, in order (pruned objects where
  // their prune step ran). Objects of steps that did not run are absent.
  std::vector<ObjectOutcome> objects;
  // "<Kind> <namespace/name>: <what failed>", in order (not_owned objects included).
  std::vector<std::string> errors;
  bool write_blocked = false;  // may_write said no: nothing (more) was written
  // A step failed because of the API server (k8s::ApiError::server_failure(), or
  // conflicts that persisted), not because of what was asked: retry soon
  // (ReconcileResult::api_failed).
  bool server_failure = false;
  bool waiting = false;  // an object is being deleted: apply again shortly

  bool ok() const { return errors.empty() && !write_blocked; }
  int writes() const { return created + updated + deleted + recreated; }
  // The objects of one result, as "<Kind> <namespace/name>", in order.
  std::vector<std::string> objects_with(ObjectResult result) const;
  // The outcome of `kind` `key`, or nullptr when no step reached it.
  const ObjectOutcome* find(const GroupKind& kind, const k8s::ObjectKey& key) const;
};

// What happened to an owned object, as an informer reports it.
enum class OwnedEvent { added, updated, deleted };

class ApplyEngine {
 public:
  // `client`, `cache` and `clock` must outlive the engine.
  ApplyEngine(k8s::ApiClient& client, const ObjectCache& cache, ApplyOptions options,
              const net::Clock& clock = net::steady_clock());
  ~ApplyEngine();
  ApplyEngine(const ApplyEngine&) = delete;
  ApplyEngine& operator=(const ApplyEngine&) = delete;

  // Runs one root's plan (which must outlive the call). Safe to call concurrently for
  // different roots.
  boost::asio::awaitable<ApplyReport> apply(const ApplyPlan& plan);

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

  const ApplyOptions& options() const;

  // content_hash() (apply_plan.hpp) with this engine's hash annotation.
  std::string content_hash(const boost::json::object& desired) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// `handler` for owned objects of kind `owned`, minus the echoes of `engine`'s own writes
// (ApplyEngine::unless_own_write). `engine` must outlive the informer the handler is
// added to.
k8s::EventHandler without_own_writes(ApplyEngine& engine, const GroupKind& owned,
                                     k8s::EventHandler handler);

// owner_event_handler() (dependency_index.hpp) without the echoes of `engine`'s writes.
k8s::EventHandler owner_event_handler(GroupKind owner, bool owner_namespaced, bool controller_only,
                                      Enqueue enqueue, ApplyEngine& engine, const GroupKind& owned);

// Pure helpers (apply_merge.cpp), exposed for tests and for controllers.

// Whose a live object is, for a plan with owner `owner_uid` (see Ownership above).
enum class Ownership {
  owned,        // the root's: may be updated or deleted
  not_owned,    // someone else's: left as it is
  stale_owner,  // an earlier root of the same name's: the garbage collector deletes it
};
// `desired`: the object the plan would write (its reference to the root tells a stale
// owner apart), or nullptr for a delete. Without an owner UID the managed-by label of
// `options` decides (always owned when no managed-by value is configured).
Ownership ownership(const k8s::Object& live, std::string_view owner_uid,
                    const boost::json::object* desired, const ApplyOptions& options);
// Why `live` is not the root's, for messages: "controlled by GrafanaAgent other (uid
// ...)", "no ownerReference names this root", "it lacks the label ...".
std::string whose(const k8s::Object& live, std::string_view owner_uid, const ApplyOptions& options);

// True when every field of `desired` is present and equal in `live` (objects: subset of
// keys; arrays: same length, element-wise subset; numbers compared by value).
bool json_subset(const boost::json::value& desired, const boost::json::value& live);

// The body of an update of `live` to `desired` under `options` (merge rules and
// carry-over; `drift_repair` also keeps drift_ignore paths), with the live
// resourceVersion and the hash annotation set.
boost::json::object update_body(const boost::json::object& desired, const boost::json::object& live,
                                const ApplyOptions& options, const std::string& hash,
                                bool drift_repair);

// True when `live` already has everything the update `body` would set: nothing to write.
bool update_is_noop(const boost::json::object& body, const boost::json::object& live);

}  // namespace aop::runtime
