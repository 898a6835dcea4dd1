#include "reconcile/runtime/dependency_index.hpp"

#include <algorithm>
#include <mutex>
#include <optional>
#include <utility>

#include <boost/json.hpp>

#include "k8s/object.hpp"

namespace aop::runtime {

namespace {

using RootId = std::uint32_t;

// Hash-map keys. '\n' cannot appear in group, kind, namespace or name.
std::string kind_key(const GroupKind& k) {
  std::string s;
  s.reserve(k.group.size() + k.kind.size() + 1);
  s.append(k.group).push_back('\n');
  s.append(k.kind);
  return s;
}

std::string bucket_key(const GroupKind& k, std::string_view ns) {
  std::string s = kind_key(k);
  s.push_back('\n');
  s.append(ns);
  return s;
}

std::string object_key(const GroupKind& k, std::string_view ns, std::string_view name) {
  std::string s = bucket_key(k, ns);
  s.push_back('\n');
  s.append(name);
  return s;
}

// The equality requirement a selection is filed under: the first `key in (v)` with one
// value (what matchLabels produce). None: the selection is unpinned.
std::optional<std::pair<std::string, std::string>> pin_of(const k8s::LabelSelector& s) {
  for (const auto& r : s.requirements()) {
    if (r.op == k8s::SelectorOp::in && r.values.size() == 1) {
      return std::make_pair(r.key, r.values.front());
    }
  }
  return std::nullopt;
}

using Entries = std::unordered_map<RootId, std::vector<const KindSelection*>>;

// Selections of one kind in one namespace (or in all namespaces).
struct SelectorBucket {
  // label key -> label value -> entries whose selector requires key=value
  std::unordered_map<std::string, std::unordered_map<std::string, Entries>> pinned;
  Entries unpinned;

  void add(RootId id, const KindSelection* sel) {
    if (auto pin = pin_of(sel->selector)) {
      pinned[pin->first][pin->second][id].push_back(sel);
    } else {
      unpinned[id].push_back(sel);
    }
  }

  void remove(RootId id, const KindSelection* sel) {
    if (auto pin = pin_of(sel->selector)) {
      auto k = pinned.find(pin->first);
      if (k == pinned.end()) return;
      auto v = k->second.find(pin->second);
      if (v == k->second.end()) return;
      v->second.erase(id);
      if (v->second.empty()) k->second.erase(v);
      if (k->second.empty()) pinned.erase(k);
    } else {
      unpinned.erase(id);
    }
  }

  bool empty() const { return pinned.empty() && unpinned.empty(); }

  // Adds to `out` every root with a selection matching `labels`.
  void match(const k8s::LabelView& labels, std::vector<RootId>& out,
             std::uint64_t& examined) const {
    auto visit = [&](const Entries& entries) {
      for (const auto& [id, sels] : entries) {
        for (const KindSelection* sel : sels) {
          ++examined;
          if (sel->selector.matches(labels)) {
            out.push_back(id);
            break;
          }
        }
      }
    };
    for (const auto& [key, values] : pinned) {
      const auto value = labels.get(key);
      if (!value) continue;
      const auto it = values.find(std::string(*value));
      if (it != values.end()) visit(it->second);
    }
    visit(unpinned);
  }
};

}  // namespace

struct DependencyIndex::Impl {
  struct Root {
    std::string key;
    RootDependencies deps;
  };

  std::unordered_map<std::string, RootId> ids;
  std::vector<std::unique_ptr<Root>> roots;  // by id; nullptr when free
  std::vector<RootId> free_ids;

  std::unordered_map<std::string, std::unordered_set<RootId>> by_object;
  std::unordered_map<std::string, SelectorBucket> by_namespace;  // scope one: kind+ns
  std::unordered_map<std::string, SelectorBucket> by_kind;       // scope all: kind
  std::unordered_map<std::string, Entries> selected;             // scope selected: kind
  std::unordered_map<std::string, Labels> namespaces;            // name -> labels

  void insert(RootId id) {
    const Root& root = *roots[id];
    for (const auto& o : root.deps.objects) {
      by_object[object_key(o.kind, o.key.ns, o.key.name)].insert(id);
    }
    for (const auto& s : root.deps.selections) {
      if (s.selector.matches_nothing()) continue;
      switch (s.scope) {
        case NamespaceScope::one:
          by_namespace[bucket_key(s.kind, s.ns)].add(id, &s);
          break;
        case NamespaceScope::all:
          by_kind[kind_key(s.kind)].add(id, &s);
          break;
        case NamespaceScope::selected:
          if (s.namespace_selector.matches_nothing()) break;
          selected[kind_key(s.kind)][id].push_back(&s);
          break;
      }
    }
  }

  void erase(RootId id) {
    const Root& root = *roots[id];
    for (const auto& o : root.deps.objects) {
      const auto it = by_object.find(object_key(o.kind, o.key.ns, o.key.name));
      if (it == by_object.end()) continue;
      it->second.erase(id);
      if (it->second.empty()) by_object.erase(it);
    }
    for (const auto& s : root.deps.selections) {
      if (s.selector.matches_nothing()) continue;
      switch (s.scope) {
        case NamespaceScope::one: {
          const auto it = by_namespace.find(bucket_key(s.kind, s.ns));
          if (it == by_namespace.end()) break;
          it->second.remove(id, &s);
          if (it->second.empty()) by_namespace.erase(it);
          break;
        }
        case NamespaceScope::all: {
          const auto it = by_kind.find(kind_key(s.kind));
          if (it == by_kind.end()) break;
          it->second.remove(id, &s);
          if (it->second.empty()) by_kind.erase(it);
          break;
        }
        case NamespaceScope::selected: {
          const auto it = selected.find(kind_key(s.kind));
          if (it == selected.end()) break;
          it->second.erase(id);
          if (it->second.empty()) selected.erase(it);
          break;
        }
      }
    }
  }

  void match(const GroupKind& kind, std::string_view ns, std::string_view name,
             const k8s::LabelView& labels, std::vector<RootId>& out,
             std::uint64_t& examined) const {
    if (const auto it = by_object.find(object_key(kind, ns, name)); it != by_object.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
    }
    const std::string kk = kind_key(kind);
    if (const auto it = by_namespace.find(bucket_key(kind, ns)); it != by_namespace.end()) {
      it->second.match(labels, out, examined);
    }
    if (const auto it = by_kind.find(kk); it != by_kind.end()) {
      it->second.match(labels, out, examined);
    }
    if (const auto it = selected.find(kk); it != selected.end()) {
      const auto ns_it = namespaces.find(std::string(ns));
      if (ns_it == namespaces.end()) return;  // labels unknown: matched when it arrives
      const k8s::MapLabels ns_labels(ns_it->second);
      for (const auto& [id, sels] : it->second) {
        for (const KindSelection* s : sels) {
          ++examined;
          if (s->namespace_selector.matches(ns_labels) && s->selector.matches(labels)) {
            out.push_back(id);
            break;
          }
        }
      }
    }
  }

  std::vector<std::string> keys(std::vector<RootId>& ids_found) const {
    std::sort(ids_found.begin(), ids_found.end());
    ids_found.erase(std::unique(ids_found.begin(), ids_found.end()), ids_found.end());
    std::vector<std::string> out;
    out.reserve(ids_found.size());
    for (const RootId id : ids_found) out.push_back(roots[id]->key);
    std::sort(out.begin(), out.end());
    return out;
  }
};

DependencyIndex::DependencyIndex() : impl_(std::make_unique<Impl>()) {}
DependencyIndex::~DependencyIndex() = default;

bool DependencyIndex::set(const std::string& root, RootDependencies deps) {
  const std::unique_lock lock(mutex_);
  Impl& m = *impl_;
  RootId id;
  if (const auto it = m.ids.find(root); it != m.ids.end()) {
    id = it->second;
    if (m.roots[id]->deps == deps) return false;
    m.erase(id);
    m.roots[id]->deps = std::move(deps);
  } else {
    if (!m.free_ids.empty()) {
      id = m.free_ids.back();
      m.free_ids.pop_back();
    } else {
      id = static_cast<RootId>(m.roots.size());
      m.roots.emplace_back();
    }
    m.roots[id] = std::make_unique<Impl::Root>(Impl::Root{root, std::move(deps)});
    m.ids.emplace(root, id);
  }
  m.insert(id);
  return true;
}

void DependencyIndex::remove(const std::string& root) {
  const std::unique_lock lock(mutex_);
  Impl& m = *impl_;
  const auto it = m.ids.find(root);
  if (it == m.ids.end()) return;
  const RootId id = it->second;
  m.erase(id);
  m.roots[id].reset();
  m.free_ids.push_back(id);
  m.ids.erase(it);
}

// --- read windows ----------------------------------------------------------------------

namespace {

// Noted events kept for open windows at most; older ones are dropped and the windows
// that needed them take every change of dependencies as a missed event.
// Windows last one planning pass, so this is rarely reached; it bounds the memory the
// noted objects hold when a read stalls under heavy churn.
constexpr std::size_t kMaxNoted = 1 << 14;

// Whether `deps` select an object of `kind` with this namespace, name and labels
// (`ns_labels`: those of its namespace, when known).
bool selects(const RootDependencies& deps, const GroupKind& kind, std::string_view ns,
             std::string_view name, const k8s::LabelView& labels, const Labels* ns_labels) {
  for (const auto& o : deps.objects) {
    if (o.kind == kind && o.key.ns == ns && o.key.name == name) return true;
  }
  for (const auto& s : deps.selections) {
    if (s.kind != kind || s.selector.matches_nothing()) continue;
    switch (s.scope) {
      case NamespaceScope::one:
        if (s.ns == ns && s.selector.matches(labels)) return true;
        break;
      case NamespaceScope::all:
        if (s.selector.matches(labels)) return true;
        break;
      case NamespaceScope::selected:
        if (ns_labels != nullptr && s.namespace_selector.matches(k8s::MapLabels(*ns_labels)) &&
            s.selector.matches(labels)) {
          return true;
        }
        break;
    }
  }
  return false;
}

// Whether a change of a Namespace's labels moves it into or out of a namespace rule.
bool namespace_rule_flips(const RootDependencies& deps, const k8s::ObjectPtr& old_ns,
                          const k8s::ObjectPtr& new_ns) {
  const std::optional<Labels> before =
      old_ns ? std::optional<Labels>(labels_of(*old_ns)) : std::nullopt;
  const std::optional<Labels> after =
      new_ns ? std::optional<Labels>(labels_of(*new_ns)) : std::nullopt;
  for (const auto& s : deps.selections) {
    if (s.scope != NamespaceScope::selected || s.selector.matches_nothing()) continue;
    const bool was = before && s.namespace_selector.matches(k8s::MapLabels(*before));
    const bool is = after && s.namespace_selector.matches(k8s::MapLabels(*after));
    if (was != is) return true;
  }
  return false;
}

}  // namespace

DependencyIndex::ReadWindow::ReadWindow(ReadWindow&& other) noexcept
    : index_(std::exchange(other.index_, nullptr)), ticket_(other.ticket_) {}

DependencyIndex::ReadWindow& DependencyIndex::ReadWindow::operator=(ReadWindow&& other) noexcept {
  if (this != &other) {
    if (index_ != nullptr) index_->close_window(ticket_);
    index_ = std::exchange(other.index_, nullptr);
    ticket_ = other.ticket_;
  }
  return *this;
}

DependencyIndex::ReadWindow::~ReadWindow() {
  if (index_ != nullptr) index_->close_window(ticket_);
}

DependencyIndex::ReadWindow DependencyIndex::open_read_window() const {
  const std::lock_guard lock(window_mutex_);
  const std::uint64_t ticket = next_seq_;
  open_tickets_.insert(ticket);
  open_windows_.fetch_add(1);
  return ReadWindow(this, ticket);
}

void DependencyIndex::close_window(std::uint64_t ticket) const {
  const std::lock_guard lock(window_mutex_);
  if (const auto it = open_tickets_.find(ticket); it != open_tickets_.end()) {
    open_tickets_.erase(it);
    open_windows_.fetch_sub(1);
  }
  if (open_tickets_.empty()) {
    noted_.clear();
    return;
  }
  const std::uint64_t oldest = *open_tickets_.begin();
  while (!noted_.empty() && noted_.front().seq < oldest) noted_.pop_front();
}

void DependencyIndex::note(const GroupKind& kind, const k8s::ObjectPtr& old_obj,
                           const k8s::ObjectPtr& new_obj) const {
  // Zero here means no window opened before this event's object reached the cache: a
  // window opened later reads the object itself.
  if (open_windows_.load() == 0) return;
  const std::lock_guard lock(window_mutex_);
  if (open_tickets_.empty()) return;
  noted_.push_back(Noted{next_seq_++, kind, old_obj, new_obj});
  if (noted_.size() > kMaxNoted) {
    dropped_through_ = noted_.front().seq;
    noted_.pop_front();
  }
}

DependencyIndex::SetResult DependencyIndex::set(const std::string& root, RootDependencies deps,
                                                ReadWindow window) {
  SetResult r;
  r.changed = set(root, std::move(deps));
  if (!r.changed || window.index_ != this) return r;
  std::vector<Noted> noted;
  {
    const std::lock_guard lock(window_mutex_);
    if (window.ticket_ <= dropped_through_) {
      r.missed_event = true;  // some of its events were dropped: assume the worst
      return r;
    }
    for (auto it = noted_.rbegin(); it != noted_.rend() && it->seq >= window.ticket_; ++it) {
      noted.push_back(*it);
    }
  }
  const GroupKind namespace_kind{"", "Namespace"};
  const std::shared_lock lock(mutex_);
  const auto id = impl_->ids.find(root);
  if (id == impl_->ids.end()) return r;
  const RootDependencies& d = impl_->roots[id->second]->deps;
  for (const auto& n : noted) {
    if (n.kind == namespace_kind && namespace_rule_flips(d, n.old_obj, n.new_obj)) {
      r.missed_event = true;
      return r;
    }
    for (const auto* obj : {n.old_obj.get(), n.new_obj.get()}) {
      if (obj == nullptr) continue;
      const auto ns = impl_->namespaces.find(std::string(obj->ns()));
      const Labels* ns_labels = ns != impl_->namespaces.end() ? &ns->second : nullptr;
      if (selects(d, n.kind, obj->ns(), obj->name(), obj->labels(), ns_labels)) {
        r.missed_event = true;
        return r;
      }
    }
  }
  return r;
}

std::vector<std::string> DependencyIndex::affected(const GroupKind& kind, std::string_view ns,
                                                   std::string_view name,
                                                   const k8s::LabelView& labels) const {
  const std::shared_lock lock(mutex_);
  std::vector<RootId> found;
  std::uint64_t examined = 0;
  impl_->match(kind, ns, name, labels, found, examined);
  examined_.fetch_add(examined, std::memory_order_relaxed);
  return impl_->keys(found);
}

std::vector<std::string> DependencyIndex::affected(const GroupKind& kind, std::string_view ns,
                                                   std::string_view name,
                                                   const k8s::LabelView& old_labels,
                                                   const k8s::LabelView& new_labels) const {
  const std::shared_lock lock(mutex_);
  std::vector<RootId> found;
  std::uint64_t examined = 0;
  impl_->match(kind, ns, name, old_labels, found, examined);
  impl_->match(kind, ns, name, new_labels, found, examined);
  examined_.fetch_add(examined, std::memory_order_relaxed);
  return impl_->keys(found);
}

std::vector<std::string> DependencyIndex::namespace_changed(std::string_view name,
                                                            const Labels* old_labels,
                                                            const Labels* new_labels) {
  const std::unique_lock lock(mutex_);
  Impl& m = *impl_;
  if (new_labels) {
    m.namespaces[std::string(name)] = *new_labels;
  } else {
    m.namespaces.erase(std::string(name));
  }
  std::vector<RootId> found;
  const std::optional<k8s::MapLabels> before =
      old_labels ? std::optional<k8s::MapLabels>(k8s::MapLabels(*old_labels)) : std::nullopt;
  const std::optional<k8s::MapLabels> after =
      new_labels ? std::optional<k8s::MapLabels>(k8s::MapLabels(*new_labels)) : std::nullopt;
  for (const auto& [kind, entries] : m.selected) {
    for (const auto& [id, sels] : entries) {
      for (const KindSelection* s : sels) {
        const bool was = before && s->namespace_selector.matches(*before);
        const bool is = after && s->namespace_selector.matches(*after);
        if (was != is) {
          found.push_back(id);
          break;
        }
      }
    }
  }
  return m.keys(found);
}

RootDependencies DependencyIndex::dependencies(const std::string& root) const {
  const std::shared_lock lock(mutex_);
  const auto it = impl_->ids.find(root);
  if (it == impl_->ids.end()) return {};
  return impl_->roots[it->second]->deps;
}

std::uint64_t DependencyIndex::selections_examined() const {
  return examined_.load(std::memory_order_relaxed);
}

std::size_t DependencyIndex::root_count() const {
  const std::shared_lock lock(mutex_);
  return impl_->ids.size();
}

Labels labels_of(const k8s::Object& object) {
  Labels out;
  const auto labels = object.at({"metadata", "labels"});
  if (!labels || !labels->is_object()) return out;
  for (const auto& [k, v] : labels->get_object()) {
    if (v.is_string()) out.emplace(std::string(k), std::string(v.get_string()));
  }
  return out;
}

k8s::EventHandler dependents_event_handler(const DependencyIndex& index, GroupKind kind,
                                           Enqueue enqueue) {
  k8s::EventHandler h;
  h.on_update = [&index, kind, enqueue](const k8s::ObjectPtr& old_obj,
                                        const k8s::ObjectPtr& new_obj) {
    if (!old_obj || !new_obj) return;
    index.note(kind, old_obj, new_obj);
    for (const auto& root : index.affected(kind, new_obj->ns(), new_obj->name(), old_obj->labels(),
                                           new_obj->labels())) {
      enqueue(root);
    }
  };
  auto one = [&index, kind = std::move(kind),
              enqueue = std::move(enqueue)](const k8s::ObjectPtr& obj) {
    if (!obj) return;
    index.note(kind, nullptr, obj);
    for (const auto& root : index.affected(kind, obj->ns(), obj->name(), obj->labels())) {
      enqueue(root);
    }
  };
  h.on_add = one;
  h.on_delete = std::move(one);
  return h;
}

k8s::EventHandler namespace_event_handler(DependencyIndex& index, Enqueue enqueue) {
  const GroupKind kind{"", "Namespace"};
  auto notify = [&index, kind, enqueue = std::move(enqueue)](const k8s::ObjectPtr& old_obj,
                                                             const k8s::ObjectPtr& new_obj) {
    const k8s::ObjectPtr& any = new_obj ? new_obj : old_obj;
    index.note(kind, old_obj, new_obj);
    std::optional<Labels> before, after;
    if (old_obj) before = labels_of(*old_obj);
    if (new_obj) after = labels_of(*new_obj);
    std::vector<std::string> roots = index.namespace_changed(
        any->name(), before ? &*before : nullptr, after ? &*after : nullptr);
    std::vector<std::string> direct =
        old_obj && new_obj
            ? index.affected(kind, "", any->name(), old_obj->labels(), new_obj->labels())
            : index.affected(kind, "", any->name(), any->labels());
    roots.insert(roots.end(), direct.begin(), direct.end());
    std::sort(roots.begin(), roots.end());
    roots.erase(std::unique(roots.begin(), roots.end()), roots.end());
    for (const auto& root : roots) enqueue(root);
  };
  k8s::EventHandler h;
  h.on_add = [notify](const k8s::ObjectPtr& obj) {
    if (obj) notify(nullptr, obj);
  };
  h.on_update = [notify](const k8s::ObjectPtr& old_obj, const k8s::ObjectPtr& new_obj) {
    if (old_obj && new_obj) notify(old_obj, new_obj);
  };
  h.on_delete = [notify](const k8s::ObjectPtr& obj) {
    if (obj) notify(obj, nullptr);
  };
  return h;
}

k8s::EventHandler owner_event_handler(GroupKind owner, bool owner_namespaced, bool controller_only,
                                      Enqueue enqueue) {
  auto one = [owner = std::move(owner), owner_namespaced, controller_only,
              enqueue = std::move(enqueue)](const k8s::ObjectPtr& obj) {
    if (!obj) return;
    for (const auto& ref : obj->owner_references()) {
      if (controller_only && !ref.controller) continue;
      if (ref.kind != owner.kind) continue;
      const auto slash = ref.api_version.find('/');
      const std::string group =
          slash == std::string::npos ? std::string() : ref.api_version.substr(0, slash);
      if (group != owner.group) continue;
      enqueue(owner_namespaced ? std::string(obj->ns()) + "/" + ref.name : ref.name);
    }
  };
  k8s::EventHandler h;
  h.on_add = one;
  h.on_delete = one;
  h.on_update = [one](const k8s::ObjectPtr& old_obj, const k8s::ObjectPtr& new_obj) {
    one(new_obj);
    // An owner reference removed by the update: the old owner loses the object.
    if (old_obj) one(old_obj);
  };
  return h;
}

}  // namespace aop::runtime
