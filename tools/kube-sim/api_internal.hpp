// Pieces shared by the files implementing ApiServer (not part of its interface).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>

#include "tools/kube-sim/api.hpp"

namespace aop::sim {

struct ApiServer::Target {
  std::string path;
  std::map<std::string, std::string, std::less<>> query;  // decoded; first value wins
  TypePtr type;                                           // the requested group/version/resource
  std::string ns;
  std::string name;
  std::string subresource;
  bool watch_path = false;  // legacy /watch/ prefix
  std::string verb;         // get, list, watch, create, update, patch, delete, deletecollection
  UserInfo user;            // who asks (system:anonymous without credentials)

  std::string_view param(std::string_view key) const {
    auto it = query.find(key);
    return it == query.end() ? std::string_view() : std::string_view(it->second);
  }
  bool has(std::string_view key) const { return query.contains(key); }
  // Go's strconv.ParseBool spellings of true.
  bool flag(std::string_view key) const {
    const auto v = param(key);
    return v == "true" || v == "1" || v == "t" || v == "T" || v == "TRUE" || v == "True";
  }
};

struct ApiServer::WriteContext {
  bool dry_run = false;
  std::string field_validation = "Strict";  // Strict, Warn, Ignore
  std::vector<std::string>* warnings = nullptr;
  std::string user_agent;
};

namespace detail {

Response json_response(int status, std::string body);
Response error_response(const ApiError& e);
std::map<std::string, std::string, std::less<>> parse_query(std::string_view q);
std::string percent_decode(std::string_view s, bool plus_is_space);

// What the client accepts for object bodies.
struct AcceptChoice {
  bool ok = true;
  bool metadata_only = false;  // PartialObjectMetadata(List)
  bool table = false;
  std::string table_version;  // v1 or v1beta1
};
AcceptChoice parse_accept(std::string_view accept);

std::string base64_encode(std::string_view in, bool url);
Result<std::string> base64_decode(std::string_view in);

// Object helpers.
boost::json::object& metadata_of(boost::json::object& obj);
std::string str_field(const boost::json::object& o, std::string_view key);
std::string rfc3339(std::chrono::system_clock::time_point t);

// Name validation messages as apimachinery words them; "" when valid.
std::string validate_name(NameRule rule, std::string_view name);
std::string validate_qualified_name(std::string_view name);

// What Go's `omitempty` drops when the API server encodes an object: empty labels,
// annotations, finalizers and ownerReferences of every kind, and the empty data maps of
// ConfigMaps and Secrets.
void omit_empty_fields(const ResourceType& type, boost::json::object& obj);
// apps/v1 DaemonSets carry the annotation deprecated.daemonset.template.generation: 1 on
// create, one more each time an update changes spec.template (`old`: the stored object).
void stamp_daemonset_template_generation(boost::json::object& obj, const boost::json::object* old);
// Built-in kinds: defaults the API server applies and the validation it does.
void default_builtin(const ResourceType& type, boost::json::object& obj, bool create);
std::vector<StatusCause> validate_builtin(const ResourceType& type, const boost::json::object& obj,
                                          const boost::json::object* old);
// A Secret body that cannot be decoded (bad base64): the 400 the API server returns.
std::string secret_decode_error(const boost::json::object& obj);

}  // namespace detail
}  // namespace aop::sim
