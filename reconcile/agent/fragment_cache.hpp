// The render-fragments stage's memory: each member's fragment (a ServiceMonitor's or
// PodMonitor's scrape configs, a Probe's, a PodLogs job), kept for the inputs it was
// rendered from, so that a reconcile renders again only the members that changed and
// assembles the files from the kept fragments (README: Incremental rendering).
//
// A kept fragment is reused only when all of these are unchanged (its key):
//   * the member: kind, namespace/name, UID and resourceVersion (its decoded struct is a
//     function of them, and validation only leaves members out, never edits them);
//   * what the member renderers read of the root, and the options (member_view() of
//     fragments.hpp: the renderers are given only those fields, so they cannot read
//     another). A member's fragment reads nothing else of the hierarchy: its
//     RenderContext offers that view of the agent, the options and the assets, not the
//     instances;
//   * every referenced Secret or ConfigMap key it read, with the value it read (or
//     that the key was missing): the reads are recorded while rendering, so a fragment
//     depends on exactly the keys it used.
// The key names no root: roots that select the same member and agree on its view share
// one fragment (in large clusters several agents scrape the same services: the scale
// benchmark's monitors are each selected by two to four roots), rendered by the first
// and taken by the others. Instance fragments, the global blocks and Integrations (a
// copy of their config) cost little and are rendered every time.
//
// Kept as text for the static backend (the files are text: a kept member costs a copy of
// its text, not a render, an emission and a tree), packed at zlib's fastest level while
// kept; as JSON trees for Alloy, which translates the trees. With the fragments, each
// root keeps the compressed chunks of its config files (config_text.hpp's GzipChunks).
//
// Bounded: a root holds the fragments its last render used (a member left out,
// unselected or deleted is let go at the root's next render, which its change
// triggers), forget() drops a deleted root's, and a fragment no root holds is gone.
// Objects without a UID or resourceVersion (`render` input) are rendered every time and
// never kept.
//
// Thread-safe: renders of different roots run concurrently; one root's render takes its
// state out (Use) and puts what it used back; the index of shared fragments has a lock
// of its own.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "reconcile/agent/config_text.hpp"
#include "reconcile/agent/fragments.hpp"

namespace aop::agent {

class FragmentCache {
 public:
  // `enabled` false (--agent-incremental-render=false): nothing is kept, every render is
  // a full one.
  explicit FragmentCache(bool enabled = true) : enabled_(enabled) {}

  bool enabled() const { return enabled_; }

  // What one render took from the cache: fragments reused from the root's last render,
  // shared from another root's, and rendered.
  struct UseCounts {
    std::uint64_t reused = 0;
    std::uint64_t shared = 0;
    std::uint64_t rendered = 0;
  };
  // Called at the end of every render with its counts (the live controller's /metrics);
  // set before the first render.
  void set_observer(std::function<void(const UseCounts&)> observer) {
    observer_ = std::move(observer);
  }

  // A member's kept fragment with its key (see above). Immutable once kept.
  struct Entry {
    std::string uid;
    std::string resource_version;
    std::string inputs;    // member_view().key
    bool as_text = false;  // rendered as text
    std::vector<AssetRead> reads;
    ScrapeFragment fragment;  // its text packed
  };
  // What one root keeps between its renders.
  struct RootState {
    std::map<MemberKey, std::shared_ptr<const Entry>> members;
    std::array<GzipChunks, kConfigFiles.size()> files;
  };

  // One render of one root: takes the root's state out of the cache and, when destroyed,
  // puts back what the render used.
  class Use {
   public:
    Use(FragmentCache& cache, std::string root_uid);
    ~Use();
    Use(const Use&) = delete;
    Use& operator=(const Use&) = delete;

    // The kept fragment of `key` when it was rendered from the same inputs (`inputs`:
    // member_view().key), by this root or another.
    std::optional<ScrapeFragment> find(const MemberKey& key, const ObjectMeta& m,
                                       const AssetStore& assets, const std::string& inputs,
                                       bool as_text);
    // Keeps what was rendered for `key` (a text is kept packed) and offers it to the
    // other roots.
    void keep(const MemberKey& key, const ObjectMeta& m, std::vector<AssetRead> reads,
              const ScrapeFragment& fragment, const std::string& inputs, bool as_text);
    // The compressed chunks of `file`, for its encoding to use and replace.
    GzipChunks& chunks(ConfigFile file);

   private:
    FragmentCache& cache_;
    std::string root_uid_;
    RootState old_;
    RootState now_;
    std::array<bool, kConfigFiles.size()> encoded_{};
    std::uint64_t hits_ = 0;
    std::uint64_t shared_hits_ = 0;
    std::uint64_t misses_ = 0;
  };

  // A root is gone: its entries go too. (Members' entries go at their roots' next render.)
  void forget(std::string_view uid);

  std::size_t roots() const;
  std::size_t size() const;                            // distinct fragments held, over every root
  std::uint64_t hits() const { return hits_.load(); }  // reused, shared_hits() included
  // Reused from another root (rendered by it from the same inputs).
  std::uint64_t shared_hits() const { return shared_hits_.load(); }
  std::uint64_t misses() const { return misses_.load(); }

 private:
  // A shared fragment's identity: the member and its key, but the reads (checked
  // against the asking root's assets).
  using SharedKey = std::tuple<MemberKey, std::string, std::string, std::string, bool>;

  RootState take(const std::string& root_uid);
  void put(const std::string& root_uid, RootState state);
  std::shared_ptr<const Entry> shared(const SharedKey& key) const;
  void share(SharedKey key, const std::shared_ptr<const Entry>& entry);

  const bool enabled_;
  mutable std::mutex roots_mutex_;  // owns roots_
  std::unordered_map<std::string, RootState> roots_;
  mutable std::mutex shared_mutex_;  // owns shared_, shares_since_sweep_
  // Every fragment some root holds (an expired one is swept out now and then).
  std::map<SharedKey, std::weak_ptr<const Entry>> shared_;
  std::size_t shares_since_sweep_ = 0;
  std::atomic<std::uint64_t> hits_{0};
  std::atomic<std::uint64_t> shared_hits_{0};
  std::atomic<std::uint64_t> misses_{0};
  std::function<void(const UseCounts&)> observer_;
};

}  // namespace aop::agent
