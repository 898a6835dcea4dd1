// The compact encoding of cached objects.
//
// One contiguous buffer per object, written once and never modified:
//
//   value   := tag payload
//   tag     0x00 null | 0x01 false | 0x02 true
//           0x03 int64   (zigzag varint)     0x04 uint64 (varint; only above INT64_MAX)
//           0x05 double  (8 bytes, native)   0x06 string (varint length, bytes)
//           0x07 object  (varint L, varint count, count x (key value))
//           0x08 array   (varint L, varint count, count x value)
//           0x09 bytes   (varint length, bytes): a base64 string kept decoded
//           0x40..0x7f   small integer 0..63, no payload
//           0x80..0xff   string of length 0..127, bytes follow
//   key     := varint k; k odd: interned key number k >> 1 in the process-wide key
//              table; k even: an inline key of k >> 1 bytes that follow
//
// L is the byte length of everything after it (count and entries), so a lookup skips
// a whole subtree in O(1). Strings dominate Kubernetes objects, so short strings and
// small integers carry their size in the tag. Object keys are mostly the same few
// hundred field names in every object, so they are interned: one or two bytes instead
// of the key text. Keys a user controls (label, annotation and data keys) would grow
// the table without bound, so they are stored inline, as are keys that do not look
// like field names; the table is capped too (kKeyCapacity) and later keys go inline.
//
// Base64 strings (a Secret's data, a ConfigMap's binaryData) are a quarter larger than
// their bytes and are most of a Secret: they are kept decoded, and encoded again when
// the object is materialized. Only canonical base64 is decoded (what the API server
// sends), so the JSON out is always the JSON in.
//
// The metadata fields every consumer reads (namespace, name, uid, resourceVersion,
// generation, labels...) are located once after encoding and kept as offsets.
#include "k8s/object.hpp"

#include <array>
#include <atomic>
#include <cstring>
#include <mutex>

#include <boost/json.hpp>

#include "k8s/base64.hpp"
#include "k8s/detail/object_encoding.hpp"

namespace aop::k8s {
namespace json = boost::json;

namespace {

// --- constants -------------------------------------------------------------------

// The table of interned keys holds at most this many keys. Kubernetes kinds use a few
// hundred distinct field names each; 8192 covers every kind an operator watches with
// room to spare, and bounds the table at well under a megabyte whatever the input.
constexpr std::uint32_t kKeyCapacity = 8192;
// Open-addressing slots (twice the capacity: probes stay short).
constexpr std::uint32_t kKeySlots = 2 * kKeyCapacity;
// Longer keys are not field names; storing them inline costs no more than their text.
constexpr std::size_t kMaxInternedKeyLength = 40;
// Thread-local encoding scratch buffers larger than this are released after use, so
// one huge object does not pin its size per thread.
constexpr std::size_t kScratchKeepBytes = 1u << 20;

using detail::Context;
using detail::kArray;
using detail::kBytes;
using detail::kDouble;
using detail::kFalse;
using detail::kInt;
using detail::kNull;
using detail::kObject;
using detail::kShortString;
using detail::kSmallInt;
using detail::kString;
using detail::kTrue;
using detail::kUint;

// Interning hashes every object key of every cached object: field names are short, so a
// multiply-mix over 8-byte words (inlined) beats the general string hash call.
std::size_t hash(std::string_view key) {
  std::uint64_t h = 0x9e3779b97f4a7c15ULL ^ key.size();
  const char* p = key.data();
  std::size_t n = key.size();
  for (; n >= 8; p += 8, n -= 8) {
    std::uint64_t w = 0;
    std::memcpy(&w, p, 8);
    h = (h ^ w) * 0xff51afd7ed558ccdULL;
    h ^= h >> 32;
  }
  if (n > 0) {
    std::uint64_t w = 0;
    std::memcpy(&w, p, n);
    h = (h ^ w) * 0xff51afd7ed558ccdULL;
    h ^= h >> 32;
  }
  h *= 0xc4ceb9fe1a85ec53ULL;
  return static_cast<std::size_t>(h ^ (h >> 29));
}

// --- the process-wide key table --------------------------------------------------

// Append-only. Lookups are lock-free (a probe of atomic slots); insertions take the
// mutex. A key's text is written before its slot is published with a release store,
// and every reader of an id got it from an encoding that happened after that
// publication, so readers of key(id) need no synchronisation of their own.
class KeyTable {
 public:
  static KeyTable& instance() {
    static KeyTable* table = new KeyTable;  // never destroyed: objects may outlive main
    return *table;
  }

  // The key's number, adding it if there is room; -1 when the table is full.
  std::int32_t find_or_add(std::string_view key) {
    const std::size_t h = hash(key);
    if (const auto id = probe(key, h); id >= 0) return id;
    const std::lock_guard lock(mutex_);
    for (std::size_t i = h & (kKeySlots - 1);; i = (i + 1) & (kKeySlots - 1)) {
      const std::uint32_t slot = slots_[i].load(std::memory_order_relaxed);
      if (slot == 0) {
        const std::uint32_t id = count_;
        if (id >= kKeyCapacity) return -1;
        keys_[id] = store(key);
        ++count_;
        slots_[i].store(id + 1, std::memory_order_release);
        return static_cast<std::int32_t>(id);
      }
      if (keys_[slot - 1] == key) return static_cast<std::int32_t>(slot - 1);
    }
  }

  std::string_view key(std::uint32_t id) const { return keys_[id]; }

  std::uint32_t size() const {
    const std::lock_guard lock(mutex_);
    return count_;
  }

 private:
  KeyTable() = default;

  std::int32_t probe(std::string_view key, std::size_t h) const {
    for (std::size_t i = h & (kKeySlots - 1);; i = (i + 1) & (kKeySlots - 1)) {
      const std::uint32_t slot = slots_[i].load(std::memory_order_acquire);
      if (slot == 0) return -1;
      if (keys_[slot - 1] == key) return static_cast<std::int32_t>(slot - 1);
    }
  }

  std::string_view store(std::string_view key) {
    constexpr std::size_t kChunk = std::size_t{64} * 1024;
    if (chunk_used_ + key.size() > chunk_size_) {
      chunks_.push_back(std::make_unique<char[]>(kChunk));
      chunk_used_ = 0;
      chunk_size_ = kChunk;
    }
    char* dst = chunks_.back().get() + chunk_used_;
    std::memcpy(dst, key.data(), key.size());
    chunk_used_ += key.size();
    return {dst, key.size()};
  }

  std::array<std::atomic<std::uint32_t>, kKeySlots> slots_{};  // 0 = empty, else id + 1
  std::array<std::string_view, kKeyCapacity> keys_{};
  mutable std::mutex mutex_;  // owns count_, chunks_ and writes to slots_/keys_
  std::uint32_t count_ = 0;
  std::vector<std::unique_ptr<char[]>> chunks_;
  std::size_t chunk_used_ = 0;
  std::size_t chunk_size_ = 0;
};

bool looks_like_field_name(std::string_view key) {
  if (key.empty() || key.size() > kMaxInternedKeyLength) return false;
  for (const char c : key) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '$';
    if (!ok) return false;
  }
  return true;
}

// --- encoding from a JSON tree --------------------------------------------------------

class Encoder {
 public:
  Encoder(std::string& out, const Transform& t) : w_(out), t_(t) {}

  void root(const json::object& o, const GroupVersionKind* fill) {
    if (fill != nullptr) {
      root_ = detail::root_kind(*fill);
    } else {
      const auto* api_version = o.if_contains("apiVersion");
      const auto* kind = o.if_contains("kind");
      if (api_version != nullptr && api_version->is_string() && kind != nullptr &&
          kind->is_string()) {
        root_ = detail::root_kind(api_version->get_string(), kind->get_string());
      }
    }
    const std::size_t at = w_.begin_container(kObject);
    std::uint64_t count = 0;
    if (fill != nullptr) {
      count += detail::write_kind_fill(w_, *fill, !o.contains("apiVersion"), !o.contains("kind"));
    }
    object_entries(o, Context::root, count);
    w_.end_container(at, count);
  }

 private:
  void value(const json::value& v, Context ctx) {
    switch (v.kind()) {
      case json::kind::null:
        w_.null();
        break;
      case json::kind::bool_:
        w_.boolean(v.get_bool());
        break;
      case json::kind::int64:
        w_.int64(v.get_int64());
        break;
      case json::kind::uint64:
        w_.uint64(v.get_uint64());
        break;
      case json::kind::double_:
        w_.double_(v.get_double());
        break;
      case json::kind::string:
        if (ctx == Context::base64_value) {
          w_.base64_string(v.get_string());
        } else {
          w_.string(v.get_string());
        }
        break;
      case json::kind::array: {
        const std::size_t at = w_.begin_container(kArray);
        const auto& a = v.get_array();
        for (const auto& e : a) value(e, Context::plain);
        w_.end_container(at, a.size());
        break;
      }
      case json::kind::object: {
        const std::size_t at = w_.begin_container(kObject);
        std::uint64_t count = 0;
        object_entries(v.get_object(), ctx, count);
        w_.end_container(at, count);
        break;
      }
    }
  }

  void object_entries(const json::object& o, Context ctx, std::uint64_t& count) {
    for (const auto& kv : o) {
      const std::string_view k = kv.key();
      const detail::KeyDecision d = detail::decide(ctx, k, t_, root_);
      if (d.drop) continue;
      w_.key(k, ctx);
      value(kv.value(), d.child);
      ++count;
    }
  }

  detail::Writer w_;
  const Transform& t_;
  detail::RootKind root_ = detail::RootKind::other;
};

// --- reading -----------------------------------------------------------------------

std::uint64_t get_varint(const std::uint8_t*& p) {
  std::uint64_t v = 0;
  int shift = 0;
  while (*p & 0x80) {
    v |= static_cast<std::uint64_t>(*p++ & 0x7f) << shift;
    shift += 7;
  }
  v |= static_cast<std::uint64_t>(*p++) << shift;
  return v;
}

void skip_value(const std::uint8_t*& p) {
  const std::uint8_t tag = *p++;
  if (tag & kShortString) {
    p += tag & 0x7f;
    return;
  }
  if (tag & kSmallInt) return;
  switch (tag) {
    case kNull:
    case kFalse:
    case kTrue:
      return;
    case kInt:
    case kUint:
      get_varint(p);
      return;
    case kDouble:
      p += sizeof(double);
      return;
    case kString:
    case kBytes:
    case kObject:
    case kArray: {
      const std::uint64_t n = get_varint(p);
      p += n;
      return;
    }
    default:
      return;
  }
}

std::string_view read_key(const std::uint8_t*& p) {
  const std::uint64_t k = get_varint(p);
  if (k & 1) return KeyTable::instance().key(static_cast<std::uint32_t>(k >> 1));
  const std::size_t n = k >> 1;
  const std::string_view s(reinterpret_cast<const char*>(p), n);
  p += n;
  return s;
}

// A string value at p, or nullopt when the value there is not a string.
std::optional<std::string_view> read_string(const std::uint8_t* p) {
  const std::uint8_t tag = *p++;
  std::size_t n = 0;
  if (tag & kShortString) {
    n = tag & 0x7f;
  } else if (tag == kString) {
    n = get_varint(p);
  } else {
    return std::nullopt;
  }
  return std::string_view(reinterpret_cast<const char*>(p), n);
}

// Entries of the object at p: calls fn(key, value_ptr) until it returns false.
template <class Fn>
void for_each_entry(const std::uint8_t* p, Fn&& fn) {
  if (*p++ != kObject) return;
  get_varint(p);  // L
  const std::uint64_t count = get_varint(p);
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::string_view k = read_key(p);
    if (!fn(k, p)) return;
    skip_value(p);
  }
}

// The value of `key`. A key that appears twice (JSON allows it; the decoders of
// k8s/object_stream keep every member) resolves to its last value, as in Go's
// encoding/json and Boost.JSON, so lookups agree with to_json().
const std::uint8_t* find_entry(const std::uint8_t* obj, std::string_view key) {
  const std::uint8_t* found = nullptr;
  for_each_entry(obj, [&](std::string_view k, const std::uint8_t* v) {
    if (k == key) found = v;
    return true;
  });
  return found;
}

void materialize(const std::uint8_t*& p, json::value_stack& st) {
  const std::uint8_t tag = *p++;
  if (tag & kShortString) {
    const std::size_t n = tag & 0x7f;
    st.push_string({reinterpret_cast<const char*>(p), n});
    p += n;
    return;
  }
  if (tag & kSmallInt) {
    st.push_int64(tag & 0x3f);
    return;
  }
  switch (tag) {
    case kNull:
      st.push_null();
      return;
    case kFalse:
      st.push_bool(false);
      return;
    case kTrue:
      st.push_bool(true);
      return;
    case kInt: {
      const std::uint64_t z = get_varint(p);
      st.push_int64(static_cast<std::int64_t>((z >> 1) ^ (~(z & 1) + 1)));
      return;
    }
    case kUint:
      st.push_uint64(get_varint(p));
      return;
    case kDouble: {
      double d = 0;
      std::memcpy(&d, p, sizeof d);
      p += sizeof d;
      st.push_double(d);
      return;
    }
    case kString: {
      const std::size_t n = get_varint(p);
      st.push_string({reinterpret_cast<const char*>(p), n});
      p += n;
      return;
    }
    case kBytes: {
      // Base64 again, a piece at a time (no string of the whole text in between).
      std::size_t n = get_varint(p);
      constexpr std::size_t kPiece = std::size_t{3} * 1024;
      char text[kPiece / 3 * 4];
      while (n > kPiece) {
        base64_encode_to({reinterpret_cast<const char*>(p), kPiece}, text);
        st.push_chars({text, sizeof text});
        p += kPiece;
        n -= kPiece;
      }
      base64_encode_to({reinterpret_cast<const char*>(p), n}, text);
      st.push_string({text, (n + 2) / 3 * 4});
      p += n;
      return;
    }
    case kObject: {
      get_varint(p);
      const std::uint64_t count = get_varint(p);
      for (std::uint64_t i = 0; i < count; ++i) {
        st.push_key(read_key(p));
        materialize(p, st);
      }
      st.push_object(count);
      return;
    }
    case kArray: {
      get_varint(p);
      const std::uint64_t count = get_varint(p);
      for (std::uint64_t i = 0; i < count; ++i) materialize(p, st);
      st.push_array(count);
      return;
    }
    default:
      st.push_null();  // unreachable for buffers this file wrote
      return;
  }
}

json::value materialize_at(const std::uint8_t* p) {
  // One value_stack per thread: its internal buffer is reused across calls.
  thread_local json::value_stack st;
  st.reset();
  materialize(p, st);
  return st.release();
}

// glibc malloc's usable chunk for a request of n bytes (16-byte granularity, 8 bytes
// of header, 32-byte minimum), for honest memory accounting.
std::size_t malloc_chunk(std::size_t n) {
  const std::size_t c = (n + 8 + 15) & ~static_cast<std::size_t>(15);
  return c < 32 ? 32 : c;
}

}  // namespace

// --- Object ------------------------------------------------------------------------

// The object's header and, directly after it in the same allocation, its encoding.
// Offsets point at values inside the encoding; 0 means absent (0 is the root object).
struct Object::Private final : LabelView {
  std::uint32_t size = 0;
  std::uint32_t api_version = 0, kind = 0, ns = 0, name = 0, uid = 0, rv = 0, generation = 0,
                deletion = 0, labels = 0, annotations = 0, owners = 0;

  const std::uint8_t* data() const { return reinterpret_cast<const std::uint8_t*>(this + 1); }
  const std::uint8_t* at(std::uint32_t off) const { return off == 0 ? nullptr : data() + off; }
  std::string_view str(std::uint32_t off) const {
    if (off == 0) return {};
    return read_string(data() + off).value_or(std::string_view{});
  }

  std::optional<std::string_view> get(std::string_view key) const override {
    return lookup(labels, key);
  }
  std::optional<std::string_view> lookup(std::uint32_t map, std::string_view key) const {
    if (map == 0) return std::nullopt;
    const std::uint8_t* v = find_entry(data() + map, key);
    if (v == nullptr) return std::nullopt;
    return read_string(v);
  }

  void locate() {
    const std::uint8_t* base = data();
    auto offset = [&](const std::uint8_t* v) { return static_cast<std::uint32_t>(v - base); };
    // Every assignment, not the first match: a repeated key's last value wins (see
    // find_entry).
    const std::uint8_t* metadata = nullptr;
    for_each_entry(base, [&](std::string_view k, const std::uint8_t* v) {
      if (k == "apiVersion") api_version = offset(v);
      if (k == "kind") kind = offset(v);
      if (k == "metadata") metadata = *v == kObject ? v : nullptr;
      return true;
    });
    if (metadata == nullptr) return;
    for_each_entry(metadata, [&](std::string_view k, const std::uint8_t* v) {
      if (k == "namespace") ns = offset(v);
      if (k == "name") name = offset(v);
      if (k == "uid") uid = offset(v);
      if (k == "resourceVersion") rv = offset(v);
      if (k == "generation") generation = offset(v);
      if (k == "deletionTimestamp") deletion = *v != kNull ? offset(v) : 0;
      if (k == "labels") labels = *v == kObject ? offset(v) : 0;
      if (k == "annotations") annotations = *v == kObject ? offset(v) : 0;
      if (k == "ownerReferences") owners = *v == kArray ? offset(v) : 0;
      return true;
    });
  }

  // Copies the encoding after the header at `at` (sizeof(Private) + its size bytes).
  static Private* create(void* at, std::string_view encoding) {
    auto* p = new (at) Private;
    p->size = static_cast<std::uint32_t>(encoding.size());
    std::memcpy(const_cast<std::uint8_t*>(p->data()), encoding.data(), encoding.size());
    p->locate();
    return p;
  }
};

// One allocation per object: std::allocate_shared's block (reference counts and the
// Object) with the Private header and the encoding after it. The allocator, stateless
// so that the block does not store it, learns the size from and reports where that
// trailing space is to make_object on the same thread; the Object's constructor runs
// after the allocation.
struct Object::Build {
  std::size_t trailing_bytes = 0;
  char* trailing = nullptr;  // set by the allocator
  std::string_view encoding;
};

namespace {

thread_local Object::Build* t_build = nullptr;

template <class T>
struct TrailingAllocator {
  using value_type = T;

  TrailingAllocator() = default;
  template <class U>
  TrailingAllocator(const TrailingAllocator<U>&) {}  // NOLINT(google-explicit-constructor)

  T* allocate(std::size_t n) {
    static_assert(alignof(T) >= alignof(Object::Private));  // the header follows the block
    char* mem = static_cast<char*>(::operator new(n * sizeof(T) + t_build->trailing_bytes));
    t_build->trailing = mem + n * sizeof(T);
    return reinterpret_cast<T*>(mem);
  }
  void deallocate(T* p, std::size_t) noexcept { ::operator delete(p); }

  template <class U>
  bool operator==(const TrailingAllocator<U>&) const {
    return true;
  }
};

}  // namespace

Object::Object(Build& b) : p_(Private::create(b.trailing, b.encoding)) {}
Object::~Object() {
  p_->~Private();  // the memory goes with the shared_ptr's block
}

namespace {

std::shared_ptr<const Object> encode(const json::value& v, const Transform& transform,
                                     const GroupVersionKind* fill) {
  const json::object* o = v.if_object();
  if (o == nullptr) return nullptr;
  thread_local std::string scratch;
  scratch.clear();
  Encoder(scratch, transform).root(*o, fill);
  ObjectPtr obj = detail::make_object(scratch);
  if (scratch.capacity() > kScratchKeepBytes) std::string().swap(scratch);
  return obj;
}

}  // namespace

std::int32_t detail::intern_key(std::string_view key) {
  if (!looks_like_field_name(key)) return -1;
  return KeyTable::instance().find_or_add(key);
}

ObjectPtr detail::make_object(std::string_view encoding) {
  Object::Build b{sizeof(Object::Private) + encoding.size(), nullptr, encoding};
  t_build = &b;
  ObjectPtr obj = std::allocate_shared<Object>(TrailingAllocator<Object>(), b);
  t_build = nullptr;
  return obj;
}

std::shared_ptr<const Object> Object::from_json(const json::value& v, const Transform& transform) {
  return encode(v, transform, nullptr);
}

std::shared_ptr<const Object> Object::from_json(const json::value& v, const Transform& transform,
                                                const GroupVersionKind& kind) {
  return encode(v, transform, &kind);
}

std::string_view Object::api_version() const {
  return p_->str(p_->api_version);
}
std::string_view Object::kind() const {
  return p_->str(p_->kind);
}
std::string_view Object::ns() const {
  return p_->str(p_->ns);
}
std::string_view Object::name() const {
  return p_->str(p_->name);
}
std::string_view Object::uid() const {
  return p_->str(p_->uid);
}
std::string_view Object::resource_version() const {
  return p_->str(p_->rv);
}

std::int64_t Object::generation() const {
  if (p_->generation == 0) return 0;
  const std::uint8_t* p = p_->data() + p_->generation;
  const std::uint8_t tag = *p++;
  if ((tag & kShortString) == 0 && (tag & kSmallInt)) return tag & 0x3f;
  if (tag == kInt) {
    const std::uint64_t z = get_varint(p);
    return static_cast<std::int64_t>((z >> 1) ^ (~(z & 1) + 1));
  }
  if (tag == kUint) return static_cast<std::int64_t>(get_varint(p));
  return 0;
}

bool Object::being_deleted() const {
  return p_->deletion != 0;
}

const LabelView& Object::labels() const {
  return *p_;
}

std::optional<std::string_view> Object::label(std::string_view key) const {
  return p_->lookup(p_->labels, key);
}

std::optional<std::string_view> Object::annotation(std::string_view key) const {
  return p_->lookup(p_->annotations, key);
}

std::vector<OwnerReference> Object::owner_references() const {
  std::vector<OwnerReference> out;
  if (p_->owners == 0) return out;
  const std::uint8_t* p = p_->data() + p_->owners + 1;
  get_varint(p);
  const std::uint64_t count = get_varint(p);
  out.reserve(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::uint8_t* entry = p;
    skip_value(p);
    if (*entry != kObject) continue;
    OwnerReference ref;
    for_each_entry(entry, [&](std::string_view k, const std::uint8_t* v) {
      const auto s = read_string(v);
      if (k == "apiVersion") ref.api_version = s.value_or("");
      if (k == "kind") ref.kind = s.value_or("");
      if (k == "name") ref.name = s.value_or("");
      if (k == "uid") ref.uid = s.value_or("");
      if (k == "controller") ref.controller = *v == kTrue;
      if (k == "blockOwnerDeletion") ref.block_owner_deletion = *v == kTrue;
      return true;
    });
    out.push_back(std::move(ref));
  }
  return out;
}

json::value Object::to_json() const {
  return materialize_at(p_->data());
}

std::optional<json::value> Object::at(std::initializer_list<std::string_view> path) const {
  const std::uint8_t* p = p_->data();
  for (const std::string_view k : path) {
    p = find_entry(p, k);
    if (p == nullptr) return std::nullopt;
  }
  return materialize_at(p);
}

std::size_t Object::memory_bytes() const {
  // The allocate_shared block (vtable, counts, Object), the header and the encoding.
  return malloc_chunk(sizeof(Object) + 2 * sizeof(void*) + sizeof(Private) + p_->size);
}

std::size_t Object::encoded_bytes() const {
  return p_->size;
}

std::string_view Object::encoding() const {
  return {reinterpret_cast<const char*>(p_->data()), p_->size};
}

std::size_t interned_key_count() {
  return KeyTable::instance().size();
}

}  // namespace aop::k8s
