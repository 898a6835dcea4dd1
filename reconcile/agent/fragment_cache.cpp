#include "reconcile/agent/fragment_cache.hpp"

#include <boost/json/serialize.hpp>

#include "reconcile/runtime/apply_plan.hpp"

namespace aop::agent {

namespace json = boost::json;

namespace {
// Options as root_inputs() reads it: a field added to Options changes its size and stops
// the build here, until root_inputs() includes it (a flag that shapes the output but is
// not in the key would leave fragments rendered under its old value in use).
struct OptionsAsKeyed {
  Labels operator_labels;
  std::string operator_version;
  Compat compat;
  Backend backend;
  std::string alloy_image;
};
static_assert(sizeof(Options) == sizeof(OptionsAsKeyed),
              "a field was added to agent::Options: add it to root_inputs()");
}  // namespace

FragmentCache::RootState FragmentCache::take(const std::string& root_uid) {
  const std::lock_guard lock(mutex_);
  const auto it = roots_.find(root_uid);
  if (it == roots_.end()) return {};
  RootState out = std::move(it->second);
  roots_.erase(it);
  return out;
}

void FragmentCache::put(const std::string& root_uid, RootState state) {
  if (!enabled_ || root_uid.empty()) return;
  const std::lock_guard lock(mutex_);
  roots_.insert_or_assign(root_uid, std::move(state));
}

void FragmentCache::forget(std::string_view uid) {
  const std::lock_guard lock(mutex_);
  roots_.erase(std::string(uid));
}

FragmentCache::Use::Use(FragmentCache& cache, std::string root_uid, std::string root_inputs)
    : cache_(cache),
      root_uid_(std::move(root_uid)),
      inputs_(std::move(root_inputs)),
      old_(cache.take(root_uid_)) {
  now_.files = std::move(old_.files);
}

FragmentCache::Use::~Use() {
  cache_.hits_ += hits_;
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
                                                       const AssetStore& assets, bool as_text) {
  if (m.uid.empty() || m.resource_version.empty()) return std::nullopt;
  const auto it = old_.members.find(key);
  const auto current = [&](const Entry& e) {
    if (e.uid != m.uid || e.resource_version != m.resource_version || e.root_inputs != inputs_ ||
        e.as_text != as_text) {
      return false;
    }
    for (const auto& read : e.reads) {
      const auto v = assets.values.find(read.key);
      const bool found = v != assets.values.end();
      if (found != read.value.has_value() || (found && v->second != *read.value)) return false;
    }
    return true;
  };
  if (it == old_.members.end() || !current(it->second)) {
    ++misses_;
    return std::nullopt;
  }
  ++hits_;
  const Entry& e = now_.members.insert_or_assign(key, std::move(it->second)).first->second;
  old_.members.erase(it);
  return e.fragment;
}

void FragmentCache::Use::keep(const MemberKey& key, const ObjectMeta& m,
                              std::vector<AssetRead> reads, const ScrapeFragment& fragment,
                              bool as_text) {
  if (m.uid.empty() || m.resource_version.empty()) return;
  Entry e{m.uid, m.resource_version, inputs_, as_text, std::move(reads), fragment};
  if (fragment.text) e.fragment.text = fragment.text->packed();
  now_.members.insert_or_assign(key, std::move(e));
}

std::size_t FragmentCache::roots() const {
  const std::lock_guard lock(mutex_);
  return roots_.size();
}

std::size_t FragmentCache::size() const {
  const std::lock_guard lock(mutex_);
  std::size_t n = 0;
  for (const auto& [uid, state] : roots_) n += state.members.size();
  return n;
}

std::string root_inputs(const k8s::Object& root, const Options& options) {
  json::object metadata;
  metadata["namespace"] = root.key().ns;
  metadata["name"] = root.key().name;
  metadata["uid"] = root.uid();
  metadata["labels"] = root.at({"metadata", "labels"}).value_or(json::value());
  metadata["annotations"] = root.at({"metadata", "annotations"}).value_or(json::value());
  json::object labels;
  for (const auto& [k, v] : options.operator_labels) labels[k] = v;
  const json::object opts{{"operator_labels", std::move(labels)},
                          {"operator_version", options.operator_version},
                          {"compat", options.compat == Compat::fixed ? "fixed" : "upstream"},
                          {"backend", backend_name(options.backend)},
                          {"alloy_image", options.alloy_image}};
  const json::object inputs{{"metadata", std::move(metadata)},
                            {"spec", root.at({"spec"}).value_or(json::value())},
                            {"options", opts}};
  return runtime::sha256_hex(json::serialize(inputs));
}

}  // namespace aop::agent
