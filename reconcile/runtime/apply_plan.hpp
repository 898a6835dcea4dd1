// The apply vocabulary both controllers speak: an ordered plan of what the cluster must
// hold for one root, as plain values. The controllers' pure cores build it; the apply
// engine (apply.hpp) runs it and reports what happened to each object, so no controller
// interprets steps itself.
//
//   ApplyPlan plan{"ns/root"};
//   plan.apply(config_secret, content_hash(config_secret, kHashAnnotation));
//   plan.delete_if_managed(service_gvk, {"ns", "root-operated"});
//   plan.prune(scope);   // owned objects of these kinds the plan does not apply
//
// Steps run in order and the first failure stops the rest (nothing is pruned after a
// failure), so a plan is also a statement of what may go ahead when something is wrong.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "k8s/object.hpp"
#include "k8s/resource.hpp"
#include "reconcile/runtime/dependencies.hpp"

namespace aop::runtime {

// Which live objects belong to the root, for pruning: objects of `kinds` carrying the
// engine's managed-by label and every label of `match_labels`, and
//   * with an ownerReference to `owner_uid` when it is set (a controller reference when
//     `controller_only`), restricted to `namespaces` when that is not empty;
//   * else in one of `namespaces` (a controller whose objects carry no ownerReference,
//     e.g. across namespaces);
// further filtered by `owned` when given. Objects the same plan applies are kept.
// Neither an owner UID nor namespaces: nothing is pruned. Deletes carry a UID
// precondition and background propagation.
struct PruneScope {
  std::vector<k8s::GroupVersionKind> kinds;
  std::string owner_uid;
  bool controller_only = false;
  std::vector<std::string> namespaces;
  Labels match_labels;
  std::function<bool(const k8s::Object&)> owned;
};

struct ApplyStep {
  enum class Action {
    apply,              // create `object`, or update it to `object` when it differs
    delete_if_managed,  // delete `kind` `key` if it exists and is the root's (owner_uid)
    prune,              // delete what `prune` selects, except what the plan applies
  };
  Action action = Action::apply;
  boost::json::object object;  // apply
  // apply: content_hash() of `object` when the planner computed it (off the io threads);
  // empty: the engine computes it.
  std::string hash;
  k8s::GroupVersionKind kind;  // apply, delete_if_managed
  k8s::ObjectKey key;          // apply, delete_if_managed
  PruneScope prune;            // prune
};

struct ApplyPlan {
  std::string root;  // the root key, for logs and expectations
  // The UID of the root object the plan's objects belong to. When set, the engine updates
  // or deletes a live object only if it carries an ownerReference with this UID and no
  // controller reference to another owner; when empty (a controller whose objects have
  // no single owner), only if it carries the engine's managed-by label. Anything else is
  // someone else's object and is left byte-identical (ObjectResult::not_owned).
  std::string owner_uid;
  std::vector<ApplyStep> steps;

  // Appends a step. apply() reads kind and key from the object (apiVersion, kind,
  // metadata.namespace/name).
  void apply(boost::json::object object, std::string hash = {});
  void delete_if_managed(k8s::GroupVersionKind kind, k8s::ObjectKey key);
  void prune(PruneScope scope);

  // The object an apply step of this plan writes, or nullptr.
  const boost::json::object* find(const GroupKind& kind, const k8s::ObjectKey& key) const;
  std::size_t applies() const;
};

// apiVersion + kind of a JSON object.
std::optional<k8s::GroupVersionKind> gvk_of(const boost::json::object& obj);

// Lower-case hex SHA-256 of `data`.
std::string sha256_hex(std::string_view data);

// JSON with object keys sorted at every level (deterministic bytes for hashing).
std::string canonical_json(const boost::json::value& v);

// The hash the engine stores in the `hash_annotation` of what it applies: SHA-256 (hex)
// of the canonical JSON of the object without that annotation, resourceVersion and
// status. Equal hashes mean nothing to write.
std::string content_hash(const boost::json::object& desired, std::string_view hash_annotation);

}  // namespace aop::runtime
