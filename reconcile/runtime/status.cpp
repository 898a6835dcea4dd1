#include "reconcile/runtime/status.hpp"
#include "reconcile/runtime/json_fields.hpp"

#include <algorithm>

#include <boost/json.hpp>

#include "k8s/timestamp.hpp"

#include "net/redact.hpp"

namespace aop::runtime {

namespace json = boost::json;

namespace {

// result<bool> does not convert from a bare bool (it could be the error's constructor).
k8s::ApiResult<bool> written(bool w) {
  return k8s::ApiResult<bool>(boost::system::in_place_value, w);
}

using detail::string_at;

// Status is readable by anyone who can read the root: strings in it (problem messages
// quoting user input) never carry the credentials of a URL.
void redact_strings(json::value& v) {
  if (auto* str = v.if_string()) {
    if (net::needs_redaction(*str)) *str = net::redact(*str);
  } else if (auto* arr = v.if_array()) {
    for (auto& item : *arr) redact_strings(item);
  } else if (auto* obj = v.if_object()) {
    for (auto& item : *obj) redact_strings(item.value());
  }
}

}  // namespace

json::array merge_conditions(const json::array& existing, const std::vector<Condition>& desired,
                             std::string_view now, bool& changed) {
  json::array out = existing;
  for (const Condition& c : desired) {
    json::object want{{"type", c.type},
                      {"status", c.status},
                      {"reason", c.reason},
                      {"message", net::redact(c.message)},
                      {"observedGeneration", c.observed_generation}};
    auto it = std::find_if(out.begin(), out.end(), [&](const json::value& v) {
      return v.is_object() && string_at(v.get_object(), "type") == c.type;
    });
    if (it == out.end()) {
      want["lastTransitionTime"] = now;
      out.push_back(std::move(want));
      continue;
    }
    const json::object& have = it->get_object();
    const std::string old_time = string_at(have, "lastTransitionTime");
    want["lastTransitionTime"] = string_at(have, "status") == c.status && !old_time.empty()
                                     ? json::string(old_time)
                                     : json::string(now);
    *it = std::move(want);
  }
  changed = out != existing;
  return out;
}

StatusWriter::StatusWriter(k8s::ApiClient& client, StatusWriterOptions options)
    : client_(client), options_(std::move(options)) {}

json::object StatusWriter::merged_status(const json::object& status, const StatusUpdate& update,
                                         bool& changed) const {
  json::object out = status;
  for (const auto& [k, v] : update.fields) {
    out[k] = v;
    redact_strings(out[k]);
  }
  if (!update.conditions.empty() || !update.removed_conditions.empty()) {
    json::array existing;
    if (const auto* c = status.if_contains("conditions"); c && c->is_array()) {
      existing = c->get_array();
    }
    existing.erase(std::remove_if(existing.begin(), existing.end(),
                                  [&](const json::value& v) {
                                    const auto* o = v.if_object();
                                    return o != nullptr &&
                                           std::find(update.removed_conditions.begin(),
                                                     update.removed_conditions.end(),
                                                     string_at(*o, "type")) !=
                                               update.removed_conditions.end();
                                  }),
                   existing.end());
    bool cond_changed = false;
    out["conditions"] = merge_conditions(existing, update.conditions,
                                         k8s::format_rfc3339(options_.now()), cond_changed);
  }
  changed = out != status;
  return out;
}

boost::asio::awaitable<k8s::ApiResult<bool>> StatusWriter::update(const k8s::GroupVersionKind& gvk,
                                                                  const k8s::ObjectPtr& current,
                                                                  const StatusUpdate& update) {
  if (!current) co_return written(false);
  json::value obj = current->to_json();
  for (int attempt = 0;; ++attempt) {
    if (!obj.is_object()) co_return written(false);
    json::object& o = obj.get_object();
    json::object status;
    if (const auto* s = o.if_contains("status"); s && s->is_object()) status = s->get_object();
    bool changed = false;
    json::object next = merged_status(status, update, changed);
    if (!changed) co_return written(false);
    if (options_.may_write && !options_.may_write()) co_return written(false);
    o["status"] = std::move(next);
    if (!o.contains("apiVersion")) o["apiVersion"] = gvk.api_version();
    if (!o.contains("kind")) o["kind"] = gvk.kind;
    auto r = co_await client_.update_status(obj);
    if (r) co_return written(true);
    if (r.error().not_found()) co_return written(false);
    if (!r.error().conflict() || attempt >= options_.conflict_retries) co_return r.error();
    auto fresh = co_await client_.get(gvk, current->key());
    if (!fresh) {
      if (fresh.error().not_found()) co_return written(false);
      co_return fresh.error();
    }
    obj = std::move(fresh.value());
  }
}

std::vector<ChangeEvent> change_events(const ApplyReport& report) {
  struct Change {
    ObjectResult result;
    const char* reason;
    const char* verb;
  };
  static constexpr Change kChanges[] = {{ObjectResult::created, "Created", "created"},
                                        {ObjectResult::updated, "Updated", "updated"},
                                        {ObjectResult::recreated, "Recreated", "recreated"},
                                        {ObjectResult::deleted, "Pruned", "deleted"}};
  std::vector<ChangeEvent> out;
  for (const Change& c : kChanges) {
    const std::vector<std::string> objects = report.objects_with(c.result);
    if (objects.empty()) continue;
    std::string message = c.verb;
    for (std::size_t i = 0; i < objects.size() && i < kObjectsInChangeEvent; ++i) {
      message += (i == 0 ? " " : ", ") + objects[i];
    }
    if (objects.size() > kObjectsInChangeEvent) {
      message += " and " + std::to_string(objects.size() - kObjectsInChangeEvent) + " more";
    }
    out.push_back({c.reason, std::move(message)});
  }
  return out;
}

k8s::EventSubject event_subject(const k8s::GroupVersionKind& gvk, const k8s::Object& object) {
  k8s::EventSubject s;
  s.api_version = gvk.api_version();
  s.kind = gvk.kind;
  s.ns = std::string(object.ns());
  s.name = std::string(object.name());
  s.uid = std::string(object.uid());
  s.resource_version = std::string(object.resource_version());
  return s;
}

}  // namespace aop::runtime
