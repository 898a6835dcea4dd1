// Immutable cached Kubernetes objects in a compact encoding.
//
// A Boost.JSON DOM of a typical object costs about 4x its JSON text (measured: 3424
// bytes for a 613-byte ServiceMonitor), which is what makes Go operators that cache
// every Secret of a cluster run out of memory. Cached objects are therefore stored as
// one contiguous, immutable buffer: a binary encoding of the JSON tree with interned
// object keys and varint lengths, plus the handful of metadata fields every consumer
// needs (namespace, name, uid, resourceVersion, generation, labels) readable without
// decoding. Consumers that need the whole object call `to_json()`, which materializes
// a boost::json::value; typed decoders run on that.
//
// Objects are shared as `ObjectPtr` (std::shared_ptr<const Object>) between the store,
// event handlers and reconciles on any thread: immutability is what makes that safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/fwd.hpp>

#include "k8s/label_selector.hpp"
#include "k8s/resource.hpp"

namespace aop::k8s {

// What a cache keeps of each object (applied before storing).
struct Transform {
  // Drop metadata.managedFields (large, never read by controllers).
  bool drop_managed_fields = true;
  // Drop the kubectl.kubernetes.io/last-applied-configuration annotation (a full copy
  // of the object as applied by kubectl).
  bool drop_last_applied = true;
  // Keep only apiVersion, kind and metadata (PartialObjectMetadata): for kinds whose
  // contents the operator does not hold, such as Secrets and ConfigMaps.
  bool metadata_only = false;
};

struct OwnerReference {
  std::string api_version;
  std::string kind;
  std::string name;
  std::string uid;
  bool controller = false;
  bool block_owner_deletion = false;
};

class Object {
 public:
  // Encodes a JSON object (must be an object with metadata.name). Returns nullptr when
  // the value is not an object.
  static std::shared_ptr<const Object> from_json(const boost::json::value& v,
                                                 const Transform& transform = {});
  // As above, and sets apiVersion and kind from `kind` when the value lacks them (the
  // items of a LIST response carry neither).
  static std::shared_ptr<const Object> from_json(const boost::json::value& v,
                                                 const Transform& transform,
                                                 const GroupVersionKind& kind);

  std::string_view api_version() const;
  std::string_view kind() const;
  std::string_view ns() const;
  std::string_view name() const;
  std::string_view uid() const;
  std::string_view resource_version() const;
  std::int64_t generation() const;
  bool being_deleted() const;  // metadata.deletionTimestamp is set
  ObjectKey key() const { return ObjectKey{std::string(ns()), std::string(name())}; }

  // metadata.labels, usable with LabelSelector::matches.
  const LabelView& labels() const;
  std::optional<std::string_view> label(std::string_view key) const;
  std::optional<std::string_view> annotation(std::string_view key) const;
  std::vector<OwnerReference> owner_references() const;

  // The whole (transformed) object as JSON.
  boost::json::value to_json() const;
  // The value at a path of object keys (e.g. {"spec","destination","namespace"}) as
  // JSON, materializing only that subtree; nullopt when absent.
  std::optional<boost::json::value> at(std::initializer_list<std::string_view> path) const;

  // Bytes held by this object (encoding + bookkeeping), for memory accounting.
  std::size_t memory_bytes() const;
  // Bytes of the binary encoding alone.
  std::size_t encoded_bytes() const;
  // The binary encoding itself (k8s/object.cpp describes it): equal encodings are equal
  // objects. For tests and diagnostics.
  std::string_view encoding() const;

  // Implementation detail, public for allocate_shared: objects are made by the
  // encoders only, in one allocation with their encoding.
  struct Private;
  struct Build;
  explicit Object(Build& b);
  ~Object();
  Object(const Object&) = delete;
  Object& operator=(const Object&) = delete;

 private:
  Private* p_;  // in the same allocation, after the shared_ptr's block
};

using ObjectPtr = std::shared_ptr<const Object>;

// Keys in the process-wide interned-key table (for tests and metrics: it must stay
// bounded whatever keys users put in labels, annotations and data).
std::size_t interned_key_count();

}  // namespace aop::k8s
