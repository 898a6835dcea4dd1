#include "tools/kube-sim/faults.hpp"

#include <algorithm>
#include <charconv>

#include <boost/json.hpp>

namespace aop::sim {

namespace json = boost::json;

namespace {

Result<double> fraction(const json::value& v, std::string_view key) {
  if (v.is_null()) return 0.0;
  if (!v.is_number()) return make_error(std::string(key) + ": expected a number between 0 and 1");
  const double d = v.to_number<double>();
  if (d < 0 || d > 1) return make_error(std::string(key) + ": expected a number between 0 and 1");
  return d;
}

Result<std::int64_t> integer(const json::value& v, std::string_view key, std::int64_t off) {
  if (v.is_null()) return off;
  if (!v.is_int64() && !v.is_uint64())
    return make_error(std::string(key) + ": expected an integer");
  return v.to_number<std::int64_t>();
}

}  // namespace

Result<void> Faults::apply(const json::object& body, bool& expire_now) {
  FaultSettings s = settings;
  if (const auto* r = body.if_contains("reset"); r != nullptr && r->is_bool() && r->as_bool()) {
    s = FaultSettings{};
  }
  for (const auto& [k, v] : body) {
    const std::string_view key = k;
    if (key == "reset") continue;
    if (key == "close_watch_after") {
      auto n = integer(v, key, 0);
      if (!n || *n < 0) return make_error("close_watch_after: expected a non-negative integer");
      s.close_watch_after = static_cast<std::uint64_t>(*n);
    } else if (key == "close_watch_probability") {
      auto f = fraction(v, key);
      if (!f) return f.error();
      s.close_watch_probability = *f;
    } else if (key == "http_500" || key == "http_503" || key == "http_429") {
      auto f = fraction(v, key);
      if (!f) return f.error();
      (key == "http_500" ? s.http_500 : key == "http_503" ? s.http_503 : s.http_429) = *f;
    } else if (key == "retry_after_seconds") {
      auto n = integer(v, key, 1);
      if (!n || *n < 0) return make_error("retry_after_seconds: expected a non-negative integer");
      s.retry_after_seconds = static_cast<int>(*n);
    } else if (key == "latency_ms") {
      auto n = integer(v, key, 0);
      if (!n || *n < 0) return make_error("latency_ms: expected a non-negative integer");
      s.latency = std::chrono::milliseconds(*n);
    } else if (key == "gone_next_watch" || key == "gone_in_stream_next_watch") {
      auto n = integer(v, key, 0);
      if (!n || *n < 0) return make_error(std::string(key) + ": expected a non-negative integer");
      (key == "gone_next_watch" ? s.gone_next_watch : s.gone_in_stream_next_watch) =
          static_cast<std::uint64_t>(*n);
    } else if (key == "expire_watches") {
      if (!v.is_bool() && !v.is_null()) return make_error("expire_watches: expected a boolean");
      expire_now = v.is_bool() && v.as_bool();
    } else if (key == "conflict_next_update" || key == "only_resources") {
      auto& list = key == "conflict_next_update" ? s.conflict_next_update : s.only_resources;
      if (v.is_null()) {
        list.clear();
      } else if (v.is_string()) {
        list.emplace_back(v.as_string());
      } else if (v.is_array()) {
        for (const auto& t : v.as_array()) {
          if (!t.is_string()) return make_error(std::string(key) + ": expected strings");
          list.emplace_back(t.as_string());
        }
      } else {
        return make_error(std::string(key) + ": expected a string or a list of strings");
      }
    } else if (key == "only_user_agent") {
      if (!v.is_string() && !v.is_null()) return make_error("only_user_agent: expected a string");
      s.only_user_agent = v.is_string() ? std::string(v.as_string()) : std::string();
    } else if (key == "stall_watch_after") {
      auto n = integer(v, key, -1);
      if (!n) return n.error();
      s.stall_watch_after = *n;
    } else if (key == "seed") {
      auto n = integer(v, key, 1);
      if (!n) return n.error();
      reseed(static_cast<std::uint64_t>(*n));
    } else {
      return make_error("unknown fault mode: " + std::string(key));
    }
  }
  settings = std::move(s);
  return {};
}

json::object Faults::settings_json() const {
  json::object o;
  o["close_watch_after"] = settings.close_watch_after;
  o["close_watch_probability"] = settings.close_watch_probability;
  o["http_500"] = settings.http_500;
  o["http_503"] = settings.http_503;
  o["http_429"] = settings.http_429;
  o["retry_after_seconds"] = settings.retry_after_seconds;
  o["latency_ms"] = settings.latency.count();
  o["gone_next_watch"] = settings.gone_next_watch;
  o["gone_in_stream_next_watch"] = settings.gone_in_stream_next_watch;
  json::array c;
  for (const auto& t : settings.conflict_next_update) c.emplace_back(t);
  o["conflict_next_update"] = std::move(c);
  o["stall_watch_after"] = settings.stall_watch_after;
  o["only_user_agent"] = settings.only_user_agent;
  json::array r;
  for (const auto& t : settings.only_resources) r.emplace_back(t);
  o["only_resources"] = std::move(r);
  return o;
}

std::uint64_t Faults::count_of(std::string_view mode) const {
  auto it = counts_.find(mode);
  return it == counts_.end() ? 0 : it->second;
}

json::object Faults::counts_json() const {
  json::object o;
  for (const char* mode : {"close_watch_after", "close_watch_probability", "http_500", "http_503",
                           "http_429", "latency", "gone_next_watch", "gone_in_stream_next_watch",
                           "expire_watches", "conflict_next_update", "stall_watch_after"}) {
    o[mode] = count_of(mode);
  }
  return o;
}

bool Faults::in_scope(std::string_view user_agent, std::string_view resource,
                      std::string_view subresource) const {
  if (!settings.only_user_agent.empty() &&
      user_agent.find(settings.only_user_agent) == std::string_view::npos) {
    return false;
  }
  if (settings.only_resources.empty()) return true;
  std::string name(resource);
  if (!subresource.empty()) name += "/" + std::string(subresource);
  return std::find(settings.only_resources.begin(), settings.only_resources.end(), name) !=
         settings.only_resources.end();
}

bool Faults::take_conflict(std::string_view resource, std::string_view ns, std::string_view name) {
  auto& targets = settings.conflict_next_update;
  const std::string exact =
      ns.empty() ? std::string(resource) + "/" + std::string(name)
                 : std::string(resource) + "/" + std::string(ns) + "/" + std::string(name);
  auto it = std::find(targets.begin(), targets.end(), exact);
  if (it == targets.end()) it = std::find(targets.begin(), targets.end(), "*");
  if (it == targets.end()) return false;
  targets.erase(it);
  count("conflict_next_update");
  return true;
}

}  // namespace aop::sim
