// Whether two cached objects are the same object: the same encoding, or (when the JSON
// repeated a key, which the stream decoders keep and Object::from_json cannot, or held a
// long number Boost.JSON parses to within an ULP, see same()) the same JSON and the same
// answers to every accessor.
#pragma once

#include <string_view>

#include <boost/json/value.hpp>

#include "fuzz/check.hpp"
#include "k8s/object.hpp"

namespace aop::fuzz {

inline bool same_object(const k8s::Object& a, const k8s::Object& b) {
  if (a.encoding() == b.encoding()) return true;
  const boost::json::value json = a.to_json();
  if (!same(json, b.to_json())) return false;
  if (a.api_version() != b.api_version() || a.kind() != b.kind() || a.ns() != b.ns() ||
      a.name() != b.name() || a.uid() != b.uid() || a.resource_version() != b.resource_version() ||
      a.generation() != b.generation() || a.being_deleted() != b.being_deleted()) {
    return false;
  }
  const auto ao = a.owner_references();
  const auto bo = b.owner_references();
  if (ao.size() != bo.size()) return false;
  for (std::size_t i = 0; i < ao.size(); ++i) {
    if (ao[i].api_version != bo[i].api_version || ao[i].kind != bo[i].kind ||
        ao[i].name != bo[i].name || ao[i].uid != bo[i].uid ||
        ao[i].controller != bo[i].controller ||
        ao[i].block_owner_deletion != bo[i].block_owner_deletion) {
      return false;
    }
  }
  const auto* metadata = json.is_object() ? json.get_object().if_contains("metadata") : nullptr;
  if (metadata != nullptr && metadata->is_object()) {
    for (const char* map : {"labels", "annotations"}) {
      const auto* m = metadata->get_object().if_contains(map);
      if (m == nullptr || !m->is_object()) continue;
      for (const auto& [k, v] : m->get_object()) {
        const auto av = std::string_view(map) == "labels" ? a.label(k) : a.annotation(k);
        const auto bv = std::string_view(map) == "labels" ? b.label(k) : b.annotation(k);
        if (av != bv) return false;
      }
    }
  }
  return true;
}

}  // namespace aop::fuzz
