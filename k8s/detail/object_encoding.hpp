// Internal: the writing half of the compact object encoding (k8s/object.cpp describes
// the format), shared by the two encoders: Object::from_json walking a Boost.JSON tree,
// and the stream decoders (k8s/object_stream.cpp) fed by a SAX parser. Both must
// produce the same bytes for the same object, so every decision (which keys are
// interned, which subtrees a Transform drops) lives here once.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "k8s/base64.hpp"
#include "k8s/object.hpp"

namespace aop::k8s::detail {

enum Tag : std::uint8_t {
  kNull = 0x00,
  kFalse = 0x01,
  kTrue = 0x02,
  kInt = 0x03,
  kUint = 0x04,
  kDouble = 0x05,
  kString = 0x06,
  kObject = 0x07,
  kArray = 0x08,
  kBytes = 0x09,        // base64 text kept decoded: varint length, the bytes
  kSmallInt = 0x40,     // 0x40 | value, value in 0..63
  kShortString = 0x80,  // 0x80 | length, length in 0..127
};

inline constexpr std::string_view kLastApplied = "kubectl.kubernetes.io/last-applied-configuration";

// Where a value sits, which decides how its object keys are written and what is dropped.
// base64_map: a map with user keys whose string values are base64 (a Secret's data, a
// ConfigMap's binaryData); base64_value: one of those values.
enum class Context { root, metadata, annotations, user_map, base64_map, base64_value, plain };

// The kinds whose base64 fields the cache keeps decoded (a quarter smaller), re-encoding
// them on output. Decided by the kind given to the encoder (the cache's), else by the
// object's own apiVersion and kind, the same way by both encoders.
enum class RootKind : std::uint8_t { other, secret, config_map };

inline RootKind root_kind(std::string_view api_version, std::string_view kind) {
  if (api_version != "v1") return RootKind::other;
  if (kind == "Secret") return RootKind::secret;
  if (kind == "ConfigMap") return RootKind::config_map;
  return RootKind::other;
}

inline RootKind root_kind(const GroupVersionKind& gvk) {
  if (!gvk.group.empty()) return RootKind::other;
  return root_kind(gvk.version, gvk.kind);
}

// Fields whose values are maps with user-chosen keys: their keys are never interned.
inline bool is_user_map_field(std::string_view key) {
  return key == "labels" || key == "annotations" || key == "data" || key == "binaryData" ||
         key == "stringData" || key == "matchLabels" || key == "nodeSelector";
}

// What to do with the member `key` of an object in context `ctx`.
struct KeyDecision {
  bool drop = false;               // the Transform drops the member
  Context child = Context::plain;  // the context of the member's value
};

inline KeyDecision decide(Context ctx, std::string_view key, const Transform& t, RootKind root) {
  switch (ctx) {
    case Context::root:
      if (t.metadata_only && key != "apiVersion" && key != "kind" && key != "metadata") {
        return {true, Context::plain};
      }
      if (key == "metadata") return {false, Context::metadata};
      if ((root == RootKind::secret && key == "data") ||
          (root == RootKind::config_map && key == "binaryData")) {
        return {false, Context::base64_map};
      }
      break;
    case Context::metadata:
      if (key == "managedFields" && t.drop_managed_fields) return {true, Context::plain};
      if (key == "annotations") return {false, Context::annotations};
      break;
    case Context::annotations:
      if (key == kLastApplied && t.drop_last_applied) return {true, Context::plain};
      return {false, Context::plain};
    case Context::user_map:
      return {false, Context::plain};
    case Context::base64_map:
      return {false, Context::base64_value};
    case Context::base64_value:
    case Context::plain:
      break;
  }
  return {false, is_user_map_field(key) ? Context::user_map : Context::plain};
}

// The key's number in the process-wide table, adding it if there is room and it looks
// like a field name; -1 when it is to be stored inline.
std::int32_t intern_key(std::string_view key);

// The object for a finished encoding (copied into the object's own allocation).
ObjectPtr make_object(std::string_view encoding);

inline std::size_t varint_size(std::uint64_t v) {
  std::size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

inline void put_varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

inline void write_varint(char* dst, std::uint64_t v) {
  while (v >= 0x80) {
    *dst++ = static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  *dst = static_cast<char>(v);
}

// Appends values to an encoding. Containers are written as begin_container, their
// entries (keys and values), end_container with the entry count.
class Writer {
 public:
  explicit Writer(std::string& out) : out_(out) {}

  std::string& buffer() { return out_; }

  void null() { out_.push_back(static_cast<char>(kNull)); }
  void boolean(bool b) { out_.push_back(static_cast<char>(b ? kTrue : kFalse)); }
  void int64(std::int64_t i) {
    if (i >= 0 && i < 64) {
      out_.push_back(static_cast<char>(kSmallInt | i));
    } else {
      out_.push_back(static_cast<char>(kInt));
      put_varint(out_, (static_cast<std::uint64_t>(i) << 1) ^ static_cast<std::uint64_t>(i >> 63));
    }
  }
  void uint64(std::uint64_t u) {
    out_.push_back(static_cast<char>(kUint));
    put_varint(out_, u);
  }
  void double_(double d) {
    out_.push_back(static_cast<char>(kDouble));
    char bytes[sizeof d];
    std::memcpy(bytes, &d, sizeof d);
    out_.append(bytes, sizeof d);
  }
  void string(std::string_view s) {
    if (s.size() < 128) {
      out_.push_back(static_cast<char>(kShortString | s.size()));
    } else {
      out_.push_back(static_cast<char>(kString));
      put_varint(out_, s.size());
    }
    out_.append(s);
  }

  // A string that is base64 text: its bytes when it is canonical (the text comes back
  // exactly on output), else the string.
  void base64_string(std::string_view s) {
    const std::size_t n = base64_decoded_size(s);
    if (n == 0) {
      string(s);
      return;
    }
    const std::size_t at = out_.size();
    out_.push_back(static_cast<char>(kBytes));
    put_varint(out_, n);
    const std::size_t bytes_at = out_.size();
    out_.resize(bytes_at + n);
    if (!base64_decode_canonical(s, out_.data() + bytes_at)) {
      out_.resize(at);
      string(s);
    }
  }

  // An object key in an object of context `ctx`.
  void key(std::string_view k, Context ctx) {
    if (ctx != Context::user_map && ctx != Context::annotations && ctx != Context::base64_map) {
      if (const std::int32_t id = intern_key(k); id >= 0) {
        put_varint(out_, (static_cast<std::uint64_t>(id) << 1) | 1);
        return;
      }
    }
    put_varint(out_, static_cast<std::uint64_t>(k.size()) << 1);
    out_.append(k);
  }

  // Writes the tag and a two-byte placeholder for (L, count); end_container fills them
  // in, moving the entries when the header needs more than two bytes. Returns the
  // placeholder's position.
  std::size_t begin_container(Tag tag) {
    out_.push_back(static_cast<char>(tag));
    const std::size_t at = out_.size();
    out_.append(2, '\0');
    return at;
  }

  void end_container(std::size_t at, std::uint64_t count) {
    const std::size_t body_begin = at + 2;
    const std::size_t body = out_.size() - body_begin;
    const std::size_t count_bytes = varint_size(count);
    const std::uint64_t length = count_bytes + body;
    const std::size_t length_bytes = varint_size(length);
    const std::size_t shift = length_bytes + count_bytes - 2;
    if (shift > 0) {
      out_.resize(out_.size() + shift);
      std::memmove(out_.data() + body_begin + shift, out_.data() + body_begin, body);
    }
    write_varint(out_.data() + at, length);
    write_varint(out_.data() + at + length_bytes, count);
  }

 private:
  std::string& out_;
};

// The entries for apiVersion and kind that Object::from_json adds (in this order, at
// the start of the root object) when a LIST item lacks them; returns how many.
inline std::uint64_t write_kind_fill(Writer& w, const GroupVersionKind& kind, bool api_version,
                                     bool kind_field) {
  std::uint64_t n = 0;
  if (api_version) {
    w.key("apiVersion", Context::root);
    w.string(kind.api_version());
    ++n;
  }
  if (kind_field) {
    w.key("kind", Context::root);
    w.string(kind.kind);
    ++n;
  }
  return n;
}

}  // namespace aop::k8s::detail
