#include "tools/kube-sim/api_error.hpp"

#include <stdexcept>

#include <boost/json.hpp>

namespace aop::sim {

namespace json = boost::json;

std::string ApiError::to_json() const {
  json::object o;
  o["kind"] = "Status";
  o["apiVersion"] = "v1";
  o["metadata"] = json::object();
  o["status"] = "Failure";
  o["message"] = message;
  if (!reason.empty()) o["reason"] = reason;
  json::object details;
  if (!name.empty()) details["name"] = name;
  if (!group.empty()) details["group"] = group;
  if (!kind.empty()) details["kind"] = kind;
  if (!causes.empty()) {
    json::array arr;
    for (const auto& c : causes) {
      json::object co;
      if (!c.reason.empty()) co["reason"] = c.reason;
      co["message"] = c.message;
      if (!c.field.empty()) co["field"] = c.field;
      arr.push_back(std::move(co));
    }
    details["causes"] = std::move(arr);
  }
  if (retry_after_seconds > 0) details["retryAfterSeconds"] = retry_after_seconds;
  if (!details.empty()) o["details"] = std::move(details);
  o["code"] = code;
  return json::serialize(o);
}

void throw_exception_from_error(const ApiError& e, const boost::source_location&) {
  throw std::runtime_error(e.message);
}

namespace errors {

namespace {

ApiError with_resource(int code, std::string reason, std::string message, const GroupResource& gr,
                       std::string_view name) {
  ApiError e;
  e.code = code;
  e.reason = std::move(reason);
  e.message = std::move(message);
  e.name = std::string(name);
  e.group = gr.group;
  e.kind = gr.resource;
  return e;
}

}  // namespace

std::string quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        out += c;
    }
  }
  out += '"';
  return out;
}

ApiError not_found(const GroupResource& gr, std::string_view name) {
  return with_resource(404, "NotFound", gr.str() + " " + quote(name) + " not found", gr, name);
}

ApiError already_exists(const GroupResource& gr, std::string_view name) {
  return with_resource(409, "AlreadyExists", gr.str() + " " + quote(name) + " already exists", gr,
                       name);
}

ApiError conflict(const GroupResource& gr, std::string_view name, std::string_view detail) {
  return with_resource(409, "Conflict",
                       "Operation cannot be fulfilled on " + gr.str() + " " + quote(name) + ": " +
                           std::string(detail),
                       gr, name);
}

ApiError conflict_modified(const GroupResource& gr, std::string_view name) {
  return conflict(gr, name,
                  "the object has been modified; please apply your changes to the latest version "
                  "and try again");
}

ApiError invalid(std::string_view group, std::string_view kind, std::string_view name,
                 std::vector<StatusCause> causes) {
  ApiError e;
  e.code = 422;
  e.reason = "Invalid";
  e.name = std::string(name);
  e.group = std::string(group);
  e.kind = std::string(kind);
  const std::string qualified =
      group.empty() ? std::string(kind) : std::string(kind) + "." + std::string(group);
  std::string list;
  for (std::size_t i = 0; i < causes.size(); ++i) {
    if (i > 0) list += ", ";
    list +=
        causes[i].field.empty() ? causes[i].message : causes[i].field + ": " + causes[i].message;
  }
  if (causes.size() > 1) list = "[" + list + "]";
  e.message = qualified + " " + quote(name) + " is invalid: " + list;
  e.causes = std::move(causes);
  return e;
}

ApiError bad_request(std::string message) {
  ApiError e;
  e.code = 400;
  e.reason = "BadRequest";
  e.message = std::move(message);
  return e;
}

ApiError expired(std::string message) {
  ApiError e;
  e.code = 410;
  e.reason = "Expired";
  e.message = std::move(message);
  return e;
}

ApiError gone(std::string message) {
  ApiError e;
  e.code = 410;
  e.reason = "Gone";
  e.message = std::move(message);
  return e;
}

ApiError too_many_requests(int retry_after_seconds) {
  ApiError e;
  e.code = 429;
  e.reason = "TooManyRequests";
  e.message = "Too many requests, please try again later.";
  e.retry_after_seconds = retry_after_seconds;
  return e;
}

ApiError method_not_allowed() {
  ApiError e;
  e.code = 405;
  e.reason = "MethodNotAllowed";
  e.message = "the server does not allow this method on the requested resource";
  return e;
}

ApiError unsupported_media_type(std::string message) {
  ApiError e;
  e.code = 415;
  e.reason = "UnsupportedMediaType";
  e.message = std::move(message);
  return e;
}

ApiError not_acceptable(std::string message) {
  ApiError e;
  e.code = 406;
  e.reason = "NotAcceptable";
  e.message = std::move(message);
  return e;
}

ApiError unauthorized() {
  ApiError e;
  e.code = 401;
  e.reason = "Unauthorized";
  e.message = "Unauthorized";
  return e;
}

ApiError forbidden(const GroupResource& gr, std::string_view name, const std::string& message) {
  auto e = with_resource(403, "Forbidden", "", gr, name);
  e.message = gr.str() + " " + quote(name) + " is forbidden: " + message;
  return e;
}

ApiError internal_error(std::string message) {
  ApiError e;
  e.code = 500;
  e.reason = "InternalError";
  e.message = "Internal error occurred: " + message;
  e.causes.push_back(StatusCause{"", std::move(message), ""});
  return e;
}

ApiError service_unavailable(std::string message, int retry_after_seconds) {
  ApiError e;
  e.code = 503;
  e.reason = "ServiceUnavailable";
  e.message = std::move(message);
  e.retry_after_seconds = retry_after_seconds;
  return e;
}

ApiError timeout(std::string message) {
  ApiError e;
  e.code = 504;
  e.reason = "Timeout";
  e.message = std::move(message);
  return e;
}

ApiError request_entity_too_large(std::string message) {
  ApiError e;
  e.code = 413;
  e.reason = "RequestEntityTooLarge";
  e.message = std::move(message);
  return e;
}

StatusCause field_invalid(std::string field, std::string_view value_repr,
                          const std::string& detail) {
  std::string msg = "Invalid value: " + std::string(value_repr);
  if (!detail.empty()) msg += ": " + detail;
  return StatusCause{"FieldValueInvalid", std::move(msg), std::move(field)};
}

StatusCause field_required(std::string field, const std::string& detail) {
  std::string msg = "Required value";
  if (!detail.empty()) msg += ": " + detail;
  return StatusCause{"FieldValueRequired", std::move(msg), std::move(field)};
}

StatusCause field_not_supported(std::string field, std::string_view value_repr,
                                const std::vector<std::string>& supported_reprs) {
  std::string msg = "Unsupported value: " + std::string(value_repr);
  if (!supported_reprs.empty()) {
    msg += ": supported values: ";
    for (std::size_t i = 0; i < supported_reprs.size(); ++i) {
      if (i > 0) msg += ", ";
      msg += supported_reprs[i];
    }
  }
  return StatusCause{"FieldValueNotSupported", std::move(msg), std::move(field)};
}

StatusCause field_forbidden(std::string field, const std::string& detail) {
  std::string msg = "Forbidden";
  if (!detail.empty()) msg += ": " + detail;
  return StatusCause{"FieldValueForbidden", std::move(msg), std::move(field)};
}

StatusCause field_too_long(std::string field, const std::string& detail) {
  std::string msg = "Too long";
  if (!detail.empty()) msg += ": " + detail;
  return StatusCause{"FieldValueTooLong", std::move(msg), std::move(field)};
}

StatusCause field_duplicate(std::string field, std::string_view value_repr) {
  return StatusCause{"FieldValueDuplicate", "Duplicate value: " + std::string(value_repr),
                     std::move(field)};
}

}  // namespace errors
}  // namespace aop::sim
