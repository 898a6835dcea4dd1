#include "k8s/api_request.hpp"

#include <algorithm>
#include <charconv>

#include <boost/json.hpp>

#include "net/error.hpp"

namespace aop::k8s {
namespace json = boost::json;

namespace {

// How much of a non-Status error body goes into the message: enough to recognise a
// proxy's error page, not a whole HTML document.
constexpr std::size_t kMaxBodyInMessage = 200;

std::string_view reason_for_status(int status) {
  switch (status) {
    case 400:
      return "BadRequest";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "NotFound";
    case 405:
      return "MethodNotAllowed";
    case 406:
      return "NotAcceptable";
    case 409:
      return "Conflict";
    case 410:
      return "Expired";
    case 413:
      return "RequestEntityTooLarge";
    case 415:
      return "UnsupportedMediaType";
    case 422:
      return "Invalid";
    case 429:
      return "TooManyRequests";
    case 500:
      return "InternalError";
    case 503:
      return "ServiceUnavailable";
    case 504:
      return "Timeout";
    default:
      return status >= 500 ? "InternalError" : "Unknown";
  }
}

void add_param(std::string& q, std::string_view name, std::string_view value) {
  q += q.empty() ? '?' : '&';
  q += name;
  q += '=';
  q += url_escape(value);
}

}  // namespace

std::string url_escape(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    const bool unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                            (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '~';
    if (unreserved) {
      out.push_back(ch);
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::pair<std::string, std::string> split_api_version(std::string_view api_version) {
  const auto slash = api_version.find('/');
  if (slash == std::string_view::npos) return {"", std::string(api_version)};
  return {std::string(api_version.substr(0, slash)), std::string(api_version.substr(slash + 1))};
}

std::string resource_path(const ResourceInfo& info, std::string_view ns, std::string_view name,
                          std::string_view subresource) {
  std::string path = info.gvk.group.empty() ? "/api/" + info.gvk.version
                                            : "/apis/" + info.gvk.group + "/" + info.gvk.version;
  if (info.namespaced && !ns.empty()) {
    path += "/namespaces/";
    path += url_escape(ns);
  }
  path += '/';
  path += info.resource;
  if (!name.empty()) {
    path += '/';
    path += url_escape(name);
    if (!subresource.empty()) {
      path += '/';
      path += subresource;
    }
  }
  return path;
}

std::string list_query(const ListOptions& options, std::string_view continue_token) {
  std::string q;
  if (!options.label_selector.empty()) add_param(q, "labelSelector", options.label_selector);
  if (!options.field_selector.empty()) add_param(q, "fieldSelector", options.field_selector);
  if (options.limit > 0) add_param(q, "limit", std::to_string(options.limit));
  if (!continue_token.empty()) {
    add_param(q, "continue", continue_token);  // the token fixes the snapshot
  } else if (!options.resource_version.empty()) {
    add_param(q, "resourceVersion", options.resource_version);
  }
  return q;
}

std::string watch_query(const WatchOptions& options) {
  std::string q = "?watch=true";
  if (!options.label_selector.empty()) add_param(q, "labelSelector", options.label_selector);
  if (!options.field_selector.empty()) add_param(q, "fieldSelector", options.field_selector);
  if (!options.resource_version.empty()) {
    add_param(q, "resourceVersion", options.resource_version);
  }
  if (options.allow_bookmarks) add_param(q, "allowWatchBookmarks", "true");
  if (options.send_initial_events) {
    add_param(q, "sendInitialEvents", "true");
    add_param(q, "resourceVersionMatch", "NotOlderThan");
  }
  if (options.timeout.count() > 0) {
    add_param(q, "timeoutSeconds", std::to_string(options.timeout.count()));
  }
  return q;
}

json::value delete_body(const DeleteOptions& options) {
  json::object body{{"kind", "DeleteOptions"}, {"apiVersion", "v1"}};
  switch (options.propagation) {
    case PropagationPolicy::unset:
      break;
    case PropagationPolicy::orphan:
      body["propagationPolicy"] = "Orphan";
      break;
    case PropagationPolicy::background:
      body["propagationPolicy"] = "Background";
      break;
    case PropagationPolicy::foreground:
      body["propagationPolicy"] = "Foreground";
      break;
  }
  if (options.precondition_uid || options.precondition_resource_version) {
    json::object pre;
    if (options.precondition_uid) pre["uid"] = *options.precondition_uid;
    if (options.precondition_resource_version) {
      pre["resourceVersion"] = *options.precondition_resource_version;
    }
    body["preconditions"] = std::move(pre);
  }
  if (options.grace_period_seconds) body["gracePeriodSeconds"] = *options.grace_period_seconds;
  return body;
}

ApiError error_from_response(int status, std::string_view body) {
  ApiError e;
  e.code = status;
  boost::system::error_code ec;
  const json::value v = json::parse(body, ec);
  if (!ec && v.is_object()) {
    const auto& o = v.get_object();
    const auto* kind = o.if_contains("kind");
    if (kind != nullptr && kind->is_string() && kind->get_string() == "Status") {
      if (const auto* r = o.if_contains("reason"); r != nullptr && r->is_string()) {
        e.reason = r->get_string();
      }
      if (const auto* m = o.if_contains("message"); m != nullptr && m->is_string()) {
        e.message = m->get_string();
      }
    }
  }
  if (e.reason.empty()) e.reason = reason_for_status(status);
  if (e.message.empty()) {
    std::string_view head = body.substr(0, kMaxBodyInMessage);
    while (!head.empty() && (head.back() == '\n' || head.back() == '\r')) head.remove_suffix(1);
    e.message = head.empty() ? "HTTP " + std::to_string(status) : std::string(head);
  }
  return e;
}

ApiError error_from_transport(const boost::system::error_code& ec, std::string_view what) {
  ApiError e;
  e.transport = ec;
  e.message = std::string(what) + ": " + ec.message();
  return e;
}

bool ApiError::stalled() const {
  return code == 0 && transport == net::Errc::idle_timeout;
}

std::string ApiError::describe() const {
  if (code == 0) return message.empty() ? transport.message() : message;
  std::string out = std::to_string(code);
  if (!reason.empty()) out += " " + reason;
  if (!message.empty()) out += ": " + message;
  return out;
}

std::optional<net::Duration> parse_retry_after(std::string_view value) {
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
  long long seconds = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
  if (ec != std::errc{} || end != value.data() + value.size() || seconds < 0) return std::nullopt;
  // A day is beyond any sane value; clamp to avoid overflow in the duration.
  return std::chrono::seconds(std::min<long long>(seconds, 86400));
}

RetryReason retry_reason(const ApiError& error, bool read_only, bool sent) {
  if (error.code == 429) return RetryReason::throttled;
  if (error.code == 0) {
    if (error.transport == boost::asio::error::operation_aborted ||
        error.transport == net::Errc::client_closed ||
        net::is_tls_verification_error(error.transport)) {
      return RetryReason::none;
    }
    return read_only || !sent ? RetryReason::connection : RetryReason::none;
  }
  if (error.code >= 500 && read_only) {
    // 501 Not Implemented will not get better.
    return error.code == 501 ? RetryReason::none : RetryReason::server_error;
  }
  return RetryReason::none;
}

std::vector<ResourceInfo> parse_api_resource_list(const json::value& list, std::string_view group,
                                                  std::string_view version) {
  std::vector<ResourceInfo> out;
  const auto* o = list.if_object();
  const auto* resources = o != nullptr ? o->if_contains("resources") : nullptr;
  if (resources == nullptr || !resources->is_array()) return out;
  std::vector<std::string> with_status;
  for (const auto& r : resources->get_array()) {
    const auto* ro = r.if_object();
    if (ro == nullptr) continue;
    const auto* name = ro->if_contains("name");
    const auto* kind = ro->if_contains("kind");
    if (name == nullptr || !name->is_string() || kind == nullptr || !kind->is_string()) continue;
    const std::string_view n = name->get_string();
    if (const auto slash = n.find('/'); slash != std::string_view::npos) {
      if (n.substr(slash + 1) == "status") with_status.emplace_back(n.substr(0, slash));
      continue;
    }
    ResourceInfo info;
    info.gvk = {std::string(group), std::string(version), std::string(kind->get_string())};
    info.resource = std::string(n);
    if (const auto* ns = ro->if_contains("namespaced"); ns != nullptr && ns->is_bool()) {
      info.namespaced = ns->get_bool();
    }
    if (const auto* verbs = ro->if_contains("verbs"); verbs != nullptr && verbs->is_array()) {
      for (const auto& v : verbs->get_array()) {
        if (v.is_string()) info.verbs.emplace_back(v.get_string());
      }
    }
    out.push_back(std::move(info));
  }
  for (auto& info : out) {
    info.has_status =
        std::find(with_status.begin(), with_status.end(), info.resource) != with_status.end();
  }
  return out;
}

std::vector<std::string> parse_api_group_list(const json::value& groups) {
  std::vector<std::string> out;
  const auto* o = groups.if_object();
  const auto* list = o != nullptr ? o->if_contains("groups") : nullptr;
  if (list == nullptr || !list->is_array()) return out;
  for (const auto& g : list->get_array()) {
    const auto* go = g.if_object();
    const auto* versions = go != nullptr ? go->if_contains("versions") : nullptr;
    if (versions == nullptr || !versions->is_array()) continue;
    for (const auto& v : versions->get_array()) {
      const auto* vo = v.if_object();
      const auto* gv = vo != nullptr ? vo->if_contains("groupVersion") : nullptr;
      if (gv != nullptr && gv->is_string()) out.emplace_back(gv->get_string());
    }
  }
  return out;
}

}  // namespace aop::k8s
