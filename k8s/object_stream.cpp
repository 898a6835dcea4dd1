// The stream decoders: a Boost.JSON SAX parser (basic_parser) whose handler writes the
// compact encoding of each object as its tokens arrive (detail::Writer, the same
// writer Object::from_json uses), and keeps only what it needs of the text around the
// objects (a LIST's resourceVersion and continue token, a watch event's type).
#include "k8s/object_stream.hpp"

#include <algorithm>
#include <cstdint>

#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/error.hpp>
#include <boost/json/parse_options.hpp>

#include "k8s/detail/object_encoding.hpp"

namespace aop::k8s {
namespace json = boost::json;
using boost::system::error_code;
using detail::Context;

namespace {

// Encoding buffers larger than this are released after the object, so one huge object
// does not pin its size for the life of a watch.
constexpr std::size_t kKeepBufferBytes = std::size_t{1} << 20;

bool is_json_whitespace(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

json::parse_options parse_options() {
  json::parse_options o;
  o.max_depth = kMaxObjectDepth;
  return o;
}

// The SAX handler. Outside the objects it tracks where in the document it is (the
// LIST's metadata and items, the watch event's type and object); inside an object it
// writes the encoding.
class Handler {
 public:
  static constexpr std::size_t max_object_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_array_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_key_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_string_size = static_cast<std::size_t>(-1);

  enum class Mode { list, watch };

  Handler(Mode mode, Transform transform, GroupVersionKind kind)
      : kind_(std::move(kind)),
        root_kind_(detail::root_kind(kind_)),
        transform_(transform),
        mode_(mode),
        w_(buffer_) {}

  // --- results -----------------------------------------------------------------------
  std::vector<ObjectPtr> items;                      // list mode
  std::string resource_version;                      // list mode
  std::string continue_token;                        // list mode
  bool not_an_object = false;                        // list mode: the document is not an object
  std::vector<DecodedWatchEvent>* events = nullptr;  // watch mode: where events go

  void reset() {
    items.clear();
    resource_version.clear();
    continue_token.clear();
    not_an_object = false;
    outer_.clear();
    frames_.clear();
    skip_depth_ = 0;
    skip_next_ = false;
    role_ = Role::none;
    key_.clear();
    text_.clear();
  }

  // --- the handler interface -----------------------------------------------------------
  bool on_document_begin(error_code&) {
    outer_.clear();
    frames_.clear();
    skip_depth_ = 0;
    skip_next_ = false;
    role_ = Role::document;
    event_ = DecodedWatchEvent{};
    event_identity_ = false;
    return true;
  }

  bool on_document_end(error_code&) {
    if (mode_ == Mode::watch && events != nullptr) events->push_back(finish_event());
    return true;
  }

  bool on_object_begin(error_code&) {
    if (skip_begin(true)) return true;
    if (!frames_.empty()) {
      const Context ctx = child_context();
      frames_.push_back({w_.begin_container(detail::kObject), 0, ctx, false});
      return true;
    }
    switch (take_role()) {
      case Role::document:
        if (mode_ == Mode::list) {
          outer_.push_back(Outer::list_root);
        } else {
          outer_.push_back(Outer::event_root);
        }
        break;
      case Role::list_metadata:
        outer_.push_back(Outer::list_metadata);
        break;
      case Role::item:
        begin_object(&transform_);
        break;
      case Role::event_object:
        event_.has_object = true;
        // The type normally comes first; when it does not (or is ERROR) the object is
        // kept whole and transformed, if at all, once the type is known.
        event_identity_ = event_.type.empty() || event_.type == "ERROR";
        begin_object(event_identity_ ? &identity_ : &transform_);
        break;
      case Role::event_type:
        event_.type.clear();
        skip_depth_ = 1;
        break;
      default:
        skip_depth_ = 1;
        break;
    }
    return true;
  }

  bool on_object_end(std::size_t, error_code&) {
    close_any();
    return true;
  }

  bool on_array_begin(error_code&) {
    if (skip_begin(true)) return true;
    if (!frames_.empty()) {
      const Context ctx = child_context();
      frames_.push_back({w_.begin_container(detail::kArray), 0, ctx, true});
      return true;
    }
    switch (take_role()) {
      case Role::items:
        outer_.push_back(Outer::items);
        break;
      case Role::document:
        not_an_object = true;
        skip_depth_ = 1;
        break;
      case Role::event_object:
        event_.has_object = true;
        event_.object = nullptr;
        skip_depth_ = 1;
        break;
      case Role::event_type:
        event_.type.clear();
        skip_depth_ = 1;
        break;
      default:
        skip_depth_ = 1;
        break;
    }
    return true;
  }

  bool on_array_end(std::size_t, error_code&) {
    close_any();
    return true;
  }

  bool on_key_part(json::string_view s, std::size_t, error_code&) {
    if (skip_depth_ == 0) key_.append(s.data(), s.size());
    return true;
  }

  bool on_key(json::string_view s, std::size_t, error_code&) {
    if (skip_depth_ > 0) {
      key_.clear();
      return true;
    }
    std::string_view k(s.data(), s.size());
    if (!key_.empty()) {
      key_.append(s.data(), s.size());
      k = key_;
    }
    if (!frames_.empty()) {
      object_key(k);
    } else {
      outer_key(k);
    }
    key_.clear();
    return true;
  }

  bool on_string_part(json::string_view s, std::size_t, error_code&) {
    if (skip_depth_ == 0 && !skip_next_) text_.append(s.data(), s.size());
    return true;
  }

  bool on_string(json::string_view s, std::size_t, error_code&) {
    std::string_view v(s.data(), s.size());
    if (!text_.empty()) {
      text_.append(s.data(), s.size());
      v = text_;
    }
    if (!skip_begin(false)) {
      if (!frames_.empty()) {
        element();
        const Frame& f = frames_.back();
        if (!f.array && f.ctx == Context::base64_map) {
          w_.base64_string(v);
        } else {
          w_.string(v);
        }
      } else {
        const Role role = take_role();
        switch (role) {
          case Role::resource_version:
            resource_version.assign(v);
            break;
          case Role::continue_token:
            continue_token.assign(v);
            break;
          case Role::event_type:
            event_.type.assign(v);
            break;
          default:
            outer_scalar(role);
            break;
        }
      }
    }
    text_.clear();
    return true;
  }

  bool on_number_part(json::string_view, error_code&) { return true; }

  bool on_int64(std::int64_t i, json::string_view, error_code&) {
    if (scalar()) w_.int64(i);
    return true;
  }
  bool on_uint64(std::uint64_t u, json::string_view, error_code&) {
    if (scalar()) w_.uint64(u);
    return true;
  }
  bool on_double(double d, json::string_view, error_code&) {
    if (scalar()) w_.double_(d);
    return true;
  }
  bool on_bool(bool b, error_code&) {
    if (scalar()) w_.boolean(b);
    return true;
  }
  bool on_null(error_code&) {
    if (scalar()) w_.null();
    return true;
  }
  bool on_comment_part(json::string_view, error_code&) { return true; }
  bool on_comment(json::string_view, error_code&) { return true; }

 private:
  // What the next value at the outer level is.
  enum class Role {
    none,
    skip,
    document,
    list_metadata,
    items,
    item,
    resource_version,
    continue_token,
    event_type,
    event_object,
  };
  // The open containers around the objects.
  enum class Outer { list_root, list_metadata, items, event_root };
  // An open container inside an object being encoded.
  struct Frame {
    std::size_t at;  // Writer::begin_container's placeholder
    std::uint64_t count;
    Context ctx;  // of the container's own keys
    bool array;
  };

  // A value begins while skipping: consumes it. `container`: it opens a container.
  bool skip_begin(bool container) {
    if (skip_depth_ > 0) {
      if (container) ++skip_depth_;
      return true;
    }
    if (skip_next_) {
      skip_next_ = false;
      if (container) skip_depth_ = 1;
      return true;
    }
    return false;
  }

  bool skip_end() {
    if (skip_depth_ == 0) return false;
    --skip_depth_;
    return true;
  }

  // A scalar value: true when it is to be written (inside an object, counted).
  bool scalar() {
    if (skip_begin(false)) return false;
    if (frames_.empty()) {
      outer_scalar(take_role());
      return false;
    }
    element();
    return true;
  }

  // A scalar where the outer level expected something else. A repeated key wins over
  // the earlier one (as in Go and Boost.JSON): a `type` that is not a string clears the
  // type, an `object` that is not an object clears the object.
  void outer_scalar(Role role) {
    switch (role) {
      case Role::document:
        not_an_object = true;
        break;
      case Role::event_type:
        event_.type.clear();
        break;
      case Role::event_object:
        event_.has_object = true;
        event_.object = nullptr;
        break;
      default:
        break;
    }
  }

  // The role of the value beginning now, at the outer level.
  Role take_role() {
    if (!outer_.empty() && outer_.back() == Outer::items) return Role::item;
    const Role r = role_;
    role_ = Role::none;
    return r;
  }

  void outer_key(std::string_view k) {
    role_ = Role::skip;
    if (outer_.empty()) return;
    switch (outer_.back()) {
      case Outer::list_root:
        if (k == "metadata") role_ = Role::list_metadata;
        if (k == "items") role_ = Role::items;
        break;
      case Outer::list_metadata:
        if (k == "resourceVersion") role_ = Role::resource_version;
        if (k == "continue") role_ = Role::continue_token;
        break;
      case Outer::event_root:
        if (k == "type") role_ = Role::event_type;
        if (k == "object") role_ = Role::event_object;
        break;
      case Outer::items:
        break;
    }
  }

  // --- encoding ------------------------------------------------------------------------

  void begin_object(const Transform* t) {
    t_ = t;
    buffer_.clear();
    has_api_version_ = false;
    has_kind_ = false;
    frames_.push_back({w_.begin_container(detail::kObject), 0, Context::root, false});
  }

  // Counts a value in an array (object members are counted at their key).
  void element() {
    Frame& f = frames_.back();
    if (f.array) ++f.count;
  }

  // The context of a container value beginning now (and counts it).
  Context child_context() {
    Frame& f = frames_.back();
    if (f.array) {
      ++f.count;
      return Context::plain;
    }
    return next_ctx_;
  }

  void object_key(std::string_view k) {
    Frame& f = frames_.back();
    if (f.ctx == Context::root) {
      if (k == "apiVersion") has_api_version_ = true;
      if (k == "kind") has_kind_ = true;
    }
    const detail::KeyDecision d = detail::decide(f.ctx, k, *t_, root_kind_);
    if (d.drop) {
      skip_next_ = true;
      return;
    }
    w_.key(k, f.ctx);
    ++f.count;
    next_ctx_ = d.child;
  }

  void end_container() {
    Frame f = frames_.back();
    frames_.pop_back();
    // An object kept whole (an ERROR event's Status, or an object whose event type has
    // not arrived yet) gets no apiVersion and kind: finish_event() fills them in when
    // it turns out to be an object.
    if (frames_.empty() && t_ != &identity_ && (!has_api_version_ || !has_kind_)) {
      // Object::from_json writes the missing apiVersion and kind first.
      fill_.clear();
      detail::Writer fw(fill_);
      f.count += detail::write_kind_fill(fw, kind_, !has_api_version_, !has_kind_);
      buffer_.insert(f.at + 2, fill_);
    }
    w_.end_container(f.at, f.count);
    if (frames_.empty()) object_done();
  }

  void object_done() {
    ObjectPtr obj = detail::make_object(buffer_);
    if (buffer_.capacity() > kKeepBufferBytes) std::string().swap(buffer_);
    if (mode_ == Mode::list) {
      items.push_back(std::move(obj));
    } else {
      event_.object = std::move(obj);
    }
  }

  DecodedWatchEvent finish_event() {
    DecodedWatchEvent ev = std::move(event_);
    event_ = DecodedWatchEvent{};
    if (ev.object == nullptr) return ev;
    if (ev.type == "ERROR") {
      ev.status = ev.object->to_json();
      ev.object = nullptr;
    } else if (event_identity_) {
      // The object came before its type: transform it now.
      ev.object = Object::from_json(ev.object->to_json(), transform_, kind_);
    }
    return ev;
  }

  // The end of an object or array: a skipped one, one inside the object being encoded,
  // or one of the outer levels.
  void close_any() {
    if (skip_end()) return;
    if (!frames_.empty()) {
      end_container();
      return;
    }
    outer_.pop_back();
  }

  const GroupVersionKind kind_;
  const detail::RootKind root_kind_;  // of kind_: what the objects are encoded as
  const Transform transform_;
  const Transform identity_{false, false, false};
  const Mode mode_;

  // Outer level.
  std::vector<Outer> outer_;
  std::size_t skip_depth_ = 0;  // inside a skipped container, this deep
  std::string key_;             // parts of a key split across reads
  std::string text_;            // parts of a string split across reads
  Role role_ = Role::none;
  bool skip_next_ = false;  // the next value is dropped (by the Transform)

  // The object being encoded.
  bool has_api_version_ = false;
  bool has_kind_ = false;
  Context next_ctx_ = Context::plain;
  std::string buffer_;
  detail::Writer w_;
  std::string fill_;
  std::vector<Frame> frames_;
  const Transform* t_ = &transform_;

  // Watch mode: the event being read.
  DecodedWatchEvent event_;
  bool event_identity_ = false;
};

std::string describe(const error_code& ec, std::uint64_t at, std::string_view where,
                     std::size_t max_bytes) {
  const std::string pos = " at byte " + std::to_string(at) + " of the " + std::string(where);
  if (ec == boost::system::errc::value_too_large) {
    return "JSON value larger than " + std::to_string(max_bytes) + " bytes" + pos;
  }
  if (ec == json::error::incomplete) {
    return std::string(where) + " ended in the middle of a JSON value" + pos;
  }
  if (ec == boost::system::errc::invalid_argument)
    return "the " + std::string(where) + " is not a JSON object";
  return "invalid JSON" + pos + ": " + ec.message();
}

}  // namespace

// --- ListDecoder -----------------------------------------------------------------------

struct ListDecoder::Impl {
  Impl(Transform t, GroupVersionKind k)
      : parser(parse_options(), Handler::Mode::list, t, std::move(k)) {}
  json::basic_parser<Handler> parser;
  std::uint64_t offset = 0;
  bool done = false;
  error_code error;
  std::uint64_t error_offset = 0;

  error_code fail(error_code ec, std::uint64_t at) {
    error = ec;
    error_offset = at;
    return ec;
  }
};

ListDecoder::ListDecoder(Transform transform, GroupVersionKind kind)
    : impl_(std::make_unique<Impl>(transform, std::move(kind))) {}
ListDecoder::~ListDecoder() = default;

boost::system::error_code ListDecoder::feed(std::string_view bytes) {
  Impl& d = *impl_;
  if (d.error) return d.error;
  if (d.done) {
    // Only whitespace may follow the document.
    const auto extra = std::find_if_not(bytes.begin(), bytes.end(), is_json_whitespace);
    if (extra != bytes.end()) {
      return d.fail(json::error::extra_data,
                    d.offset + static_cast<std::uint64_t>(extra - bytes.begin()));
    }
    d.offset += bytes.size();
    return {};
  }
  error_code ec;
  const std::size_t used = d.parser.write_some(true, bytes.data(), bytes.size(), ec);
  if (ec) return d.fail(ec, d.offset + used);
  d.offset += used;
  if (d.parser.done()) {
    d.done = true;
    if (used < bytes.size()) return feed(bytes.substr(used));
  }
  return {};
}

boost::system::error_code ListDecoder::finish() {
  Impl& d = *impl_;
  if (d.error) return d.error;
  if (!d.done) {
    error_code ec;
    d.parser.write_some(false, nullptr, 0, ec);
    if (ec || !d.parser.done()) {
      return d.fail(ec ? ec : error_code(json::error::incomplete), d.offset);
    }
    d.done = true;
  }
  if (d.parser.handler().not_an_object) {
    return d.fail(make_error_code(boost::system::errc::invalid_argument), 0);
  }
  return {};
}

void ListDecoder::reset() {
  Impl& d = *impl_;
  d.parser.reset();
  d.parser.handler().reset();
  d.offset = 0;
  d.done = false;
  d.error.clear();
  d.error_offset = 0;
}

std::vector<ObjectPtr>& ListDecoder::items() {
  return impl_->parser.handler().items;
}
const std::string& ListDecoder::resource_version() const {
  return impl_->parser.handler().resource_version;
}
const std::string& ListDecoder::continue_token() const {
  return impl_->parser.handler().continue_token;
}

std::string ListDecoder::error_message() const {
  if (!impl_->error) return {};
  return describe(impl_->error, impl_->error_offset, "response", 0);
}

// --- WatchDecoder ----------------------------------------------------------------------

struct WatchDecoder::Impl {
  Impl(Transform t, GroupVersionKind k, std::size_t max)
      : parser(parse_options(), Handler::Mode::watch, t, std::move(k)),
        max_event_bytes(std::max<std::size_t>(max, 1)) {}
  json::basic_parser<Handler> parser;
  std::size_t max_event_bytes;
  bool in_value = false;
  std::size_t value_bytes = 0;  // of the current event so far
  std::uint64_t offset = 0;
  error_code error;
  std::uint64_t error_offset = 0;

  error_code fail(error_code ec, std::uint64_t at) {
    error = ec;
    error_offset = at;
    return ec;
  }
};

WatchDecoder::WatchDecoder(Transform transform, GroupVersionKind kind, std::size_t max_event_bytes)
    : impl_(std::make_unique<Impl>(transform, std::move(kind), max_event_bytes)) {}
WatchDecoder::~WatchDecoder() = default;

boost::system::error_code WatchDecoder::feed(std::string_view bytes,
                                             std::vector<DecodedWatchEvent>& out) {
  Impl& d = *impl_;
  if (d.error) return d.error;
  d.parser.handler().events = &out;
  while (!bytes.empty()) {
    if (!d.in_value) {
      // Whitespace between events is ours to skip: a fresh parser fed only whitespace
      // would report "incomplete" at the end of the stream.
      std::size_t skip = 0;
      while (skip < bytes.size() && is_json_whitespace(bytes[skip])) ++skip;
      d.offset += skip;
      bytes.remove_prefix(skip);
      if (bytes.empty()) break;
      d.in_value = true;
      d.value_bytes = 0;
    }
    // Never hand the parser more than the event may still grow by.
    const std::string_view piece = bytes.substr(0, d.max_event_bytes - d.value_bytes);
    error_code ec;
    const std::size_t used = d.parser.write_some(true, piece.data(), piece.size(), ec);
    if (ec) return d.fail(ec, d.offset + used);
    d.offset += used;
    d.value_bytes += used;
    bytes.remove_prefix(used);
    if (d.parser.done()) {
      d.parser.reset();
      d.in_value = false;
    } else if (d.value_bytes >= d.max_event_bytes) {
      return d.fail(make_error_code(boost::system::errc::value_too_large), d.offset);
    }
  }
  return {};
}

boost::system::error_code WatchDecoder::finish(std::vector<DecodedWatchEvent>& out) {
  Impl& d = *impl_;
  if (d.error) return d.error;
  if (!d.in_value) return {};
  d.parser.handler().events = &out;
  error_code ec;
  d.parser.write_some(false, nullptr, 0, ec);
  if (ec || !d.parser.done()) {
    return d.fail(ec ? ec : error_code(json::error::incomplete), d.offset);
  }
  d.parser.reset();
  d.in_value = false;
  return {};
}

std::string WatchDecoder::error_message() const {
  if (!impl_->error) return {};
  return describe(impl_->error, impl_->error_offset, "stream", impl_->max_event_bytes);
}

}  // namespace aop::k8s
