#include "reconcile/runtime/invalid_objects.hpp"

#include <utility>

namespace aop::runtime {

InvalidObjects::InvalidObjects(std::string controller, net::metrics::Registry* registry)
    : controller_(std::move(controller)),
      gauge_((registry != nullptr ? *registry : net::metrics::registry())
                 .gauge("agent_operator_invalid_objects",
                        "Objects found invalid in the last reconcile of the roots that read "
                        "them (left out, or refusing their root), by kind.",
                        {"controller", "kind"})) {}

void InvalidObjects::set(const std::string& root, std::set<InvalidObject> objects) {
  const std::lock_guard lock(mutex_);
  if (objects.empty()) {
    if (by_root_.erase(root) == 0) return;
  } else {
    auto& now = by_root_[root];
    if (now == objects) return;
    now = std::move(objects);
  }
  update();
}

void InvalidObjects::forget(const std::string& root) {
  const std::lock_guard lock(mutex_);
  if (by_root_.erase(root) > 0) update();
}

std::size_t InvalidObjects::count(const std::string& kind) const {
  const std::lock_guard lock(mutex_);
  std::set<InvalidObject> distinct;
  for (const auto& [root, objects] : by_root_) {
    for (const auto& o : objects) {
      if (o.kind == kind) distinct.insert(o);
    }
  }
  return distinct.size();
}

void InvalidObjects::update() {
  std::set<InvalidObject> distinct;
  for (const auto& [root, objects] : by_root_) distinct.insert(objects.begin(), objects.end());
  std::map<std::string, std::size_t> counts;
  for (const auto& k : kinds_) counts[k] = 0;
  for (const auto& o : distinct) ++counts[o.kind];
  for (const auto& [kind, n] : counts) {
    kinds_.insert(kind);
    gauge_.with({controller_, kind}).set(static_cast<double>(n));
  }
}

}  // namespace aop::runtime
