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

FragmentCache::RootEntries FragmentCache::take(const std::string& root_uid) {
  const std::lock_guard lock(mutex_);
  const auto it = roots_.find(root_uid);
  if (it == roots_.end()) return {};
  RootEntries out = std::move(it->second);
  roots_.erase(it);
  return out;
}

void FragmentCache::put(const std::string& root_uid, RootEntries entries) {
  if (!enabled_ || root_uid.empty()) return;
  const std::lock_guard lock(mutex_);
  roots_.insert_or_assign(root_uid, std::move(entries));
}

void FragmentCache::forget(std::string_view uid) {
  const std::lock_guard lock(mutex_);
  roots_.erase(std::string(uid));
}

void FragmentCache::count(std::uint64_t hits, std::uint64_t misses) {
  hits_ += hits;
  misses_ += misses;
}

std::size_t FragmentCache::roots() const {
  const std::lock_guard lock(mutex_);
  return roots_.size();
}

std::size_t FragmentCache::size() const {
  const std::lock_guard lock(mutex_);
  std::size_t n = 0;
  for (const auto& [uid, entries] : roots_) n += entries.size();
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
