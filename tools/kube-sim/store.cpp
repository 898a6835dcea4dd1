#include "tools/kube-sim/store.hpp"

#include <algorithm>
#include <cstring>

#include <boost/json.hpp>

namespace aop::sim {

namespace json = boost::json;

// ---------------------------------------------------------------------------------------
// StoredObject

namespace {

void append_json(std::string& out, const json::value& v) {
  json::serializer sr;
  sr.reset(&v);
  char buf[4096];
  while (!sr.done()) out.append(sr.read(buf));
}

void append_json_string(std::string& out, std::string_view s) {
  json::serializer sr;
  sr.reset(s);
  char buf[1024];
  while (!sr.done()) out.append(sr.read(buf));
}

std::string_view str_or_empty(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v != nullptr && v->is_string() ? std::string_view(v->as_string()) : std::string_view();
}

}  // namespace

std::string StoredObject::make_key(std::string_view ns, std::string_view name) {
  if (ns.empty()) return std::string(name);
  std::string k;
  k.reserve(ns.size() + 1 + name.size());
  k.append(ns).append("/").append(name);
  return k;
}

std::shared_ptr<const StoredObject> StoredObject::make(const json::object& obj, std::uint64_t rv) {
  auto so = std::make_shared<StoredObject>();
  so->rv_ = rv;
  std::string& out = so->json_;
  out.reserve(256);
  out += "{\"kind\":";
  append_json_string(out, str_or_empty(obj, "kind"));
  out += ",\"apiVersion\":";
  so->av_begin_ = static_cast<std::uint32_t>(out.size());
  append_json_string(out, str_or_empty(obj, "apiVersion"));
  so->av_end_ = static_cast<std::uint32_t>(out.size());
  out += ",\"metadata\":";
  so->meta_begin_ = static_cast<std::uint32_t>(out.size());
  static const json::object kEmpty;
  const json::object* md = &kEmpty;
  if (const auto* m = obj.if_contains("metadata"); m != nullptr && m->is_object()) {
    md = &m->as_object();
    append_json(out, *m);
  } else {
    out += "{}";
  }
  so->meta_end_ = static_cast<std::uint32_t>(out.size());
  for (const auto& [k, v] : obj) {
    if (k == "kind" || k == "apiVersion" || k == "metadata") continue;
    out += ',';
    append_json_string(out, k);
    out += ':';
    append_json(out, v);
  }
  out += '}';
  out.shrink_to_fit();

  const std::string_view ns = str_or_empty(*md, "namespace");
  so->key_ = make_key(ns, str_or_empty(*md, "name"));
  so->ns_len_ = static_cast<std::uint16_t>(ns.size());
  const std::string_view uid = str_or_empty(*md, "uid");
  so->uid_len_ = static_cast<std::uint8_t>(std::min(uid.size(), so->uid_.size()));
  std::memcpy(so->uid_.data(), uid.data(), so->uid_len_);
  so->terminating_ = md->contains("deletionTimestamp") && !md->at("deletionTimestamp").is_null();
  if (const auto* refs = md->if_contains("ownerReferences"); refs != nullptr && refs->is_array()) {
    so->has_owner_refs_ = !refs->as_array().empty();
  }
  if (const auto* labels = md->if_contains("labels"); labels != nullptr && labels->is_object()) {
    std::vector<std::pair<std::string_view, std::string_view>> pairs;
    for (const auto& [k, v] : labels->as_object()) {
      if (v.is_string()) pairs.emplace_back(k, v.as_string());
    }
    std::sort(pairs.begin(), pairs.end());
    std::size_t n = 0;
    for (const auto& [k, v] : pairs) n += k.size() + v.size() + 2;
    so->labels_.reserve(n);
    for (const auto& [k, v] : pairs) {
      so->labels_.append(k).push_back('\0');
      so->labels_.append(v).push_back('\0');
    }
  }
  return so;
}

std::optional<std::string_view> StoredObject::label(std::string_view key) const {
  std::string_view rest = labels_;
  while (!rest.empty()) {
    const std::size_t k_end = rest.find('\0');
    const std::string_view k = rest.substr(0, k_end);
    rest.remove_prefix(k_end + 1);
    const std::size_t v_end = rest.find('\0');
    const std::string_view v = rest.substr(0, v_end);
    rest.remove_prefix(v_end + 1);
    if (k == key) return v;
    if (k > key) break;
  }
  return std::nullopt;
}

std::string_view StoredObject::api_version() const {
  // The stored value is a JSON string without escapes (group/version characters only).
  return std::string_view(json_).substr(av_begin_ + 1, av_end_ - av_begin_ - 2);
}

std::string StoredObject::with_api_version(std::string_view api_version) const {
  std::string out;
  out.reserve(json_.size() + api_version.size());
  out.append(json_, 0, av_begin_);
  append_json_string(out, api_version);
  out.append(json_, av_end_);
  return out;
}

json::object StoredObject::parse() const {
  return json::parse(json_).as_object();
}

std::size_t StoredObject::footprint() const {
  auto heap = [](const std::string& s) { return s.capacity() > 15 ? s.capacity() + 1 : 0; };
  // make_shared puts the control block (2 counters + vptr) next to the object.
  return sizeof(StoredObject) + 16 + heap(json_) + heap(key_) + heap(labels_);
}

std::string field_value(const StoredObject& o, std::string_view field) {
  if (field == "metadata.name") return std::string(o.name());
  if (field == "metadata.namespace") return std::string(o.ns());
  const json::object obj = o.parse();
  // Events select on source.component as "source".
  std::string path(field == "source" ? "source.component" : field);
  const json::value* cur = nullptr;
  const json::object* scope = &obj;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = path.find('.', start);
    const std::string part =
        path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (scope == nullptr) return {};
    cur = scope->if_contains(part);
    if (cur == nullptr) return {};
    if (dot == std::string::npos) break;
    scope = cur->is_object() ? &cur->as_object() : nullptr;
    start = dot + 1;
  }
  if (cur->is_string()) return std::string(cur->as_string());
  if (cur->is_bool()) return cur->as_bool() ? "true" : "false";
  if (cur->is_null()) return {};
  return json::serialize(*cur);
}

// ---------------------------------------------------------------------------------------
// Events and pieces

std::string_view event_type_name(EventType t) {
  switch (t) {
    case EventType::added:
      return "ADDED";
    case EventType::modified:
      return "MODIFIED";
    case EventType::deleted:
      return "DELETED";
  }
  return "";
}

std::string render_partial_metadata(const StoredObject& o) {
  std::string out;
  const auto md = o.metadata_json();
  out.reserve(md.size() + 64);
  out += R"({"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":)";
  out += md;
  out += '}';
  return out;
}

std::string render_event_line(std::string_view type, const StoredObject& o, bool metadata_only,
                              std::string_view api_version) {
  std::string out;
  out.reserve(o.json().size() + 40);
  out += R"({"type":")";
  out += type;
  out += R"(","object":)";
  if (metadata_only) {
    out += render_partial_metadata(o);
  } else if (api_version.empty() || api_version == o.api_version()) {
    out += o.json();
  } else {
    out += o.with_api_version(api_version);
  }
  out += "}\n";
  return out;
}

std::shared_ptr<const std::string> WatchEvent::line() const {
  if (!line_) {
    line_ = std::make_shared<const std::string>(
        render_event_line(event_type_name(type), *object, false, {}));
  }
  return line_;
}

std::shared_ptr<const std::string> WatchEvent::metadata_line() const {
  if (!metadata_line_) {
    metadata_line_ = std::make_shared<const std::string>(
        render_event_line(event_type_name(type), *object, true, {}));
  }
  return metadata_line_;
}

Piece piece(std::string s) {
  auto p = std::make_shared<const std::string>(std::move(s));
  std::string_view v = *p;
  return Piece{std::move(p), v};
}

Piece piece(std::shared_ptr<const std::string> s) {
  std::string_view v = *s;
  return Piece{std::move(s), v};
}

Piece piece_static(std::string_view s) {
  return Piece{nullptr, s};
}

std::string flatten(const std::vector<Piece>& pieces) {
  std::size_t n = 0;
  for (const auto& p : pieces) n += p.data.size();
  std::string out;
  out.reserve(n);
  for (const auto& p : pieces) out += p.data;
  return out;
}

// ---------------------------------------------------------------------------------------
// Watcher

namespace {

// A copy of `o` at another resourceVersion (a DELETED event synthesised from the previous
// state when an object stops matching a selector).
ObjectPtr at_rv(const StoredObject& o, std::uint64_t rv) {
  json::object obj = o.parse();
  obj["metadata"].as_object()["resourceVersion"] = std::to_string(rv);
  return StoredObject::make(obj, rv);
}

}  // namespace

Watcher::Watcher(WatchOptions options, std::shared_ptr<Faults> faults,
                 std::chrono::steady_clock::time_point now)
    : options_(std::move(options)), faults_(std::move(faults)) {
  next_bookmark_ = now + options_.bookmark_interval;
  if (faults_ && faults_->settings.stall_watch_after == 0) {
    stalled_ = true;
    faults_->count("stall_watch_after");
  }
}

bool Watcher::matches(const StoredObject& o) const {
  if (!options_.ns.empty() && o.ns() != options_.ns) return false;
  if (!options_.labels.matches_everything() && !options_.labels.matches(StoredLabels(o))) {
    return false;
  }
  if (!options_.fields.empty()) {
    return options_.fields.matches([&](std::string_view f) { return field_value(o, f); });
  }
  return true;
}

std::string Watcher::render(std::string_view type, const StoredObject& o) const {
  if (options_.transform) {
    return R"({"type":")" + std::string(type) + R"(","object":)" + options_.transform(o) + "}\n";
  }
  return render_event_line(type, o, options_.metadata_only, options_.api_version);
}

void Watcher::wake() {
  if (woken_ || !wakeup_) return;
  woken_ = true;
  wakeup_();
}

void Watcher::push(Piece p, bool is_event) {
  pending_bytes_ += p.data.size();
  pending_.push_back(std::move(p));
  if (pending_bytes_ > options_.max_pending_bytes) {
    // Too far behind: end the stream; the client resumes from its last resourceVersion.
    pending_.clear();
    pending_bytes_ = 0;
    closed_ = true;
    wake();
    return;
  }
  if (is_event && faults_) {
    ++events_;
    const auto& s = faults_->settings;
    if (s.close_watch_after > 0 && events_ >= s.close_watch_after) {
      faults_->count("close_watch_after");
      closed_ = true;
    } else if (s.close_watch_probability > 0 && faults_->draw() < s.close_watch_probability) {
      faults_->count("close_watch_probability");
      closed_ = true;
    } else if (s.stall_watch_after > 0 &&
               events_ >= static_cast<std::uint64_t>(s.stall_watch_after)) {
      faults_->count("stall_watch_after");
      stalled_ = true;
    }
  } else if (is_event) {
    ++events_;
  }
  wake();
}

void Watcher::deliver(const WatchEvent& e) {
  if (closed_ || stalled_) return;
  const bool cur = matches(*e.object);
  const bool prev = e.prev && e.type == EventType::modified && matches(*e.prev);
  const bool as_stored =
      options_.api_version.empty() || options_.api_version == e.object->api_version();
  auto natural = [&]() {
    if (options_.transform) return piece(render(event_type_name(e.type), *e.object));
    if (options_.metadata_only) return piece(e.metadata_line());
    if (as_stored) return piece(e.line());
    return piece(
        render_event_line(event_type_name(e.type), *e.object, false, options_.api_version));
  };
  switch (e.type) {
    case EventType::added:
    case EventType::deleted:
      if (!cur) return;
      push(natural(), true);
      return;
    case EventType::modified:
      if (cur && prev) {
        push(natural(), true);
      } else if (cur) {
        push(piece(render("ADDED", *e.object)), true);
      } else if (prev) {
        push(piece(render("DELETED", *at_rv(*e.prev, e.rv()))), true);
      }
      return;
  }
}

void Watcher::send_initial(const ObjectPtr& o) {
  if (closed_ || stalled_) return;
  static constexpr std::string_view kPrefix = R"({"type":"ADDED","object":)";
  static constexpr std::string_view kMetaPrefix =
      R"({"type":"ADDED","object":{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":)";
  if (options_.transform) {
    push(piece(render("ADDED", *o)), true);
  } else if (options_.metadata_only) {
    pending_.push_back(piece_static(kMetaPrefix));
    pending_.push_back(Piece{o, o->metadata_json()});
    pending_bytes_ += kMetaPrefix.size() + o->metadata_json().size();
    push(piece_static("}}\n"), true);
  } else if (options_.api_version.empty() || options_.api_version == o->api_version()) {
    pending_.push_back(piece_static(kPrefix));
    pending_.push_back(Piece{o, o->json()});
    pending_bytes_ += kPrefix.size() + o->json().size();
    push(piece_static("}\n"), true);
  } else {
    push(piece(render_event_line("ADDED", *o, false, options_.api_version)), true);
  }
}

void Watcher::send_bookmark(std::uint64_t rv, bool initial_events_end) {
  if (closed_ || stalled_) return;
  json::object md;
  md["resourceVersion"] = std::to_string(rv);
  if (options_.builtin && !options_.metadata_only) md["creationTimestamp"] = nullptr;
  if (initial_events_end) {
    md["annotations"] = json::object{{"k8s.io/initial-events-end", "true"}};
  }
  json::object o;
  if (options_.metadata_only) {
    o["kind"] = "PartialObjectMetadata";
    o["apiVersion"] = "meta.k8s.io/v1";
  } else {
    o["kind"] = options_.kind;
    o["apiVersion"] = options_.api_version;
  }
  o["metadata"] = std::move(md);
  json::object ev;
  ev["type"] = "BOOKMARK";
  ev["object"] = std::move(o);
  push(piece(json::serialize(ev) + "\n"), false);
}

void Watcher::send_error(const ApiError& e) {
  if (closed_) return;
  push(piece(R"({"type":"ERROR","object":)" + e.to_json() + "}\n"), false);
  closed_ = true;
  wake();
}

void Watcher::close() {
  if (closed_) return;
  closed_ = true;
  wake();
}

void Watcher::tick(std::chrono::steady_clock::time_point now, std::uint64_t rv) {
  if (closed_ || stalled_) return;
  if (now >= options_.deadline) {
    close();
    return;
  }
  if (options_.bookmarks && now >= next_bookmark_) {
    send_bookmark(rv, false);
    while (next_bookmark_ <= now) next_bookmark_ += options_.bookmark_interval;
  }
}

std::vector<Piece> Watcher::take() {
  std::vector<Piece> out(std::make_move_iterator(pending_.begin()),
                         std::make_move_iterator(pending_.end()));
  pending_.clear();
  pending_bytes_ = 0;
  woken_ = false;
  return out;
}

// ---------------------------------------------------------------------------------------
// Collection

namespace {

// The first key after every key that starts with `prefix`.
std::string prefix_end(std::string_view prefix) {
  std::string end(prefix);
  while (!end.empty()) {
    auto& c = end.back();
    if (static_cast<unsigned char>(c) != 0xff) {
      c = static_cast<char>(static_cast<unsigned char>(c) + 1);
      return end;
    }
    end.pop_back();
  }
  return end;  // empty: no upper bound
}

}  // namespace

Collection::Collection(TypePtr type, std::uint64_t created_rv, std::size_t history_limit)
    : type_(std::move(type)),
      history_limit_(history_limit),
      history_floor_(created_rv),
      probe_(std::make_shared<StoredObject>()) {}

ObjectSet::const_iterator Collection::lower(std::string_view key) const {
  // pb_ds has no heterogeneous lookup: compare against a reusable probe object.
  probe_->key_.assign(key);
  return objects_.lower_bound(probe_);
}

ObjectPtr Collection::get(std::string_view key) const {
  auto it = lower(key);
  if (it == objects_.end() || (*it)->key() != key) return nullptr;
  return *it;
}

ApiResult<std::map<std::string_view, ObjectPtr>> Collection::overrides(
    std::uint64_t at_rv, std::uint64_t current_rv) const {
  std::map<std::string_view, ObjectPtr> out;
  if (at_rv == 0 || at_rv >= current_rv) return out;
  if (at_rv < history_floor_) {
    return errors::expired("too old resource version: " + std::to_string(at_rv) + " (" +
                           std::to_string(history_floor_ + 1) + ")");
  }
  auto it = std::upper_bound(history_.begin(), history_.end(), at_rv,
                             [](std::uint64_t rv, const EventPtr& e) { return rv < e->rv(); });
  for (; it != history_.end(); ++it) {
    const auto& e = **it;
    // The first event after at_rv tells the state at at_rv.
    out.emplace(e.object->key(), e.type == EventType::added ? nullptr : e.prev);
  }
  return out;
}

ApiResult<void> Collection::scan(std::string_view prefix, std::string_view after,
                                 std::uint64_t at_rv, std::uint64_t current_rv,
                                 const std::function<bool(const ObjectPtr&)>& visit) const {
  auto ov = overrides(at_rv, current_rv);
  if (!ov) return ov.error();
  const bool from_after = !after.empty() && after >= prefix;
  auto it = lower(from_after ? after : prefix);
  if (from_after && it != objects_.end() && (*it)->key() == after) ++it;
  auto oit = from_after ? ov->upper_bound(after) : ov->lower_bound(prefix);
  auto in_prefix = [&](std::string_view k) { return k.starts_with(prefix); };
  while (true) {
    const bool has_set = it != objects_.end() && in_prefix((*it)->key());
    const bool has_ov = oit != ov->end() && in_prefix(oit->first);
    if (!has_set && !has_ov) break;
    ObjectPtr obj;
    if (has_set && (!has_ov || (*it)->key() < oit->first)) {
      obj = *it;
      ++it;
    } else if (has_ov && (!has_set || oit->first < (*it)->key())) {
      obj = oit->second;
      ++oit;
    } else {
      obj = oit->second;
      ++it;
      ++oit;
    }
    if (obj && !visit(obj)) break;
  }
  return {};
}

ApiResult<std::size_t> Collection::count_after(std::string_view prefix, std::string_view after,
                                               std::uint64_t at_rv,
                                               std::uint64_t current_rv) const {
  auto ov = overrides(at_rv, current_rv);
  if (!ov) return ov.error();
  const bool from_after = !after.empty() && after >= prefix;
  const std::string start(from_after ? after : prefix);
  probe_->key_ = start;
  std::size_t begin = objects_.order_of_key(probe_);
  if (from_after && get(after)) ++begin;
  const std::string end = prefix_end(prefix);
  std::size_t finish = objects_.size();
  if (!end.empty()) {
    probe_->key_ = end;
    finish = objects_.order_of_key(probe_);
  }
  std::int64_t n = static_cast<std::int64_t>(finish) - static_cast<std::int64_t>(begin);
  for (const auto& [k, v] : *ov) {
    if (!k.starts_with(prefix) || (from_after && k <= after)) continue;
    const bool now = get(k) != nullptr;
    const bool then = v != nullptr;
    n += static_cast<std::int64_t>(then) - static_cast<std::int64_t>(now);
  }
  return static_cast<std::size_t>(std::max<std::int64_t>(n, 0));
}

ApiResult<std::vector<EventPtr>> Collection::events_since(std::uint64_t rv) const {
  if (rv < history_floor_) {
    return errors::expired("too old resource version: " + std::to_string(rv) + " (" +
                           std::to_string(history_floor_ + 1) + ")");
  }
  auto it = std::upper_bound(history_.begin(), history_.end(), rv,
                             [](std::uint64_t r, const EventPtr& e) { return r < e->rv(); });
  return std::vector<EventPtr>(it, history_.end());
}

void Collection::record(EventPtr e) {
  if (history_limit_ == 0) {
    history_floor_ = e->rv();
    return;
  }
  if (history_.size() >= history_limit_) {
    history_floor_ = history_.front()->rv();
    history_.pop_front();
  }
  history_.push_back(std::move(e));
}

void Collection::remove_watcher(const Watcher* w) {
  std::erase_if(watchers_, [&](const WatcherPtr& p) { return p.get() == w; });
}

void Collection::close_watchers() {
  for (auto& w : watchers_) w->close();
  watchers_.clear();
}

// ---------------------------------------------------------------------------------------
// Store

Collection* Store::find(std::string_view storage_key) {
  auto it = collections_.find(storage_key);
  return it == collections_.end() ? nullptr : it->second.get();
}

const Collection* Store::find(std::string_view storage_key) const {
  auto it = collections_.find(storage_key);
  return it == collections_.end() ? nullptr : it->second.get();
}

Collection& Store::ensure(const TypePtr& storage_type) {
  const std::string key = storage_type->storage_key();
  auto it = collections_.find(key);
  if (it != collections_.end()) {
    it->second->set_type(storage_type);
    return *it->second;
  }
  auto c = std::make_unique<Collection>(storage_type, rv_, history_limit_);
  auto& ref = *c;
  collections_.emplace(key, std::move(c));
  return ref;
}

void Store::drop(std::string_view storage_key) {
  auto it = collections_.find(storage_key);
  if (it == collections_.end()) return;
  it->second->close_watchers();
  collections_.erase(it);
}

ObjectPtr Store::create(Collection& c, json::object obj) {
  const std::uint64_t rv = ++rv_;
  obj["metadata"].as_object()["resourceVersion"] = std::to_string(rv);
  auto so = StoredObject::make(obj, rv);
  c.objects_.insert(so);
  auto e = std::make_shared<WatchEvent>();
  e->type = EventType::added;
  e->object = so;
  publish(c, std::move(e));
  return so;
}

ObjectPtr Store::update(Collection& c, const ObjectPtr& old, json::object obj) {
  const std::uint64_t rv = ++rv_;
  obj["metadata"].as_object()["resourceVersion"] = std::to_string(rv);
  auto so = StoredObject::make(obj, rv);
  auto it = c.lower(old->key());
  if (it != c.objects_.end() && (*it)->key() == so->key()) {
    // Same key, so the set's order is unchanged by replacing the element in place.
    const_cast<ObjectPtr&>(*it) = so;
  } else {
    c.objects_.insert(so);
  }
  auto e = std::make_shared<WatchEvent>();
  e->type = EventType::modified;
  e->object = so;
  e->prev = old;
  publish(c, std::move(e));
  return so;
}

ObjectPtr Store::remove(Collection& c, const ObjectPtr& old, json::object last) {
  const std::uint64_t rv = ++rv_;
  last["metadata"].as_object()["resourceVersion"] = std::to_string(rv);
  auto so = StoredObject::make(last, rv);
  auto it = c.lower(old->key());
  if (it != c.objects_.end() && (*it)->key() == old->key()) c.objects_.erase(it);
  auto e = std::make_shared<WatchEvent>();
  e->type = EventType::deleted;
  e->object = so;
  e->prev = old;
  publish(c, std::move(e));
  return so;
}

void Store::publish(Collection& c, const EventPtr& e) {
  c.record(e);
  bool any_closed = false;
  for (const auto& w : c.watchers_) {
    w->deliver(*e);
    any_closed = any_closed || w->closed();
  }
  if (any_closed) std::erase_if(c.watchers_, [](const WatcherPtr& w) { return w->closed(); });
}

std::size_t Store::object_count() const {
  std::size_t n = 0;
  for (const auto& [k, c] : collections_) n += c->size();
  return n;
}

std::size_t Store::watch_count() const {
  std::size_t n = 0;
  for (const auto& [k, c] : collections_) n += c->watchers().size();
  return n;
}

}  // namespace aop::sim
