// Decoding JSON text straight into cached objects (k8s/object.hpp) as it arrives from
// the network, without building a JSON tree: the items of a LIST response body, and
// the objects of a watch stream's events.
//
// The result is what parsing the text with Boost.JSON and calling Object::from_json on
// each object gives (the same encoding, byte for byte), without allocating and freeing
// a tree of every object on the way: a SAX parser writes the compact encoding directly.
// Pure and synchronous, like net::JsonStreamDecoder: the caller feeds whatever pieces
// the HTTP layer delivered.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/value.hpp>
#include <boost/system/error_code.hpp>

#include "k8s/object.hpp"

namespace aop::k8s {

// Nesting limit of the decoders (CRD objects embed deep OpenAPI schemas).
inline constexpr std::size_t kMaxObjectDepth = 512;

// A LIST response body: {"metadata": {"resourceVersion", "continue"}, "items": [...]}.
class ListDecoder {
 public:
  // `kind` fills apiVersion and kind of items that lack them (a LIST's items carry
  // neither), as Object::from_json(v, transform, kind) does.
  ListDecoder(Transform transform, GroupVersionKind kind);
  ~ListDecoder();
  ListDecoder(const ListDecoder&) = delete;
  ListDecoder& operator=(const ListDecoder&) = delete;

  // Parses the next bytes of the body. On invalid JSON returns the error (a
  // boost::json::error) and stays failed: later calls return it again.
  boost::system::error_code feed(std::string_view bytes);
  // The body ended: fails when it was cut off (boost::json::error::incomplete) or is not
  // a JSON object (boost::system::errc::invalid_argument).
  boost::system::error_code finish();
  // Forgets everything, for a new body (a resent request).
  void reset();

  // The items decoded so far, in order. Items that are not JSON objects are skipped.
  std::vector<ObjectPtr>& items();
  // The list's metadata.resourceVersion and metadata.continue ("" when absent).
  const std::string& resource_version() const;
  const std::string& continue_token() const;
  // The last error as a sentence: "invalid JSON at byte 1234 of the response: ...".
  std::string error_message() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// One event of a watch stream ({"type": ..., "object": {...}}) with its object decoded.
struct DecodedWatchEvent {
  // "ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR" as sent; "" when the event has
  // no type, its type is not a string, or the event is not a JSON object.
  std::string type;
  bool has_object = false;  // the event has an "object" member
  // That member encoded with the decoder's transform, when it is a JSON object and
  // the type is not ERROR.
  ObjectPtr object;
  // For ERROR: the member as JSON (a metav1.Status), untransformed, when it is a JSON
  // object; null otherwise (a Status that is not an object says nothing a client uses).
  boost::json::value status;
};

// A watch response body: one event after another, whatever the read boundaries are.
class WatchDecoder {
 public:
  // Events larger than `max_event_bytes` of JSON fail the stream (the API server's own
  // request limit is 3 MiB; the default is generous without letting a broken stream
  // exhaust memory).
  WatchDecoder(Transform transform, GroupVersionKind kind,
               std::size_t max_event_bytes = std::size_t{64} << 20);
  ~WatchDecoder();
  WatchDecoder(const WatchDecoder&) = delete;
  WatchDecoder& operator=(const WatchDecoder&) = delete;

  // Parses the next bytes and appends each completed event to `out`, in order. On
  // invalid JSON or an oversize event returns the error (a boost::json::error, or
  // errc::value_too_large) and stays failed; events completed before it are appended.
  boost::system::error_code feed(std::string_view bytes, std::vector<DecodedWatchEvent>& out);
  // The stream ended: fails (boost::json::error::incomplete) when an event was cut off.
  boost::system::error_code finish(std::vector<DecodedWatchEvent>& out);
  // "invalid JSON at byte 1234 of the stream: ...", "JSON value larger than ...".
  std::string error_message() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace aop::k8s
