// metav1.Status failures, shaped exactly as kube-apiserver sends them: kubectl and the
// client libraries print `message`, branch on `reason`/`code`, and read `details` (the
// `kind` of NotFound/Conflict/AlreadyExists details is the *resource*, e.g. "configmaps",
// because apimachinery builds them from a GroupResource; Invalid details carry the Kind).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <boost/system/result.hpp>

namespace aop::sim {

// A resource type name as it appears in messages: "configmaps", "deployments.apps".
struct GroupResource {
  std::string group;
  std::string resource;

  std::string str() const { return group.empty() ? resource : resource + "." + group; }
  bool operator==(const GroupResource&) const = default;
};

struct StatusCause {
  std::string reason;  // FieldValueInvalid, FieldValueRequired, ...
  std::string message;
  std::string field;
};

struct ApiError {
  // Not an aggregate, so that result<std::size_t, ApiError> is unambiguous.
  ApiError() = default;
  int code = 500;
  std::string reason;
  std::string message;
  // details; all optional
  std::string name;
  std::string group;
  std::string kind;
  std::vector<StatusCause> causes;
  int retry_after_seconds = 0;

  // The Status JSON body.
  std::string to_json() const;
};

[[noreturn]] void throw_exception_from_error(const ApiError& e, const boost::source_location& = {});

template <class T>
using ApiResult = boost::system::result<T, ApiError>;

namespace errors {

ApiError not_found(const GroupResource& gr, std::string_view name);
ApiError already_exists(const GroupResource& gr, std::string_view name);
// `Operation cannot be fulfilled on <gr> "<name>": <detail>`
ApiError conflict(const GroupResource& gr, std::string_view name, std::string_view detail);
ApiError conflict_modified(const GroupResource& gr, std::string_view name);
// Invalid with one cause per field error. `qualified_kind` is "ConfigMap" or
// "Foo.example.com"; each cause is {reason, message, field} and renders as
// "<field>: <message>".
ApiError invalid(std::string_view group, std::string_view kind, std::string_view name,
                 std::vector<StatusCause> causes);
ApiError bad_request(std::string message);
ApiError expired(std::string message);  // 410, reason Expired
ApiError gone(std::string message);     // 410, reason Gone
ApiError too_many_requests(int retry_after_seconds);
ApiError method_not_allowed();
ApiError unsupported_media_type(std::string message);
ApiError not_acceptable(std::string message);
ApiError unauthorized();
ApiError forbidden(const GroupResource& gr, std::string_view name, const std::string& message);
ApiError internal_error(std::string message);
ApiError service_unavailable(std::string message, int retry_after_seconds);
ApiError timeout(std::string message);
ApiError request_entity_too_large(std::string message);

// Field-error causes with apimachinery's wording.
StatusCause field_invalid(std::string field, std::string_view value_repr,
                          const std::string& detail);
StatusCause field_required(std::string field, const std::string& detail = {});
StatusCause field_not_supported(std::string field, std::string_view value_repr,
                                const std::vector<std::string>& supported_reprs);
StatusCause field_forbidden(std::string field, const std::string& detail);
StatusCause field_too_long(std::string field, const std::string& detail);
StatusCause field_duplicate(std::string field, std::string_view value_repr);

// Go's %q-ish rendering of a string value for messages: "abc".
std::string quote(std::string_view s);

}  // namespace errors
}  // namespace aop::sim
