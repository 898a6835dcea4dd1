// A small controller on the runtime, for the integration test and the benchmark.
//
// Roots are ConfigMaps labelled `role=root`; `data.group` names a group. A root depends
// on the ConfigMaps of its namespace labelled `dep-group=<group>` (a selection recorded
// in the dependency index) and owns:
//   * Secret `<root>-out`: the sorted `data.value`s of its dependencies;
//   * Secret `<root>-extra` while the root's `data.extra` is "true".
// Both carry the managed-by label and a controller ownerReference to the root, and are
// pruned by owner UID when no longer desired.
#pragma once

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <boost/json.hpp>

#include "k8s/base64.hpp"
#include "k8s/store.hpp"
#include "reconcile/runtime/apply.hpp"
#include "reconcile/runtime/controller.hpp"
#include "reconcile/runtime/dependency_index.hpp"

namespace aop::runtime::testing {

inline constexpr const char* kExampleManagedBy = "runtime-example";

class ExampleController {
 public:
  ExampleController(const k8s::Store& roots, const k8s::Store& deps, DependencyIndex& index,
                    ApplyEngine& engine)
      : roots_(roots), deps_(deps), index_(index), engine_(engine) {}

  static ApplyOptions apply_options() {
    ApplyOptions o;
    o.controller = "example";
    o.managed_by_value = kExampleManagedBy;
    o.hash_annotation = "example.com/applied-hash";
    return o;
  }

  boost::asio::awaitable<ReconcileResult> reconcile(std::string key) {
    const auto slash = key.find('/');
    const k8s::ObjectKey root_key{key.substr(0, slash), key.substr(slash + 1)};
    const k8s::ObjectPtr root = roots_.get(root_key);
    count(key);
    if (!root || root->being_deleted()) {
      index_.remove(key);  // its owned objects go with it (garbage collection)
      co_return ReconcileResult::ok();
    }
    const auto group = string_at(*root, "group");
    const auto selector = k8s::parse_label_selector_string("dep-group=" + group);
    if (!selector) co_return ReconcileResult::terminal_error(selector.error().message);

    RootDependencies deps;
    KindSelection sel;
    sel.kind = {"", "ConfigMap"};
    sel.scope = NamespaceScope::one;
    sel.ns = root_key.ns;
    sel.selector = selector.value();
    deps.selections.push_back(sel);
    index_.set(key, std::move(deps));

    std::vector<std::string> values;
    for (const auto& dep : deps_.list_namespace(root_key.ns)) {
      if (selector->matches(dep->labels())) values.push_back(string_at(*dep, "value"));
    }
    std::sort(values.begin(), values.end());
    std::string joined;
    for (const auto& v : values) joined += v + ";";

    ApplyPlan plan;
    plan.root = key;
    plan.apply(secret(*root, root_key.name + "-out", joined));
    if (string_at(*root, "extra") == "true") {
      plan.apply(secret(*root, root_key.name + "-extra", "extra"));
    }
    PruneScope prune;
    prune.kinds = {{"", "v1", "Secret"}};
    prune.owner_uid = std::string(root->uid());
    prune.namespaces = {root_key.ns};
    plan.prune(std::move(prune));
    const ApplyReport report = co_await engine_.apply(plan);
    if (!report.ok()) {
      co_return ReconcileResult::failed(report.errors.empty() ? "writes blocked"
                                                              : report.errors.front());
    }
    co_return ReconcileResult::ok();
  }

  int reconciles(const std::string& key) const {
    const std::lock_guard lock(mutex_);
    const auto it = counts_.find(key);
    return it == counts_.end() ? 0 : it->second;
  }
  std::map<std::string, int> snapshot() const {
    const std::lock_guard lock(mutex_);
    return counts_;
  }
  long total() const { return total_.load(); }

 private:
  static std::string string_at(const k8s::Object& o, std::string_view field) {
    const auto v = o.at({"data", field});
    return v && v->is_string() ? std::string(v->get_string()) : std::string();
  }

  static boost::json::object secret(const k8s::Object& root, const std::string& name,
                                    const std::string& value) {
    namespace json = boost::json;
    json::object owner{{"apiVersion", "v1"},
                       {"kind", "ConfigMap"},
                       {"name", std::string(root.name())},
                       {"uid", std::string(root.uid())},
                       {"controller", true},
                       {"blockOwnerDeletion", true}};
    json::object md{{"namespace", std::string(root.ns())},
                    {"name", name},
                    {"labels", json::object{{"app.kubernetes.io/managed-by", kExampleManagedBy}}},
                    {"ownerReferences", json::array{owner}}};
    return json::object{{"apiVersion", "v1"},
                        {"kind", "Secret"},
                        {"metadata", std::move(md)},
                        {"type", "Opaque"},
                        {"data", json::object{{"value", k8s::base64_encode(value)}}}};
  }

  void count(const std::string& key) {
    ++total_;
    const std::lock_guard lock(mutex_);
    ++counts_[key];
  }

  const k8s::Store& roots_;
  const k8s::Store& deps_;
  DependencyIndex& index_;
  ApplyEngine& engine_;
  mutable std::mutex mutex_;  // owns counts_
  std::map<std::string, int> counts_;
  std::atomic<long> total_{0};
};

}  // namespace aop::runtime::testing
