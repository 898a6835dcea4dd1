// The render-fragments stage's memory: each member's fragment (a ServiceMonitor's or
// PodMonitor's scrape configs, a Probe's, a PodLogs job), kept per root for the inputs
// it was rendered from, so that a reconcile renders again only the members that changed
// and assembles the files from the kept fragments (README: Incremental rendering).
//
// A kept fragment is reused only when all of these are unchanged (its key):
//   * the member: kind, namespace/name, UID and resourceVersion (its decoded struct is a
//     function of them, and validation only leaves members out, never edits them);
//   * the root-level inputs (root_inputs()): the GrafanaAgent's namespace, name, UID,
//     labels, annotations and whole spec (shards, the API server block, the metrics
//     settings every scrape config copies), and every operator flag that shapes the
//     output (Options). A member's fragment reads nothing else of the hierarchy: its
//     RenderContext offers the agent, the options and the assets, not the instances;
//   * every referenced Secret or ConfigMap key it read, with the value it read (or
//     that the key was missing): the reads are recorded while rendering, so a fragment
//     depends on exactly the keys it used.
// Instance fragments, the global blocks and Integrations (a copy of their config) cost
// little and are rendered every time.
//
// Kept as text for the static backend (the files are text: a kept member costs a copy of
// its text, not a render, an emission and a tree), packed at zlib's fastest level while
// kept; as JSON trees for Alloy, which translates the trees. With the texts, a root keeps
// the compressed chunks of its config files (config_text.hpp's GzipChunks).
//
// Bounded: a root's entries are replaced at each of its renders by the fragments that
// render used (a member left out, unselected or deleted goes at the root's next render,
// which its change triggers), and forget() drops a deleted root's. Objects without a UID
// or resourceVersion (`render` input) are rendered every time and never kept.
//
// Thread-safe: renders of different roots run concurrently; one root's render takes its
// entries out (Use) and puts what it used back.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "k8s/object.hpp"
#include "reconcile/agent/config_text.hpp"
#include "reconcile/agent/fragments.hpp"
#include "reconcile/agent/options.hpp"

namespace aop::agent {

class FragmentCache {
 public:
  // `enabled` false (--agent-incremental-render=false): nothing is kept, every render is
  // a full one.
  explicit FragmentCache(bool enabled = true) : enabled_(enabled) {}

  bool enabled() const { return enabled_; }

  // A member's kept fragment with its key (see above).
  struct Entry {
    std::string uid;
    std::string resource_version;
    std::string root_inputs;
    bool as_text = false;  // rendered as text
    std::vector<AssetRead> reads;
    ScrapeFragment fragment;  // its text packed
  };
  // What one root keeps between its renders.
  struct RootState {
    std::map<MemberKey, Entry> members;
    std::array<GzipChunks, kConfigFiles.size()> files;
  };

  // One render of one root: takes the root's state out of the cache and, when destroyed,
  // puts back what the render used.
  class Use {
   public:
    Use(FragmentCache& cache, std::string root_uid, std::string root_inputs);
    ~Use();
    Use(const Use&) = delete;
    Use& operator=(const Use&) = delete;

    // The kept fragment of `key` when it was rendered from the same inputs.
    std::optional<ScrapeFragment> find(const MemberKey& key, const ObjectMeta& m,
                                       const AssetStore& assets, bool as_text);
    // Keeps what was rendered for `key` (a text is kept packed).
    void keep(const MemberKey& key, const ObjectMeta& m, std::vector<AssetRead> reads,
              const ScrapeFragment& fragment, bool as_text);
    // The compressed chunks of `file`, for its encoding to use and replace.
    GzipChunks& chunks(ConfigFile file);

   private:
    FragmentCache& cache_;
    std::string root_uid_;
    std::string inputs_;
    RootState old_;
    RootState now_;
    std::array<bool, kConfigFiles.size()> encoded_{};
    std::uint64_t hits_ = 0;
    std::uint64_t misses_ = 0;
  };

  // A root is gone: its entries go too. (Members' entries go at their roots' next render.)
  void forget(std::string_view uid);

  std::size_t roots() const;
  std::size_t size() const;  // kept fragments, over every root
  std::uint64_t hits() const { return hits_.load(); }
  std::uint64_t misses() const { return misses_.load(); }

 private:
  RootState take(const std::string& root_uid);
  void put(const std::string& root_uid, RootState state);

  const bool enabled_;
  mutable std::mutex mutex_;  // owns roots_
  std::unordered_map<std::string, RootState> roots_;
  std::atomic<std::uint64_t> hits_{0};
  std::atomic<std::uint64_t> misses_{0};
};

// The root-level inputs of every member fragment, as one string (a SHA-256 of them):
// the GrafanaAgent's metadata.namespace/name/uid/labels/annotations and spec, and the
// options. Its status and resourceVersion are not inputs (a status write must not throw
// the fragments away).
std::string root_inputs(const k8s::Object& root, const Options& options);

}  // namespace aop::agent
