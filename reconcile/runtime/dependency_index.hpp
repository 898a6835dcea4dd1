// DependencyIndex: which roots must be reconciled again when an object changes.
//
// Each reconcile records what its root read: single objects by (kind, namespace/name),
// and selections of a kind by a namespace rule (one namespace | namespaces whose labels
// match a selector | all namespaces) plus a label selector. An event on an object then
// finds every root whose recorded reads it falls into; for an update both the old and
// the new object are tested, so an object whose labels moved it OUT of a hierarchy
// reconciles that hierarchy too. A Namespace label change reconciles the roots whose
// namespace-selector rules matched it before and not after, or after and not before
// (a namespace that keeps matching changes nothing those roots read).
//
// Cost: a lookup does not scan all roots. Object reads are a hash lookup. Selections in
// one namespace are bucketed by (kind, namespace), and inside a bucket by one equality
// requirement of the selector (matchLabels `k: v`, the common case): the lookup visits
// only the entries whose pinned label the object carries, plus the bucket's unpinned
// ones. All-namespace selections are bucketed the same way by kind. Namespace-selector
// rules (rare, and needing the namespace's labels) live in a separate per-kind list.
//
// Thread-safety: a shared_mutex; set()/remove()/namespace_changed() are exclusive and
// atomic (readers see a root's old or new dependencies, never a mix), lookups shared.
//
// Namespace labels for the "selected" rules are tracked here from Namespace events
// (namespace_changed), so a controller that uses such rules must feed its Namespace
// informer's events in (see namespace_event_handler).
#pragma once

#include <atomic>
#include <compare>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "k8s/informer.hpp"
#include "reconcile/runtime/dependencies.hpp"

namespace aop::runtime {

class DependencyIndex {
 public:
  DependencyIndex();
  ~DependencyIndex();
  DependencyIndex(const DependencyIndex&) = delete;
  DependencyIndex& operator=(const DependencyIndex&) = delete;

  // Replaces everything `root` depends on, atomically. Returns false (and does nothing)
  // when the dependencies are the same as recorded: the common case on resync.
  bool set(const std::string& root, RootDependencies deps);
  // Forgets `root` (deleted).
  void remove(const std::string& root);

  // Roots affected by an add or delete of this object, sorted and unique.
  std::vector<std::string> affected(const GroupKind& kind, std::string_view ns,
                                    std::string_view name, const k8s::LabelView& labels) const;
  // Roots affected by an update: those selecting the old or the new labels.
  std::vector<std::string> affected(const GroupKind& kind, std::string_view ns,
                                    std::string_view name, const k8s::LabelView& old_labels,
                                    const k8s::LabelView& new_labels) const;

  // A Namespace was added (old == nullptr), changed, or deleted (new == nullptr).
  // Records its labels and returns the roots whose namespace-selector rules now match it
  // differently than before. (Roots that read the Namespace object itself are found with
  // affected() on kind Namespace; namespace_event_handler does both.)
  std::vector<std::string> namespace_changed(std::string_view name, const Labels* old_labels,
                                             const Labels* new_labels);

  // The window between a reconcile's reading the caches and its set(). An event in it
  // is looked up against the dependencies recorded before: one that only the new
  // dependencies select finds no root and would be lost (the first reconcile of a new
  // root does not see an object created while it rendered). Open a window before
  // reading and hand it to set(), which closes it: events noted (note()) while it was
  // open are matched against the new dependencies. Destroying it closes it too.
  class ReadWindow {
   public:
    ReadWindow() = default;
    ReadWindow(ReadWindow&& other) noexcept;
    ReadWindow& operator=(ReadWindow&& other) noexcept;
    ReadWindow(const ReadWindow&) = delete;
    ReadWindow& operator=(const ReadWindow&) = delete;
    ~ReadWindow();

   private:
    friend class DependencyIndex;
    ReadWindow(const DependencyIndex* index, std::uint64_t ticket)
        : index_(index), ticket_(ticket) {}
    const DependencyIndex* index_ = nullptr;
    std::uint64_t ticket_ = 0;
  };
  ReadWindow open_read_window() const;

  // An event on an object of `kind` (add: old null; delete: new null), noted for the
  // open windows; a no-op while none is open. Call it before looking the event up (the
  // handlers below do).
  void note(const GroupKind& kind, const k8s::ObjectPtr& old_obj,
            const k8s::ObjectPtr& new_obj) const;

  struct SetResult {
    bool changed = false;  // as set() above
    // The dependencies changed and an event noted while `window` was open falls into
    // the new ones: run the root again (it may not have seen that object).
    bool missed_event = false;
  };
  SetResult set(const std::string& root, RootDependencies deps, ReadWindow window);

  // What is recorded for `root` (empty when unknown). For tests and debugging.
  RootDependencies dependencies(const std::string& root) const;
  std::size_t root_count() const;
  // Selections whose selector was evaluated by lookups so far (cumulative). Shows that a
  // lookup examines the entries filed under the object's labels, not every root.
  std::uint64_t selections_examined() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  mutable std::shared_mutex mutex_;  // owns *impl_
  mutable std::atomic<std::uint64_t> examined_{0};

  // Events noted while read windows are open, oldest first (see ReadWindow).
  struct Noted {
    std::uint64_t seq;
    GroupKind kind;
    k8s::ObjectPtr old_obj, new_obj;
  };
  void close_window(std::uint64_t ticket) const;
  mutable std::mutex window_mutex_;  // owns noted_, open_tickets_, next_seq_
  mutable std::atomic<std::size_t> open_windows_{0};
  mutable std::deque<Noted> noted_;
  mutable std::multiset<std::uint64_t> open_tickets_;
  mutable std::uint64_t next_seq_ = 1;
  mutable std::uint64_t dropped_through_ = 0;  // noted events up to this seq were dropped
};

// The labels of an object as a map (metadata.labels), for Namespace events.
Labels labels_of(const k8s::Object& object);

using Enqueue = std::function<void(const std::string& root)>;

// Handlers keep a reference to `index`, which must outlive the informer they are added to.

// An informer handler for objects of `kind` that enqueues every dependent root.
k8s::EventHandler dependents_event_handler(const DependencyIndex& index, GroupKind kind,
                                           Enqueue enqueue);

// The handler for the Namespace informer: namespace-selector rules (namespace_changed)
// plus roots that read Namespace objects directly.
k8s::EventHandler namespace_event_handler(DependencyIndex& index, Enqueue enqueue);

// A handler for owned objects that enqueues their owner of kind `owner` (the root).
// The root key is "<object namespace>/<owner name>" when the owner is namespaced,
// else "<owner name>". With `controller_only`, only a controller reference counts.
k8s::EventHandler owner_event_handler(GroupKind owner, bool owner_namespaced, bool controller_only,
                                      Enqueue enqueue);

}  // namespace aop::runtime
