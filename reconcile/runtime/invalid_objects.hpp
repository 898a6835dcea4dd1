// The gauge agent_operator_invalid_objects{controller,kind}: how many objects a
// controller found invalid in its last reconcile of each root (a member left out, a
// root-level object that refuses its root, an annotated source whose annotation is
// wrong). An object read by two roots counts once. Thread-safe.
#pragma once

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <tuple>

#include "net/metrics.hpp"

namespace aop::runtime {

struct InvalidObject {
  std::string kind;  // e.g. ServiceMonitor
  std::string ns;    // "" for cluster-scoped objects
  std::string name;
  bool operator==(const InvalidObject&) const = default;
  bool operator<(const InvalidObject& o) const {
    return std::tie(kind, ns, name) < std::tie(o.kind, o.ns, o.name);
  }
};

class InvalidObjects {
 public:
  // `registry` nullptr: the process-wide registry served on /metrics.
  explicit InvalidObjects(std::string controller, net::metrics::Registry* registry = nullptr);

  // The objects the last reconcile of `root` found invalid (replacing its earlier set).
  void set(const std::string& root, std::set<InvalidObject> objects);
  // The root is gone: its objects no longer count.
  void forget(const std::string& root);
  // Distinct invalid objects of this kind now.
  std::size_t count(const std::string& kind) const;

 private:
  void update();  // under mutex_

  const std::string controller_;
  net::metrics::Family<net::metrics::Gauge>& gauge_;
  mutable std::mutex mutex_;  // owns by_root_, kinds_
  std::map<std::string, std::set<InvalidObject>> by_root_;
  std::set<std::string> kinds_;  // every kind given a series so far (kept at 0 when fixed)
};

}  // namespace aop::runtime
