#include "reconcile/agent/fragment_cache.hpp"

#include <set>

namespace aop::agent {

namespace {

// Whether `e` was rendered for the member `m` from these inputs and these assets.
bool current(const FragmentCache::Entry& e, const ObjectMeta& m, const AssetStore& assets,
             const std::string& inputs, bool as_text) {
  if (e.uid != m.uid || e.resource_version != m.resource_version || e.inputs != inputs ||
      e.as_text != as_text) {
    return false;
  }
  for (const auto& read : e.reads) {
    const auto v = assets.values.find(read.key);
    const bool found = v != assets.values.end();
    if (found != read.value.has_value() || (found && v->second != *read.value)) return false;
  }
  return true;
}

bool keepable(const ObjectMeta& m) {
  return !m.uid.empty() && !m.resource_version.empty();
}

}  // namespace

FragmentCache::RootState FragmentCache::take(const std::string& root_uid) {
  const std::lock_guard lock(roots_mutex_);
  const auto it = roots_.find(root_uid);
  if (it == roots_.end()) return {};
  RootState out = std::move(it->second);
  roots_.erase(it);
  return out;
}

void FragmentCache::put(const std::string& root_uid, RootState state) {
  if (!enabled_ || root_uid.empty()) return;
  const std::lock_guard lock(roots_mutex_);
  roots_.insert_or_assign(root_uid, std::move(state));
}

void FragmentCache::forget(std::string_view uid) {
  RootState gone;  // its fragments are let go outside the lock
  const std::lock_guard lock(roots_mutex_);
  const auto it = roots_.find(std::string(uid));
  if (it == roots_.end()) return;
  gone = std::move(it->second);
  roots_.erase(it);
}

std::shared_ptr<const FragmentCache::Entry> FragmentCache::shared(const SharedKey& key) const {
  const std::lock_guard lock(shared_mutex_);
  const auto it = shared_.find(key);
  return it == shared_.end() ? nullptr : it->second.lock();
}

void FragmentCache::share(SharedKey key, const std::shared_ptr<const Entry>& entry) {
  const std::lock_guard lock(shared_mutex_);
  shared_.insert_or_assign(std::move(key), entry);
  // Fragments no root holds any more: swept once the index has grown by half since the
  // last sweep, so that the index stays within about twice what is held.
  if (++shares_since_sweep_ > shared_.size() / 2 + 64) {
    shares_since_sweep_ = 0;
    std::erase_if(shared_, [](const auto& kv) { return kv.second.expired(); });
  }
}

FragmentCache::Use::Use(FragmentCache& cache, std::string root_uid)
    : cache_(cache), root_uid_(std::move(root_uid)), old_(cache.take(root_uid_)) {
  now_.files = std::move(old_.files);
}

FragmentCache::Use::~Use() {
  cache_.hits_ += hits_;
  cache_.shared_hits_ += shared_hits_;
  if (cache_.observer_) cache_.observer_({hits_ - shared_hits_, shared_hits_, misses_});
  cache_.misses_ += misses_;
  // A file not encoded this time (not needed, or not reached) keeps no chunks.
  for (std::size_t i = 0; i < now_.files.size(); ++i) {
    if (!encoded_[i]) now_.files[i] = GzipChunks();
  }
  cache_.put(root_uid_, std::move(now_));
}

GzipChunks& FragmentCache::Use::chunks(ConfigFile file) {
  const auto i = static_cast<std::size_t>(file);
  encoded_[i] = true;
  return now_.files[i];
}

std::optional<ScrapeFragment> FragmentCache::Use::find(const MemberKey& key, const ObjectMeta& m,
                                                       const AssetStore& assets,
                                                       const std::string& inputs, bool as_text) {
  if (!keepable(m)) return std::nullopt;
  std::shared_ptr<const Entry> entry;
  if (const auto it = old_.members.find(key);
      it != old_.members.end() && current(*it->second, m, assets, inputs, as_text)) {
    entry = it->second;
    ++hits_;
  } else if (auto other = cache_.shared({key, m.uid, m.resource_version, inputs, as_text});
             other && current(*other, m, assets, inputs, as_text)) {
    entry = std::move(other);
    ++hits_;
    ++shared_hits_;
  } else {
    ++misses_;
    return std::nullopt;
  }
  now_.members.insert_or_assign(key, entry);
  return entry->fragment;
}

void FragmentCache::Use::keep(const MemberKey& key, const ObjectMeta& m,
                              std::vector<AssetRead> reads, const ScrapeFragment& fragment,
                              const std::string& inputs, bool as_text) {
  if (!keepable(m) || !cache_.enabled_) return;
  auto e = std::make_shared<Entry>(
      Entry{m.uid, m.resource_version, inputs, as_text, std::move(reads), fragment});
  if (fragment.text) e->fragment.text = fragment.text->packed();
  std::shared_ptr<const Entry> kept = std::move(e);
  now_.members.insert_or_assign(key, kept);
  cache_.share({key, m.uid, m.resource_version, inputs, as_text}, kept);
}

std::size_t FragmentCache::roots() const {
  const std::lock_guard lock(roots_mutex_);
  return roots_.size();
}

std::size_t FragmentCache::size() const {
  std::set<const Entry*> held;
  const std::lock_guard lock(roots_mutex_);
  for (const auto& [uid, state] : roots_) {
    for (const auto& [key, entry] : state.members) held.insert(entry.get());
  }
  return held.size();
}

}  // namespace aop::agent
