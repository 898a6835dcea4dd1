// The decode stage's memory: custom resources decoded into the structs of types.hpp,
// kept per object UID for the resourceVersion they were decoded from.
//
// A reconcile reads every member of its hierarchy, but between two reconciles most
// members have not changed. Decoding one means building its JSON from the cache's
// compact form and walking it field by field; with this cache an unchanged member costs
// a hash lookup (decode_shared(): the struct is shared, never copied; the hierarchy holds
// its members so). Failed decodes are kept too, so an invalid
// member is not decoded again on every reconcile. Objects without a UID or
// resourceVersion (`render` input) are decoded every time and never kept.
//
// With a member's decoded struct it keeps the results of the member's field checks
// (field_checks.hpp: they read only the member and the root's global scrape interval),
// so that an unchanged member is not checked again on every reconcile of every root
// that selects it.
//
// Thread-safe: reconciles of different roots decode concurrently. Entries are replaced
// when their object's resourceVersion changes and dropped by forget() (the live
// controller calls it when an object is deleted), so the cache holds at most one entry
// per object the controller's caches hold.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "k8s/object.hpp"
#include "net/result.hpp"
#include "reconcile/agent/decode.hpp"
#include "reconcile/agent/kinds.hpp"
#include "reconcile/agent/types.hpp"

namespace aop::agent {

// The decoder of each custom resource type.
template <class T>
struct Decoding;
template <>
struct Decoding<GrafanaAgent> {
  static Result<GrafanaAgent> from(const boost::json::value& v) { return decode_grafana_agent(v); }
};
template <>
struct Decoding<MetricsInstance> {
  static Result<MetricsInstance> from(const boost::json::value& v) {
    return decode_metrics_instance(v);
  }
};
template <>
struct Decoding<LogsInstance> {
  static Result<LogsInstance> from(const boost::json::value& v) { return decode_logs_instance(v); }
};
template <>
struct Decoding<PodLogs> {
  static Result<PodLogs> from(const boost::json::value& v) { return decode_pod_logs(v); }
};
template <>
struct Decoding<Integration> {
  static Result<Integration> from(const boost::json::value& v) { return decode_integration(v); }
};
template <>
struct Decoding<ServiceMonitor> {
  static Result<ServiceMonitor> from(const boost::json::value& v) {
    return decode_service_monitor(v);
  }
};
template <>
struct Decoding<PodMonitor> {
  static Result<PodMonitor> from(const boost::json::value& v) { return decode_pod_monitor(v); }
};
template <>
struct Decoding<Probe> {
  static Result<Probe> from(const boost::json::value& v) { return decode_probe(v); }
};

class DecodeCache {
 public:
  // `enabled` false: decode every time, keep nothing (one-shot callers such as render).
  explicit DecodeCache(bool enabled = true) : enabled_(enabled) {}

  // `json`: the object as JSON when the caller has it at hand (else it is built from the
  // compact form, only on a miss).
  template <class T>
  Result<T> decode(const k8s::Object& object, const boost::json::object* json = nullptr) {
    const std::string_view uid = object.uid();
    const std::string_view rv = object.resource_version();
    const auto decode = [&] {
      return Decoding<T>::from(json != nullptr ? boost::json::value(*json) : object.to_json());
    };
    if (!enabled_ || uid.empty() || rv.empty()) return decode();
    if (auto hit = lookup(uid, rv)) return *std::static_pointer_cast<const Result<T>>(hit);
    auto decoded = std::make_shared<const Result<T>>(decode());
    store(uid, rv, decoded);
    return *decoded;
  }

  // The same, the struct shared with the cache (and every other reconcile that decoded
  // the same version of the object) instead of copied.
  template <class T>
  Result<std::shared_ptr<const T>> decode_shared(const k8s::Object& object,
                                                 const boost::json::object* json = nullptr) {
    const std::string_view uid = object.uid();
    const std::string_view rv = object.resource_version();
    std::shared_ptr<const Result<T>> decoded;
    if (enabled_ && !uid.empty() && !rv.empty()) {
      decoded = std::static_pointer_cast<const Result<T>>(lookup(uid, rv));
    }
    if (!decoded) {
      decoded = std::make_shared<const Result<T>>(
          Decoding<T>::from(json != nullptr ? boost::json::value(*json) : object.to_json()));
      if (enabled_ && !uid.empty() && !rv.empty()) store(uid, rv, decoded);
    }
    if (!*decoded) return decoded->error();
    return std::shared_ptr<const T>(decoded, &decoded->value());
  }

  // The field checks of the decoded member with metadata `m` under the root's global
  // scrape interval `interval`: `check()` the first time, then what it returned (until
  // the member changes). Without a UID and resourceVersion, or disabled, always `check()`.
  template <class Check>
  std::vector<Problem> checks(const ObjectMeta& m, std::string_view interval, Check&& check) {
    const std::string_view uid = m.uid;
    const std::string_view rv = m.resource_version;
    if (!enabled_ || uid.empty() || rv.empty()) return check();
    if (auto kept = kept_checks(uid, rv, interval)) return std::move(*kept);
    std::vector<Problem> out = check();
    keep_checks(uid, rv, interval, out);
    return out;
  }

  // The object is gone: its entry goes too.
  void forget(std::string_view uid);

  std::size_t size() const;
  std::uint64_t hits() const;
  std::uint64_t misses() const;

 private:
  struct Entry {
    std::string resource_version;
    std::shared_ptr<const void> result;  // a Result<T> for the object's type
    // Field checks by global scrape interval (one, but for roots that disagree on it).
    std::map<std::string, std::vector<Problem>, std::less<>> checks;
  };
  std::shared_ptr<const void> lookup(std::string_view uid, std::string_view rv);
  void store(std::string_view uid, std::string_view rv, std::shared_ptr<const void> result);
  std::optional<std::vector<Problem>> kept_checks(std::string_view uid, std::string_view rv,
                                                  std::string_view interval) const;
  void keep_checks(std::string_view uid, std::string_view rv, std::string_view interval,
                   const std::vector<Problem>& problems);

  // Looked up by string_view: a lookup allocates nothing.
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };

  const bool enabled_;
  mutable std::mutex mutex_;  // owns entries_, hits_, misses_
  std::unordered_map<std::string, Entry, Hash, std::equal_to<>> entries_;
  std::uint64_t hits_ = 0;
  std::uint64_t misses_ = 0;
};

}  // namespace aop::agent
